//! Handing the traffic commands (`record`, `drift`, `bench`) from the light `xtask` binary to
//! `xtask-traffic`, which is built with the generated protocol crate.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context as _};

/// The arguments of a forwarded command, passed on untouched (`--help` included).
#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

/// Runs `cargo run --release -p xtask --bin xtask-traffic -- <command> <args>` in the
/// workspace and fails when it fails. `bench --peer` builds it with `--features peer`,
/// `bench --mimalloc` with `--features mimalloc`.
///
/// This compiles the protocol crate when it changed (after a regen); if the generated code
/// does not compile, the error says so and `cargo xtask regen` still works.
pub fn forward(command: &str, forwarded: Forwarded) -> anyhow::Result<()> {
    let status = self::command(command, &forwarded.args).status().context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "`cargo xtask {command}` failed ({status}). It runs xtask-traffic, which is built with the generated protocol \
             crate: if cargo printed compile errors above, the generated code does not compile (`cargo xtask regen` \
             still works; see README, \"Upgrading codex\")"
        );
    }
    Ok(())
}

/// The `cargo run` command that runs `xtask-traffic <command> <args>` (see [`forward`]).
pub fn command(command: &str, args: &[OsString]) -> std::process::Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(crate::root()).args([
        "run",
        "--release",
        "--quiet",
        "--package",
        "xtask",
        "--bin",
        "xtask-traffic",
    ]);
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

/// The line `record` prints for each scenario: the fixture it wrote, or why it failed. Written
/// by [`RecordLine::render`] and read back by [`RecordLine::parse`] (`cargo xtask upgrade`
/// reads `record`'s output through `cargo run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordLine {
    /// `detail`: counts and time, for the reader.
    Recorded { scenario: String, detail: String, path: PathBuf },
    /// The first line of the error (`{:#}`); more lines may follow it.
    Failed { scenario: String, error: String },
}

const RECORDED_ARROW: &str = "  -> ";
const FAILED: &str = " FAILED: ";

impl RecordLine {
    pub fn render(&self) -> String {
        match self {
            RecordLine::Recorded { scenario, detail, path } => {
                format!("{scenario:<18} {detail}{RECORDED_ARROW}{}", path.display())
            }
            RecordLine::Failed { scenario, error } => format!("{scenario:<18}{FAILED}{error}"),
        }
    }

    /// The scenario line `line` is, if it is one.
    pub fn parse(line: &str) -> Option<RecordLine> {
        let (scenario, rest) = line.split_once(' ')?;
        let valid = !scenario.is_empty() && scenario.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return None;
        }
        let rest = rest.trim_start_matches(' ');
        if let Some(error) = rest.strip_prefix(FAILED.trim_start()) {
            return Some(RecordLine::Failed { scenario: scenario.to_owned(), error: error.to_owned() });
        }
        let (detail, path) = rest.rsplit_once(RECORDED_ARROW)?;
        path.ends_with(".ndjson").then(|| RecordLine::Recorded {
            scenario: scenario.to_owned(),
            detail: detail.to_owned(),
            path: PathBuf::from(path),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_lines_read_back() {
        let recorded = RecordLine::Recorded {
            scenario: "lifecycle".into(),
            detail: "12 c2s   40 s2c    3.21s".into(),
            path: "/w/tests/fixtures/0.171.0/lifecycle.ndjson".into(),
        };
        let failed = RecordLine::Failed {
            scenario: "dynamic_tool".into(),
            error: "scenario dynamic_tool failed: request `thread/start`: x".into(),
        };
        for line in [recorded, failed] {
            assert_eq!(RecordLine::parse(&line.render()), Some(line.clone()), "{}", line.render());
        }
        for other in [
            "",
            "file  lines  typed  drift",
            "  1: c2s unknown-field `thread/start` at params.x",
            "total  12  12  0  0",
            "a.ndjson:3: s2c x -> y",
        ] {
            assert_eq!(RecordLine::parse(other), None, "{other}");
        }
    }
}
