//! Running cargo and reading what it reports as data: `--message-format json` (its
//! `compiler-message`, `compiler-artifact` and `build-finished` messages), never its text for
//! people. What it compiles is still shown: each diagnostic's `rendered` text goes to stderr,
//! as cargo would print it. The one exception is which tests failed: see [`failed_tests`].

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

use anyhow::{bail, Context as _};
use serde::Deserialize;

/// One line of `cargo --message-format json` (the fields used here).
#[derive(Debug, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
enum CargoMessage {
    CompilerMessage {
        target: MessageTarget,
        message: Diagnostic,
    },
    CompilerArtifact {
        target: MessageTarget,
        executable: Option<PathBuf>,
    },
    BuildFinished {
        success: bool,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageTarget {
    name: String,
    kind: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Diagnostic {
    level: String,
    rendered: Option<String>,
}

/// What cargo's messages said about a build.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Build {
    /// `build-finished`'s `success`; `None`: cargo never got that far.
    pub success: Option<bool>,
    /// The targets with errors (`NAME (KIND)`), in the order they came, each once.
    pub failed_targets: Vec<String>,
    /// The errors, each once (cargo reports an error of a library again for its test build).
    pub errors: Vec<String>,
    /// The executables built: target name and path.
    pub executables: Vec<(String, PathBuf)>,
    /// Diagnostics already printed (each is printed once).
    printed: Vec<String>,
}

impl Build {
    /// Takes in `line` if it is one of cargo's messages (printing a diagnostic to stderr);
    /// returns `false` for any other line (a test's output, on the same stdout).
    pub fn take(&mut self, line: &str) -> bool {
        // A test could print a JSON object; cargo's messages are the ones with a `reason`.
        let Some(message) = line.starts_with('{').then(|| serde_json::from_str::<CargoMessage>(line).ok()).flatten()
        else {
            return false;
        };
        match message {
            CargoMessage::CompilerMessage { target, message } => {
                let rendered = message.rendered.unwrap_or_default();
                if !self.printed.contains(&rendered) {
                    eprint!("{rendered}");
                    self.printed.push(rendered.clone());
                }
                if message.level == "error" {
                    let target = format!("{} ({})", target.name, target.kind.join(", "));
                    if !self.failed_targets.contains(&target) {
                        self.failed_targets.push(target);
                    }
                    if !self.errors.contains(&rendered) {
                        self.errors.push(rendered);
                    }
                }
            }
            CargoMessage::CompilerArtifact { target, executable: Some(path) } => {
                self.executables.push((target.name, path))
            }
            CargoMessage::CompilerArtifact { executable: None, .. } | CargoMessage::Other => {}
            CargoMessage::BuildFinished { success } => self.success = Some(success),
        }
        true
    }

    /// Fails when the build did, with the error count and the targets.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.success == Some(false) || !self.errors.is_empty() {
            let targets = match self.failed_targets.as_slice() {
                [] => "no target cargo named".to_owned(),
                targets => targets.join(", "),
            };
            bail!("{} error(s) in {targets} (printed above)", self.errors.len());
        }
        Ok(())
    }
}

/// Runs `cmd` (a cargo command with `--message-format json`): its messages go to a [`Build`],
/// its other stdout lines to `other`; stderr (cargo's progress) is inherited.
pub fn run(cmd: &mut Command, mut other: impl FnMut(&str)) -> anyhow::Result<(ExitStatus, Build)> {
    let mut child = cmd.stdout(Stdio::piped()).spawn().with_context(|| format!("cannot run {cmd:?}"))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut build = Build::default();
    let mut reader = BufReader::new(stdout);
    let mut bytes = Vec::new();
    // A test may print anything, valid UTF-8 or not: each line is read to the end.
    while reader.read_until(b'\n', &mut bytes).context("reading cargo's output")? > 0 {
        let line = String::from_utf8_lossy(&bytes);
        let line = line.trim_end_matches(['\n', '\r']);
        if !build.take(line) {
            other(line);
        }
        bytes.clear();
    }
    Ok((child.wait()?, build))
}

