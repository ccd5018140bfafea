//! `cargo xtask upgrade [VERSION]`: the whole codex upgrade in one command.
//!
//! The steps of README's "Upgrading codex", each printed as it runs with its wall time:
//!
//! 1. the version: VERSION, else the latest release on npm (`npm view @openai/codex version`);
//! 2. install it (`CODEX_VERSION=VERSION scripts/install-codex.sh`), unless `--codex PATH`;
//! 3. regen ([`crate::regen`]): when the schema needs decisions, print them and stop there (the
//!    regen writes nothing, so the rerun after adding them does the whole upgrade); with the
//!    changelog, the optional nullable members the release adds that no decision covers and no
//!    description settles
//!    ([`codex_app_codegen::decisions::new_undecided_nullables_of_sets`]), for a decision;
//! 4. when the changelog of the regen finds breaking changes: which functions of the workspace
//!    use each of them ([`uses`]: tests, examples and library code, by name);
//! 5. record: build `xtask-traffic` with cargo ([`cargo::build_traffic_binary`]: this binary
//!    never builds the protocol crate), then run its `record --summary FILE`, whose JSON
//!    ([`crate::traffic::RecordSummary`]) says which fixtures it wrote and which scenarios
//!    failed;
//! 6. the drift check (`xtask-traffic drift`) on the fixtures written;
//! 7. the tests an upgrade is expected to change: the traffic crate's (fixtures, snapshots) and
//!    the test targets holding a `written_for_codex!` ([`workspace`]: targets from `cargo
//!    metadata`), with `INSTA_UPDATE=unseen` (a snapshot the new release adds, such as the
//!    drift of the traffic of the release it leaves behind, is written; a changed one is left
//!    as `.snap.new` for review, never accepted), without `CODEX_APP_SKIP_PINNED_TESTS` and with
//!    the tests that need the codex binary (`--include-ignored`), which drive the codex upgraded
//!    to (`CODEX_BIN`).
//!
//! Tests are written for a release of the supported range (`written_for_codex!`), not pinned
//! to the newest one: a release that only adds keeps every one of them compiling and running,
//! and the upgrade ends with a tree to commit. A release that breaks something still types
//! what it removed (the range keeps it, with its last release), so the tests compile and run,
//! and the report names each breaking change with the functions that use it.
//!
//! What the subprocesses report is read as data: cargo's JSON messages ([`cargo`]), exit
//! statuses and the record summary; only the names of failed tests come from libtest's text
//! ([`cargo::failed_tests`]).
//!
//! A failed step does not stop the ones that can still run (after a failed record, drift runs
//! on what was written and the tests run). Then a report ([`report`]): what the release added,
//! what its traffic showed, the new optional nullable members to decide (listed; they hold
//! nothing up), and what needs a person: failed steps, decisions to add, breaking changes and
//! what uses them, scenarios that no longer fit, snapshots to review, failing tests.

pub mod cargo;
pub mod report;
mod steps;
pub mod uses;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

use anyhow::{bail, Context as _};

use crate::traffic::RecordSummary;
use crate::{codex, regen};
pub use report::Report;
pub use steps::{Outcome, Step};
use steps::{Steps, Stop};
use workspace::Workspace;

/// The npm package of the codex CLI.
pub const NPM_PACKAGE: &str = "@openai/codex";

#[derive(clap::Args)]
pub struct Args {
    /// The codex release to upgrade to (default: the latest on npm).
    #[arg(value_parser = codex_version)]
    version: Option<String>,
    /// Use this codex binary instead of installing VERSION (its `--version` must be VERSION,
    /// when given).
    #[arg(long)]
    codex: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let version = match &args.version {
        Some(v) => v.clone(),
        None => {
            println!("upgrade: asking npm for the latest {NPM_PACKAGE}");
            latest_on_npm()?
        }
    };
    println!("upgrade: to codex {version}");
    let workspace = Workspace::load(&root).context("cannot read the workspace's targets")?;
    let report = upgrade(&workspace, &version, args.codex.as_deref());
    print!("{}", report.render());
    if !report.is_done() {
        bail!("the upgrade to codex {version} needs a person (see the report above)");
    }
    Ok(())
}

