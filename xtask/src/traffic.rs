//! The traffic commands (`record`, `drift`, `bench`) run in `xtask-traffic`, which is built
//! with the generated protocol crate: the command that builds or runs it, and what `record`
//! tells `cargo xtask upgrade`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The `cargo run` command that runs `xtask-traffic <command> <args>` (see
/// [`crate::forward`]). `bench` builds it with `--features client-bench`, `bench --peer` with
/// `peer` too, `bench --mimalloc` with `mimalloc`.
pub fn command(command: &str, args: &[OsString]) -> std::process::Command {
    let mut cmd = cargo("run");
    cmd.arg("--quiet");
    if command == "bench" {
        // Each bench flag that needs a feature of xtask-traffic.
        let mut features = vec!["client-bench"];
        for (flag, feature) in [("--peer", "peer"), ("--mimalloc", "mimalloc")] {
            if args.iter().any(|a| a == flag) {
                features.push(feature);
            }
        }
        cmd.args(["--features", &features.join(",")]);
    }
    cmd.arg("--").arg(command).args(args);
    cmd
}

/// `cargo <subcommand> --release --package xtask --bin xtask-traffic` in the workspace: `run`
/// for [`command`], `build` for `cargo xtask upgrade` (which runs the binary it built).
pub fn cargo(subcommand: &str) -> std::process::Command {
    let mut cmd = crate::cargo();
    cmd.current_dir(crate::root()).args([subcommand, "--release", "--package", "xtask", "--bin", "xtask-traffic"]);
    cmd
}

/// What `record --summary FILE` writes: each scenario's fixture or error, as JSON, for
/// `cargo xtask upgrade` (which reads it instead of `record`'s printed lines).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordSummary {
    /// The codex release recorded.
    pub codex_version: String,
    /// In the order they ran.
    pub scenarios: Vec<ScenarioResult>,
}

/// What one scenario of `record` gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ScenarioResult {
    /// The fixture was written to `path`; `detail`: counts and time, for the reader.
    Recorded { scenario: String, detail: String, path: PathBuf },
    /// No fixture; `error` is the whole error (`{:#}`).
    Failed { scenario: String, error: String },
}

impl ScenarioResult {
    /// The line `record` prints for it.
    pub fn render(&self) -> String {
        match self {
            ScenarioResult::Recorded { scenario, detail, path } => {
                format!("{scenario:<18} {detail}  -> {}", path.display())
            }
            ScenarioResult::Failed { scenario, error } => format!("{scenario:<18} FAILED: {error}"),
        }
    }
}

impl RecordSummary {
    /// The fixtures written.
    pub fn fixtures(&self) -> Vec<&Path> {
        self.scenarios
            .iter()
            .filter_map(|s| match s {
                ScenarioResult::Recorded { path, .. } => Some(path.as_path()),
                ScenarioResult::Failed { .. } => None,
            })
            .collect()
    }

    /// The scenarios that failed: name and error.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        self.scenarios
            .iter()
            .filter_map(|s| match s {
                ScenarioResult::Failed { scenario, error } => Some((scenario.as_str(), error.as_str())),
                ScenarioResult::Recorded { .. } => None,
            })
            .collect()
    }

    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(path, json + "\n").with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn read(path: &Path) -> anyhow::Result<RecordSummary> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not a record summary", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_summary_round_trip() {
        let summary = RecordSummary {
            codex_version: "0.171.0".into(),
            scenarios: vec![
                ScenarioResult::Recorded {
                    scenario: "lifecycle".into(),
                    detail: " 12 c2s   40 s2c    3.21s".into(),
                    path: "/w/traffic/fixtures/0.171.0/lifecycle.ndjson".into(),
                },
                ScenarioResult::Failed {
                    scenario: "dynamic_tool".into(),
                    error: "scenario dynamic_tool failed: request `thread/start`: x\nsecond line".into(),
                },
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("upgrade/record.json");
        summary.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""outcome": "failed""#), "{text}");
        assert_eq!(RecordSummary::read(&path).unwrap(), summary);
        assert_eq!(summary.fixtures(), [Path::new("/w/traffic/fixtures/0.171.0/lifecycle.ndjson")]);
        assert_eq!(
            summary.failures(),
            [("dynamic_tool", "scenario dynamic_tool failed: request `thread/start`: x\nsecond line")]
        );
        assert_eq!(
            summary.scenarios[0].render(),
            "lifecycle           12 c2s   40 s2c    3.21s  -> /w/traffic/fixtures/0.171.0/lifecycle.ndjson"
        );

        std::fs::write(&path, "lifecycle  -> a.ndjson").unwrap();
        let err = RecordSummary::read(&path).unwrap_err();
        assert!(format!("{err:#}").contains("is not a record summary"), "{err:#}");
    }
}