/// Builds `xtask-traffic` (release, as `cargo xtask record` does) and returns its path, from
/// the build's `compiler-artifact` message.
pub fn build_traffic_binary() -> anyhow::Result<PathBuf> {
    let mut cmd = crate::traffic::cargo("build");
    cmd.args(["--message-format", "json"]);
    let (status, build) = run(&mut cmd, |line| println!("{line}"))?;
    build.check().context("xtask-traffic does not compile: the generated code, or code that uses it, has errors")?;
    if !status.success() {
        bail!("building xtask-traffic failed ({status}; cargo's error is above)");
    }
    executable(&build, "xtask-traffic")
}

fn executable(build: &Build, name: &str) -> anyhow::Result<PathBuf> {
    build
        .executables
        .iter()
        .find(|(target, _)| target == name)
        .map(|(_, path)| path.clone())
        .with_context(|| format!("cargo built no executable named {name}"))
}

/// Runs a `cargo test` command (with `--message-format json`), echoing the tests' output:
/// the exit status, the build, and the tests that failed ([`failed_tests`]).
pub fn test(cmd: &mut Command) -> anyhow::Result<(ExitStatus, Build, Vec<String>)> {
    let mut output = Vec::new();
    let (status, build) = run(cmd, |line| {
        println!("{line}");
        output.push(line.to_owned());
    })?;
    Ok((status, build, failed_tests(&output)))
}

/// The tests libtest reported failed, from its `test NAME ... FAILED` lines.
///
/// Text, not data: libtest's JSON output (`-Z unstable-options --format json`) needs a
/// nightly toolchain, and this workspace builds with stable. This is the one place that reads
/// libtest's text. A `#[should_panic]` test that did not panic is written `NAME - should
/// panic`; the name is given without that.
pub fn failed_tests(output: &[String]) -> Vec<String> {
    output
        .iter()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .map(|name| name.strip_suffix(" - should panic").unwrap_or(name).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Feeds real `cargo --message-format json` stdout (`testdata/`: a one-file crate built
    /// with cargo 1.95) through [`Build::take`], as [`run`] does.
    fn read(text: &str) -> (Build, Vec<String>) {
        let mut build = Build::default();
        let other = text.lines().filter(|l| !build.take(l)).map(str::to_owned).collect();
        (build, other)
    }

    #[test]
    fn a_build_that_does_not_compile() {
        let (build, other) = read(include_str!("testdata/cargo-test-compile-error.txt"));
        assert!(other.is_empty(), "{other:?}");
        assert_eq!(build.success, Some(false));
        // The library's error again for its test build: once.
        assert_eq!(build.failed_targets, ["probe (lib)"]);
        assert_eq!(build.errors.len(), 1);
        assert!(
            build.errors[0].starts_with("error[E0308]: mismatched types\n --> src/lib.rs:1:21"),
            "{:?}",
            build.errors
        );
        let err = build.check().unwrap_err().to_string();
        assert_eq!(err, "1 error(s) in probe (lib) (printed above)");
    }

    #[test]
    fn a_build_with_warnings_and_its_executable() {
        let (build, other) = read(include_str!("testdata/cargo-build-bin.txt"));
        assert!(other.is_empty(), "{other:?}");
        assert_eq!(build.success, Some(true));
        assert!(build.errors.is_empty());
        assert!(build.printed[0].starts_with("warning: unused variable: `unused`"), "{:?}", build.printed);
        build.check().unwrap();
        assert_eq!(executable(&build, "probe").unwrap(), Path::new("/work/target-upgrade/release/probe"));
        assert!(executable(&build, "xtask-traffic").is_err());
    }

    #[test]
    fn tests_that_fail() {
        let (build, other) = read(include_str!("testdata/cargo-test-failed.txt"));
        assert_eq!(build.success, Some(true));
        build.check().unwrap();
        assert_eq!(build.executables.len(), 1, "the test binary");
        assert_eq!(other[1], "running 4 tests", "the tests' output is left to the caller");
        assert_eq!(failed_tests(&other), ["tests::should_panic_but_doesnt", "tests::fails"]);
    }
}