/// The packages whose tests read the recorded sessions, run whole: the traffic crate
/// (`traffic/`) and the protocol crate without `experimental` (`protocol-stable/`, whose tests
/// check the sessions with the stable types). Their fixture and snapshot tests change with
/// every release.
pub const SESSION_PACKAGES: [&str; 2] = ["codex-app-traffic", STABLE_PACKAGE];

/// The protocol crate without `experimental`: its tests run at its own default features (every
/// other package's with all of theirs), or they would test the experimental build again.
pub const STABLE_PACKAGE: &str = "codex-app-protocol-stable";

/// The generated code, left out of the search for what uses a breaking change.
const GENERATED_DIR: &str = "protocol/src/generated";

/// Every step that can run, in order, each a function of what it needs that returns what it
/// found; the run's state is one value, the report [`Steps`] builds.
fn upgrade(workspace: &Workspace, version: &str, codex: Option<&Path>) -> Report {
    let root = workspace.root.as_path();
    // Static, so known before anything runs: which test targets to run.
    let written_for = workspace.scan_written_for();
    let test_runs = workspace.test_runs(&written_for);
    let mut steps =
        Steps { report: Report { version: version.to_owned(), ..Report::default() }, total: 5 + test_runs.len() };

    let codex = match codex {
        Some(path) => steps.run("check codex", || check_codex(path, version)),
        None => steps.run(&format!("install codex {version}"), || install_codex(root, version)),
    };
    let regenerated = match &codex {
        Some(codex) => regen_step(&mut steps, root, version, codex),
        None => {
            steps.skip("regen", "no codex to run");
            None
        }
    };
    uses_step(&mut steps, workspace, regenerated.as_ref());
    match (regenerated, codex) {
        (Some(_), Some(codex)) => {
            let (binary, written) = record_step(&mut steps, workspace, &codex);
            match binary.filter(|_| !written.is_empty()) {
                None => steps.skip("drift", "record wrote no fixture"),
                Some(binary) => {
                    steps.run("drift", || drift(root, &binary, &written));
                    steps.report.drift_free = steps.report.steps.last().is_some_and(|s| s.outcome == Outcome::Ok);
                }
            }
            let snapshots_before = workspace.snapshots();
            for run in &test_runs {
                let failed = steps.run_with(&format!("tests {}", run.package), || tests(root, run, &codex));
                steps.report.failed_tests.extend(failed.into_iter().map(|t| format!("{}: {t}", run.package)));
            }
            steps.report.new_snapshots =
                workspace.snapshots().into_iter().filter(|s| !snapshots_before.contains(s)).collect();
        }
        _ => {
            let why = "regen did not finish: the protocol crate is still generated from the previous release";
            steps.skip("record", why);
            steps.skip("drift", why);
            for run in &test_runs {
                steps.skip(&format!("tests {}", run.package), why);
            }
        }
    }
    steps.report.snapshots = workspace.pending_snapshots();
    steps.report
}

/// The codex given with `--codex`, when it is `version`.
fn check_codex(path: &Path, version: &str) -> anyhow::Result<PathBuf> {
    println!("{}", path.display());
    let found = codex::version(path)?;
    if found != version {
        bail!("{} is codex {found}, not {version}", path.display());
    }
    Ok(path.to_owned())
}

/// A regen that went through: the changelog it wrote, change by change (`None`: the schema
/// did not change).
struct Regenerated {
    changelog: Option<codex_app_changelog::Report>,
}

/// The regen step: the schema `codex` prints vendored and the crate generated from it. Its
/// changes, the decisions it stopped on, the compatible changes and the new optional nullable
/// members to decide go to the report.
fn regen_step(steps: &mut Steps, root: &Path, version: &str, codex: &Path) -> Option<Regenerated> {
    let outcome = steps.run_with("regen", || match regen_from(root, version, codex) {
        Ok(plan) => (Some(Ok(plan)), Ok(())),
        Err(e) => match e.downcast_ref::<codex_app_codegen::Error>().and_then(|e| e.missing_decisions.as_deref()) {
            Some(m) => {
                println!("\n{}", m.render());
                let why = Stop(format!("{} decision(s) to add; nothing was written", m.len()));
                (Some(Err(m.clone())), Err(why.into()))
            }
            None => (
                None,
                Err(e.context(
                    "regen stopped; nothing was written (a generator error: a schema construct it does not \
                     handle needs a change in codegen/)",
                )),
            ),
        },
    });
    match outcome? {
        Ok((plan, undecided_nullables)) => {
            steps.report.undecided_nullables = undecided_nullables;
            steps.report.changes = plan.changes;
            steps.report.added = plan
                .changelog
                .iter()
                .flat_map(|c| &c.changes)
                .filter(|c| c.severity == codex_app_changelog::Severity::Compatible)
                .map(|c| format!("{}: {}", c.path, c.sentence()))
                .collect();
            Some(Regenerated { changelog: plan.changelog })
        }
        Err(missing) => {
            steps.report.decisions = Some(missing);
            None
        }
    }
}

/// `cargo xtask regen` from `codex`, which must be `version`, and the optional nullable members
/// it adds to the vendored release that no decision covers
/// ([`codex_app_codegen::decisions::new_undecided_nullables_of_sets`]).
fn regen_from(
    root: &Path,
    version: &str,
    codex: &Path,
) -> anyhow::Result<(regen::Plan, Vec<codex_app_codegen::decisions::UndecidedNullable>)> {
    let started = Instant::now();
    let set = regen::from_codex(codex)?;
    if set.codex_version != version {
        bail!("{} says it is codex {}, not {version}", codex.display(), set.codex_version);
    }
    let settings = codex_app_codegen::Settings::codex()?;
    let previous = codex_app_codegen::vendor::read_vendored(&root.join(regen::VENDOR_DIR)).ok();
    let undecided = match &previous {
        Some(previous) if (&previous.stable, &previous.experimental) != (&set.stable, &set.experimental) => {
            codex_app_codegen::decisions::new_undecided_nullables_of_sets(previous, &set, &settings)?
        }
        _ => Vec::new(),
    };
    let plan = regen::regen(root, Some(set), &settings, regen::Archived::Keep)?;
    regen::print_summary(&plan.set, &plan.summary, started, false);
    Ok((plan, undecided))
}

/// The step that names the functions of the workspace that use a breaking change of the
/// changelog (skipped, and why, when there is none).
fn uses_step(steps: &mut Steps, workspace: &Workspace, regenerated: Option<&Regenerated>) {
    let (name, nothing) = report::NOTHING_BREAKING;
    match regenerated.map(|r| r.changelog.as_ref().filter(|c| c.counts.breaking > 0)) {
        Some(Some(changelog)) => {
            let broken = steps.run(name, || {
                let (ir, _) = regen::range_ir(&workspace.root)?;
                let files: Vec<PathBuf> =
                    workspace.source_files().into_iter().filter(|f| !f.starts_with(GENERATED_DIR)).collect();
                let broken = uses::broken(changelog, &ir, &workspace.root, &files);
                for b in &broken {
                    println!("{}: used by {} function(s)", b.change, b.uses.len());
                }
                Ok(broken)
            });
            steps.report.broken = broken.unwrap_or_default();
        }
        Some(None) => steps.skip(name, nothing),
        None => steps.skip(name, "regen did not finish"),
    }
}

/// The record step: `xtask-traffic record` with every scenario. Gives the binary it built and
/// the fixtures it wrote (a record that failed on some scenarios wrote the others); what each
/// scenario did goes to the report.
fn record_step(steps: &mut Steps, workspace: &Workspace, codex: &Path) -> (Option<PathBuf>, Vec<PathBuf>) {
    let summary_file = workspace.target_directory.join("upgrade/record-summary.json");
    let (binary, summary) = steps.run_with("record", || match record(&workspace.root, codex, &summary_file) {
        Ok((binary, status, summary)) => {
            let verdict = record_outcome(status, summary.as_ref());
            ((Some(binary), summary), verdict)
        }
        Err(e) => ((None, None), Err(e)),
    });
    let Some(summary) = summary else { return (binary, Vec::new()) };
    steps.report.recorded = summary
        .scenarios
        .iter()
        .filter_map(|r| match r {
            crate::traffic::ScenarioResult::Recorded { scenario, detail, .. } => {
                Some(format!("{scenario:<18} {}", detail.trim()))
            }
            _ => None,
        })
        .collect();
    steps.report.scenarios = summary
        .failures()
        .into_iter()
        .map(|(name, error)| (name.to_owned(), report::first_line(error).to_owned()))
        .collect();
    (binary, summary.fixtures().into_iter().map(Path::to_owned).collect())
}

/// Builds `xtask-traffic` and records every scenario with `codex`: the binary, its exit status
/// and the summary it wrote to `summary_file` (if it got that far).
fn record(
    root: &Path,
    codex: &Path,
    summary_file: &Path,
) -> anyhow::Result<(PathBuf, ExitStatus, Option<RecordSummary>)> {
    println!("building xtask-traffic first (release; minutes when the protocol crate changed), then every scenario");
    let binary = cargo::build_traffic_binary()?;
    // Whatever an earlier run left is not this run's.
    let _ = std::fs::remove_file(summary_file);
    let status = Command::new(&binary)
        .current_dir(root)
        .arg("record")
        .arg("--codex")
        .arg(codex)
        .arg("--summary")
        .arg(summary_file)
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let summary = summary_file.exists().then(|| RecordSummary::read(summary_file)).transpose()?;
    Ok((binary, status, summary))
}

/// `xtask-traffic drift` on the fixtures the record step wrote.
fn drift(root: &Path, binary: &Path, written: &[PathBuf]) -> anyhow::Result<()> {
    let status = Command::new(binary)
        .current_dir(root)
        .arg("drift")
        .args(written)
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !status.success() {
        bail!(
            "drift in the recorded traffic, or a fixture it could not read (`xtask-traffic drift` exited with \
             {status}; its table and error are above)"
        );
    }
    Ok(())
}

/// One test run of the tests an upgrade changes, with the release upgraded to: the tests that
/// failed, and the verdict.
fn tests(root: &Path, run: &workspace::TestRun, codex: &Path) -> (Vec<String>, anyhow::Result<()>) {
    let args = run.cargo_args();
    println!("cargo {}", args.join(" "));
    let mut cmd = crate::cargo();
    // The tests that drive a real codex drive the release upgraded to (`CODEX_BIN`: else they
    // would install the release the crate is now generated from).
    cmd.current_dir(root)
        .args(&args)
        .env("INSTA_UPDATE", "unseen")
        .env("CODEX_BIN", codex)
        .env_remove(SKIP_PINNED_TESTS_ENV);
    let (status, build, failed) = match cargo::test(&mut cmd) {
        Ok(ran) => ran,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let verdict = match (build.check().context("the tests do not compile"), status.success(), failed.len()) {
        (Err(e), _, _) => Err(e),
        (Ok(()), true, _) => Ok(()),
        (Ok(()), false, 0) => {
            Err(anyhow::anyhow!("`cargo test` failed ({status}) and named no failing test (see above)"))
        }
        (Ok(()), false, n) => Err(anyhow::anyhow!("{n} test(s) failed")),
    };
    (failed, verdict)
}

/// The variable that makes the pinned tests pass; unset for the tests step. (The
/// protocol crate's, which this build of xtask does not compile; a test holds them equal.)
const SKIP_PINNED_TESTS_ENV: &str = "CODEX_APP_SKIP_PINNED_TESTS";

/// The record step's outcome, from `xtask-traffic record`'s exit status and the summary it
/// wrote (if it got that far).
fn record_outcome(status: ExitStatus, summary: Option<&RecordSummary>) -> anyhow::Result<()> {
    let failed: Vec<&str> =
        summary.map(|s| s.failures().into_iter().map(|(name, _)| name).collect()).unwrap_or_default();
    match (status.success(), summary) {
        (true, Some(_)) => Ok(()),
        (true, None) => bail!("`xtask-traffic record` succeeded but wrote no summary"),
        (false, Some(_)) if !failed.is_empty() => bail!("{} scenario(s) failed: {}", failed.len(), failed.join(", ")),
        (false, Some(_)) => {
            bail!("`xtask-traffic record` failed ({status}) after recording every scenario (its error is above)")
        }
        (false, None) => {
            bail!("`xtask-traffic record` failed ({status}) before writing its summary (its error is above)")
        }
    }
}

/// A codex release as npm names it (`0.171.0`, `0.172.0-alpha.1`): a release number as the
/// protocol crate reads one, without the leading `v` that reading allows.
fn codex_version(v: &str) -> Result<String, String> {
    if codex_app_codegen::history::is_version(v) && !v.starts_with('v') {
        Ok(v.to_owned())
    } else {
        Err(format!("`{v}` is not a codex version (like 0.171.0)"))
    }
}

/// The release npm printed (`npm view ... version`), as npm and the install script take it.
fn npm_version(stdout: &str) -> anyhow::Result<String> {
    let v = stdout.trim();
    codex_version(v).map_err(anyhow::Error::msg)
}

fn latest_on_npm() -> anyhow::Result<String> {
    let out = Command::new("npm").args(["view", NPM_PACKAGE, "version"]).output().context(
        "cannot run npm (needed to find the latest codex; or pass the version: `cargo xtask upgrade 0.171.0`)",
    )?;
    if !out.status.success() {
        bail!("`npm view {NPM_PACKAGE} version` failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    npm_version(&String::from_utf8_lossy(&out.stdout)).context("npm answered something else than a version")
}

/// `CODEX_VERSION=<version> scripts/install-codex.sh`; its last line of output is the binary.
fn install_codex(root: &Path, version: &str) -> anyhow::Result<PathBuf> {
    let script = root.join("scripts/install-codex.sh");
    let out = Command::new(&script)
        .env("CODEX_VERSION", version)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bin = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    if !bin.is_file() {
        bail!("{} did not print the path of the codex it installed (got {:?})", script.display(), stdout.trim());
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "traffic")]
    #[test]
    fn the_variable_unset_for_the_tests_step_is_the_protocol_crates() {
        assert_eq!(SKIP_PINNED_TESTS_ENV, codex_app_protocol::__test_support::SKIP_PINNED_TESTS_ENV);
    }

    #[test]
    fn versions() {
        for good in ["0.171.0", " 0.171.0\n", "1.2.3-alpha.4", "10.0.12+build.1"] {
            assert_eq!(npm_version(good).unwrap(), good.trim());
        }
        for bad in ["", "latest", "0.171", "0.171.0.1", "v0.171.0", "0.171.0-", "0.171.0; rm -rf", "0..1"] {
            let err = npm_version(bad).expect_err(bad).to_string();
            assert!(err.contains("is not a codex version"), "{err}");
        }
        // The command line takes the same releases.
        let args = |v: &str| {
            <Args as clap::Args>::augment_args(clap::Command::new("upgrade")).try_get_matches_from(["upgrade", v])
        };
        assert!(args("0.172.0-alpha.1").is_ok());
        assert!(args("0.171").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn the_record_step_from_exit_status_and_summary() {
        use crate::traffic::ScenarioResult;
        use std::os::unix::process::ExitStatusExt as _;
        let (ok, failed) = (ExitStatus::from_raw(0), ExitStatus::from_raw(1 << 8));
        let recorded = |name: &str| ScenarioResult::Recorded {
            scenario: name.into(),
            detail: String::new(),
            path: format!("/w/{name}.ndjson").into(),
        };
        let all = RecordSummary { codex_version: "0.171.0".into(), scenarios: vec![recorded("lifecycle")] };
        let mut some = all.clone();
        for name in ["dynamic_tool", "interrupt"] {
            some.scenarios.push(ScenarioResult::Failed { scenario: name.into(), error: "x\ny".into() });
        }
        let err = |status, summary| record_outcome(status, summary).unwrap_err().to_string();

        assert!(record_outcome(ok, Some(&all)).is_ok());
        assert_eq!(err(failed, Some(&some)), "2 scenario(s) failed: dynamic_tool, interrupt");
        assert!(err(failed, Some(&all)).contains("after recording every scenario"));
        assert!(err(failed, None).contains("before writing its summary"));
        assert!(err(ok, None).contains("wrote no summary"));
    }
}
