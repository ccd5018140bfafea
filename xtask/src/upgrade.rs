//! `cargo xtask upgrade [VERSION]`: the whole codex upgrade in one command.
//!
//! The steps of README's "Upgrading codex", each printed as it runs with its wall time:
//!
//! 1. the version: VERSION, else the latest release on npm (`npm view @openai/codex version`);
//! 2. install it (`CODEX_VERSION=VERSION scripts/install-codex.sh`), unless `--codex PATH`;
//! 3. regen ([`crate::regen`]): when the schema needs decisions, print them and stop there (the
//!    regen writes nothing, so the rerun after adding them does the whole upgrade);
//! 4. record (`xtask-traffic record`, through `cargo run` as [`crate::traffic`] does: this
//!    binary never builds the protocol crate);
//! 5. the drift check on what was recorded;
//! 6. the tests an upgrade is expected to change: the traffic crate's (fixtures, snapshots) and
//!    those inside `pinned_to_codex!`, with `INSTA_UPDATE=new` (pending snapshots are written as
//!    `.snap.new`, never accepted), without `CODEX_APP_SKIP_PINNED_TESTS` and with the tests
//!    that need the codex binary (`--include-ignored`).
//!
//! A failed step does not stop the ones that can still run (after a failed record, drift runs
//! on what was written and the tests run). Then a report of what needs a person: failed steps,
//! decisions to add, scenarios that no longer fit, pinned tests to move, snapshots to review,
//! failing tests.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use codex_app_codegen::decisions::Missing;

use crate::traffic::RecordLine;
use crate::{codex, regen, traffic};

/// The npm package of the codex CLI.
pub const NPM_PACKAGE: &str = "@openai/codex";

#[derive(clap::Args)]
pub struct Args {
    /// The codex release to upgrade to (default: the latest on npm).
    version: Option<String>,
    /// Use this codex binary instead of installing VERSION (its `--version` must be VERSION,
    /// when given).
    #[arg(long)]
    codex: Option<PathBuf>,
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Failed(String),
    /// Stopped on purpose, for a person (regen: decisions to add).
    Stopped(String),
    /// Not run, and why.
    Skipped(String),
}

/// The error of a step that stops on purpose ([`Outcome::Stopped`]).
#[derive(Debug)]
struct Stop(String);

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub outcome: Outcome,
    pub took: Duration,
}

/// A `pinned_to_codex!` invocation: where, and the release it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// Relative to the workspace root.
    pub file: PathBuf,
    pub line: usize,
    pub version: String,
}

/// What a run found: the steps, and what needs a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub version: String,
    pub steps: Vec<Step>,
    /// The decisions the schema needs (regen stopped on them).
    pub decisions: Option<Missing>,
    /// `vendor-schemas/CHANGES.md` was written: the release it compares with and its summary.
    pub changes: Option<(String, String)>,
    /// Pinned tests that name another release than [`Report::version`].
    pub pinned: Vec<Pinned>,
    /// Pending snapshots (`.snap.new`, `.pending-snap`), relative to the workspace root.
    pub snapshots: Vec<PathBuf>,
    /// Scenarios `record` could not record: name and the first line of the error.
    pub scenarios: Vec<(String, String)>,
    /// Tests that failed (`cargo test` names).
    pub failed_tests: Vec<String>,
}

impl Report {
    /// Whether every step ran and succeeded, and nothing needs a person.
    pub fn is_done(&self) -> bool {
        self.steps.iter().all(|s| s.outcome == Outcome::Ok)
            && self.decisions.is_none()
            && self.pinned.is_empty()
            && self.snapshots.is_empty()
            && self.scenarios.is_empty()
    }

    pub fn render(&self) -> String {
        let v = &self.version;
        let mut out = format!("\n==== upgrade to codex {v}\n");
        for step in &self.steps {
            let outcome = match &step.outcome {
                Outcome::Ok => "ok".to_owned(),
                Outcome::Failed(why) => format!("FAILED: {}", first_line(why)),
                Outcome::Stopped(why) => format!("stopped: {why}"),
                Outcome::Skipped(why) => format!("skipped: {why}"),
            };
            out.push_str(&format!("  {:<28} {:>8}  {outcome}\n", step.name, seconds(step.took)));
        }
        if let Some((previous, summary)) = &self.changes {
            out.push_str(&format!("\nchangelog since codex {previous} in vendor-schemas/CHANGES.md: {summary}\n"));
        }
        if self.is_done() {
            out.push_str(&format!(
                "\nnothing needs a person: review the diff (git status) and commit the upgrade to codex {v}\n"
            ));
            return out;
        }
        out.push_str("\nneeds a person:\n");
        for step in &self.steps {
            if let Outcome::Failed(why) = &step.outcome {
                out.push_str(&format!("- step `{}` failed: {}\n", step.name, indent_rest(why)));
            }
        }
        if let Some(missing) = &self.decisions {
            out.push_str(&format!(
                "- decisions to add: {} (listed above, with the lines to paste into {}); add them, then run \
                 `cargo xtask upgrade {v}` again\n",
                missing.len(),
                codex_app_codegen::decisions::DECISIONS_FILE
            ));
        }
        if !self.scenarios.is_empty() {
            out.push_str(&format!(
                "- scenarios that no longer fit codex {v} ({}): change their JSON in xtask/src/record/scenarios.rs to what \
                 vendor-schemas/CHANGES.md says, then `cargo xtask record <scenario>`\n",
                self.scenarios.len()
            ));
            for (name, error) in &self.scenarios {
                out.push_str(&format!("    {name}: {error}\n"));
            }
        }
        if !self.pinned.is_empty() {
            let regenerated = self.steps.iter().any(|s| s.name == "regen" && s.outcome == Outcome::Ok);
            out.push_str(&format!(
                "- pinned tests to move ({}){}: check them against the types of codex {v} and change the version in their \
                 `pinned_to_codex!`\n",
                self.pinned.len(),
                if regenerated { "" } else { ", once regen goes through" },
            ));
            for p in &self.pinned {
                out.push_str(&format!("    {}:{}: pinned to codex {}\n", p.file.display(), p.line, p.version));
            }
        }
        if !self.snapshots.is_empty() {
            out.push_str(&format!("- snapshots to review: {} pending (`cargo insta review`)\n", self.snapshots.len()));
            for s in &self.snapshots {
                out.push_str(&format!("    {}\n", s.display()));
            }
        }
        if !self.failed_tests.is_empty() {
            const SHOWN: usize = 20;
            out.push_str(&format!("- failing tests ({}):\n", self.failed_tests.len()));
            for t in self.failed_tests.iter().take(SHOWN) {
                out.push_str(&format!("    {t}\n"));
            }
            if self.failed_tests.len() > SHOWN {
                out.push_str(&format!(
                    "    ... and {} more (see the test output above)\n",
                    self.failed_tests.len() - SHOWN
                ));
            }
        }
        out
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn indent_rest(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// Runs the steps in order, printing each as it starts and ends.
struct Steps {
    report: Report,
    total: usize,
}

impl Steps {
    /// Runs `f` as the step `name`: `Err` is a failed step, whose message goes to the report.
    fn run<T>(&mut self, name: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Option<T> {
        let n = self.report.steps.len() + 1;
        println!("\n==> [{n}/{}] {name}", self.total);
        let _ = std::io::stdout().flush();
        let started = Instant::now();
        let result = f();
        let took = started.elapsed();
        let (outcome, value) = match result {
            Ok(v) => (Outcome::Ok, Some(v)),
            Err(e) => match e.downcast_ref::<Stop>() {
                Some(Stop(why)) => (Outcome::Stopped(why.clone()), None),
                None => (Outcome::Failed(format!("{e:#}")), None),
            },
        };
        let said = match &outcome {
            Outcome::Ok => "ok",
            Outcome::Stopped(_) => "stopped",
            _ => "FAILED",
        };
        let why = match &outcome {
            Outcome::Failed(why) | Outcome::Stopped(why) => format!(": {}", first_line(why)),
            _ => String::new(),
        };
        println!("<== [{n}/{}] {name}: {said} ({}){why}", self.total, seconds(took));
        self.report.steps.push(Step { name: name.to_owned(), outcome, took });
        value
    }

    fn skip(&mut self, name: &str, why: &str) {
        let n = self.report.steps.len() + 1;
        println!("\n==> [{n}/{}] {name}: skipped ({why})", self.total);
        self.report.steps.push(Step {
            name: name.to_owned(),
            outcome: Outcome::Skipped(why.to_owned()),
            took: Duration::ZERO,
        });
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let version = match &args.version {
        Some(v) => check_version(v)?,
        None => {
            println!("upgrade: asking npm for the latest {NPM_PACKAGE}");
            latest_on_npm()?
        }
    };
    println!("upgrade: to codex {version}");
    let report = upgrade(&root, &version, args.codex.as_deref());
    print!("{}", report.render());
    if !report.is_done() {
        bail!("the upgrade to codex {version} needs a person (see the report above)");
    }
    Ok(())
}

/// The traffic crate (`traffic/`): its fixture and snapshot tests change with every release.
pub const TRAFFIC_PACKAGE: &str = "codex-app-traffic";

/// Every step that can run; what each found goes to the report.
fn upgrade(root: &Path, version: &str, codex: Option<&Path>) -> Report {
    // Static, so known before anything runs: which test targets to run.
    let pinned = scan_pinned(root);
    let mut test_runs = test_runs(root, &pinned);
    test_runs.sort();
    let mut steps =
        Steps { report: Report { version: version.to_owned(), ..Report::default() }, total: 4 + test_runs.len() };

    let codex = match codex {
        Some(path) => steps.run("check codex", || {
            println!("{}", path.display());
            let found = codex::version(path)?;
            if found != version {
                bail!("{} is codex {found}, not {version}", path.display());
            }
            Ok(path.to_owned())
        }),
        None => steps.run(&format!("install codex {version}"), || install_codex(root, version)),
    };

    let mut missing = None;
    let regenerated = match &codex {
        None => {
            steps.skip("regen", "no codex to run");
            false
        }
        Some(codex) => {
            let changes = steps.run("regen", || {
                let started = Instant::now();
                let set = regen::from_codex(codex)?;
                if set.codex_version != version {
                    bail!("{} says it is codex {}, not {version}", codex.display(), set.codex_version);
                }
                match regen::regen(root, Some(set), &codex_app_codegen::Settings::codex()?) {
                    Ok(plan) => {
                        regen::print_summary(&plan.set, &plan.summary, started);
                        Ok(plan.changes)
                    }
                    Err(e) => match e
                        .downcast_ref::<codex_app_codegen::Error>()
                        .and_then(|e| e.missing_decisions.as_deref())
                    {
                        Some(m) => {
                            println!("\n{}", m.render());
                            missing = Some(m.clone());
                            Err(Stop(format!("{} decision(s) to add; nothing was written", m.len())).into())
                        }
                        None => Err(e.context(
                            "regen stopped; nothing was written (a generator error: a schema construct it does not \
                             handle needs a change in codegen/)",
                        )),
                    },
                }
            });
            match changes {
                Some(changes) => {
                    steps.report.changes = changes;
                    true
                }
                None => false,
            }
        }
    };
    steps.report.decisions = missing;

    if let (true, Some(codex)) = (regenerated, codex.as_deref()) {
        let mut written = Vec::new();
        let mut scenarios = Vec::new();
        steps.run("record", || {
            println!(
                "building xtask-traffic first when the protocol crate changed (release build, minutes; cargo is quiet \
                 while it builds), then every scenario"
            );
            let args = [OsString::from("--codex"), codex.as_os_str().to_owned()];
            let (status, out, err) = run_echoed(traffic::command("record", &args))?;
            for line in &out {
                match RecordLine::parse(line) {
                    Some(RecordLine::Recorded { path, .. }) => written.push(path),
                    Some(RecordLine::Failed { scenario, error }) => scenarios.push((scenario, error)),
                    None => {}
                }
            }
            check_traffic_status("record", status, &err)
        });
        steps.report.scenarios = scenarios;

        if written.is_empty() {
            steps.skip("drift", "record wrote no fixture");
        } else {
            steps.run("drift", || {
                let files: Vec<OsString> = written.iter().map(|p| p.as_os_str().to_owned()).collect();
                let (status, _, err) = run_echoed(traffic::command("drift", &files))?;
                check_traffic_status("drift", status, &err)
            });
        }

        for run in &test_runs {
            let mut failed = Vec::new();
            steps.run(&format!("tests {}", run.package), || {
                let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                cmd.current_dir(root)
                    .args(run.cargo_args())
                    .env("INSTA_UPDATE", "new")
                    .env_remove(SKIP_PINNED_TESTS_ENV);
                println!("cargo {}", run.cargo_args().join(" "));
                let (status, out, err) = run_echoed(cmd)?;
                failed = failed_tests(&out);
                if status.success() {
                    return Ok(());
                }
                if err.iter().any(|l| l.starts_with("error: could not compile")) {
                    bail!("the tests do not compile (see the errors above)");
                }
                bail!("{} test(s) failed", failed.len());
            });
            steps.report.failed_tests.extend(failed.into_iter().map(|t| format!("{}: {t}", run.package)));
        }
    } else {
        let why = "regen did not finish: the protocol crate is still generated from the previous release";
        steps.skip("record", why);
        steps.skip("drift", why);
        for run in &test_runs {
            steps.skip(&format!("tests {}", run.package), why);
        }
    }

    steps.report.pinned = pinned.into_iter().filter(|p| p.version != version).collect();
    steps.report.snapshots = pending_snapshots(root);
    steps.report
}

/// The variable that makes the pinned tests pass with a note; unset for the tests step. (The
/// protocol crate's, which this build of xtask does not compile; a test holds them equal.)
const SKIP_PINNED_TESTS_ENV: &str = "CODEX_APP_SKIP_PINNED_TESTS";

/// A failed `xtask-traffic` run: the error it printed, or that it did not compile.
fn check_traffic_status(command: &str, status: std::process::ExitStatus, stderr: &[String]) -> anyhow::Result<()> {
    if status.success() {
        return Ok(());
    }
    if stderr.iter().any(|l| l.starts_with("error: could not compile")) {
        bail!("xtask-traffic does not compile: the generated code, or code that uses it, has errors (see above)");
    }
    match stderr.iter().find_map(|l| l.strip_prefix("Error: ")) {
        Some(error) => bail!("{error}"),
        None => bail!("`xtask-traffic {command}` failed ({status})"),
    }
}

/// The tests `cargo test` reported failed (`test NAME ... FAILED`).
fn failed_tests(stdout: &[String]) -> Vec<String> {
    stdout.iter().filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED")).map(str::to_owned).collect()
}

/// One `cargo test` run: a package, all its targets or some.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct TestRun {
    package: String,
    /// `--lib`, `--test NAME`; empty: every target.
    targets: Vec<String>,
}

impl TestRun {
    fn cargo_args(&self) -> Vec<String> {
        let mut args: Vec<String> =
            ["test", "--package", &self.package, "--all-features", "--no-fail-fast"].map(str::to_owned).into();
        for t in &self.targets {
            args.extend(t.split(' ').map(str::to_owned));
        }
        // The tests that need the codex binary are `#[ignore]`d; upgrade has one installed.
        args.extend(["--", "--include-ignored"].map(str::to_owned));
        args
    }
}

/// The traffic crate, whole, and the targets that hold pinned tests.
fn test_runs(root: &Path, pinned: &[Pinned]) -> Vec<TestRun> {
    let mut runs = vec![TestRun { package: TRAFFIC_PACKAGE.to_owned(), targets: Vec::new() }];
    for p in pinned {
        let Some((package, target)) = test_target(root, &p.file) else { continue };
        match runs.iter_mut().find(|r| r.package == package) {
            // Every target already, or this one already.
            Some(run) if run.targets.is_empty() || target.as_ref().is_some_and(|t| run.targets.contains(t)) => {}
            Some(run) => match target {
                Some(t) => run.targets.push(t),
                None => run.targets.clear(),
            },
            None => runs.push(TestRun { package, targets: target.into_iter().collect() }),
        }
    }
    for run in &mut runs {
        run.targets.sort();
    }
    runs
}

/// The package of `file` (relative to `root`) and the cargo target argument that builds it
/// (`--lib` under `src/`; under `tests/`, `--test NAME` of the `[[test]]` the manifest declares
/// for that file or for the folder holding it (a test binary whose modules are the files beside
/// its root, as this workspace's `tests/it.rs`), else cargo's own targets: `tests/NAME.rs` or
/// `tests/NAME/`; `None`: other).
fn test_target(root: &Path, file: &Path) -> Option<(String, Option<String>)> {
    let mut dir = root.join(file);
    while dir.pop() && dir.starts_with(root) {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let package = package_name(&manifest)?;
        let inside = root.join(file);
        let relative = inside.strip_prefix(&dir).ok()?;
        let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let declared = declared_tests(&manifest);
        // The declared test of this file, else the one whose root is in the nearest folder above it.
        let declared_target = declared.iter().find(|(_, path)| path == relative).or_else(|| {
            declared
                .iter()
                .filter(|(_, path)| path.parent().is_some_and(|folder| relative.starts_with(folder)))
                .max_by_key(|(_, path)| path.components().count())
        });
        let target = match (parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice(), declared_target) {
            (["tests", ..], Some((name, _))) => Some(format!("--test {name}")),
            (["tests", name], None) => name.strip_suffix(".rs").map(|n| format!("--test {n}")),
            (["tests", name, ..], None) => Some(format!("--test {name}")),
            (["src", ..], _) => Some("--lib".to_owned()),
            _ => None,
        };
        return Some((package, target));
    }
    None
}

/// `(name, path)` of each `[[test]]` table of a Cargo.toml that names both.
fn declared_tests(manifest: &str) -> Vec<(String, PathBuf)> {
    let mut tests = Vec::new();
    let mut current: Option<(Option<String>, Option<String>)> = None;
    let mut finish = |current: &mut Option<(Option<String>, Option<String>)>| {
        if let Some((Some(name), Some(path))) = current.take() {
            tests.push((name, PathBuf::from(path)));
        }
    };
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            finish(&mut current);
            if line == "[[test]]" {
                current = Some((None, None));
            }
        } else if let Some((name, path)) = current.as_mut() {
            let Some((key, value)) = line.split_once('=') else { continue };
            let value = value.trim().trim_matches('"').to_owned();
            match key.trim() {
                "name" => *name = Some(value),
                "path" => *path = Some(value),
                _ => {}
            }
        }
    }
    finish(&mut current);
    tests
}

/// `name` of the `[package]` table of a Cargo.toml.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|l| l.strip_prefix('=')) {
                return Some(value.trim().trim_matches('"').to_owned());
            }
        }
    }
    None
}

/// The folders the scans skip: build output, installs, VCS.
fn skipped_dir(name: &str) -> bool {
    name == "target" || name == "node_modules" || name.starts_with('.')
}

/// Every file under `root` whose name passes `wanted`, relative to `root`, sorted.
fn files_under(root: &Path, wanted: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    fn walk(dir: &Path, root: &Path, wanted: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && !skipped_dir(&name) => walk(&path, root, wanted, out),
                Ok(t) if t.is_file() && wanted(&name) => out.push(path.strip_prefix(root).unwrap_or(&path).to_owned()),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, wanted, &mut out);
    out.sort();
    out
}

/// Snapshots insta left for review: `*.snap.new`, `*.pending-snap`.
fn pending_snapshots(root: &Path) -> Vec<PathBuf> {
    files_under(root, &|name| name.ends_with(".snap.new") || name.ends_with(".pending-snap"))
}

/// Every `pinned_to_codex!` invocation in the workspace's Rust files (not in comments).
fn scan_pinned(root: &Path) -> Vec<Pinned> {
    let mut found = Vec::new();
    for file in files_under(root, &|name| name.ends_with(".rs")) {
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else { continue };
        for (line, version) in pinned_in(&text) {
            found.push(Pinned { file: file.clone(), line, version });
        }
    }
    found
}

/// `(line, version)` of each `pinned_to_codex! { "VERSION", ...` in `text` outside comments.
fn pinned_in(text: &str) -> Vec<(usize, String)> {
    const MACRO: &str = "pinned_to_codex!";
    let mut found = Vec::new();
    for (at, _) in text.match_indices(MACRO) {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        if text[line_start..at].trim_start().starts_with("//") {
            continue;
        }
        let rest = text[at + MACRO.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('{').map(str::trim_start).and_then(|r| r.strip_prefix('"')) else {
            continue;
        };
        let Some(end) = rest.find('"') else { continue };
        found.push((text[..at].matches('\n').count() + 1, rest[..end].to_owned()));
    }
    found
}

/// The version as npm and the install script take it: `1.2.3`, `1.2.3-alpha.4`.
fn check_version(v: &str) -> anyhow::Result<String> {
    let v = v.trim();
    let (core, pre) = match v.split_once(['-', '+']) {
        Some((core, pre)) => (core, Some(pre)),
        None => (v, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let core_ok = parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let pre_ok = pre
        .is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+')));
    if !core_ok || !pre_ok {
        bail!("`{v}` is not a codex version (like 0.171.0 or 0.172.0-alpha.1)");
    }
    Ok(v.to_owned())
}

fn latest_on_npm() -> anyhow::Result<String> {
    let out = Command::new("npm").args(["view", NPM_PACKAGE, "version"]).output().context(
        "cannot run npm (needed to find the latest codex; or pass the version: `cargo xtask upgrade 0.171.0`)",
    )?;
    if !out.status.success() {
        bail!("`npm view {NPM_PACKAGE} version` failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    check_version(&String::from_utf8_lossy(&out.stdout)).context("npm answered something else than a version")
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

/// Runs `cmd`, echoing its output as it comes, and returns its exit status and its lines
/// (stdout, stderr).
fn run_echoed(mut cmd: Command) -> anyhow::Result<(std::process::ExitStatus, Vec<String>, Vec<String>)> {
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().with_context(|| format!("cannot run {cmd:?}"))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let stderr = child.stderr.take().context("no stderr")?;
    let err_thread = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            lines.push(line);
        }
        lines
    });
    let mut out_lines = Vec::new();
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        println!("{line}");
        out_lines.push(line);
    }
    let err_lines = err_thread.join().map_err(|_| anyhow::anyhow!("the stderr reader panicked"))?;
    let status = child.wait()?;
    Ok((status, out_lines, err_lines))
}

#[cfg(test)]
mod tests {
    use codex_app_codegen::decisions::{NullProposal, ResponseProposal};

    use super::*;

    #[cfg(feature = "traffic")]
    #[test]
    fn the_variable_unset_for_the_tests_step_is_the_protocol_crates() {
        assert_eq!(SKIP_PINNED_TESTS_ENV, codex_app_protocol::__test_support::SKIP_PINNED_TESTS_ENV);
    }

    #[test]
    fn versions() {
        for good in ["0.171.0", " 0.171.0\n", "1.2.3-alpha.4", "10.0.12+build.1"] {
            assert_eq!(check_version(good).unwrap(), good.trim());
        }
        for bad in ["", "latest", "0.171", "0.171.0.1", "v0.171.0", "0.171.0-", "0.171.0; rm -rf", "0..1"] {
            let err = check_version(bad).expect_err(bad).to_string();
            assert!(err.contains("is not a codex version"), "{err}");
        }
    }

    /// The macro's name is spelled in pieces here, so that this file holds no invocation.
    fn invocation(version: &str) -> String {
        format!("codex_app_protocol::__test_support::{}! {{ \"{version}\",", "pinned_to_codex")
    }

    #[test]
    fn pinned_invocations_outside_comments() {
        let text = [
            "//! Docs that mention `pinned_to_codex!`.".to_owned(),
            invocation("0.169.0"),
            "fn a() {}".to_owned(),
            "}".to_owned(),
            format!("    /// {}", invocation("0.0.0-not-this-one")),
            format!("    {}", invocation("0.170.0").replace("{ ", "{\n        ")),
            "    let s = \"pinned_to_codex!\";".to_owned(),
        ]
        .join("\n");
        assert_eq!(pinned_in(&text), [(2, "0.169.0".to_owned()), (6, "0.170.0".to_owned())]);
    }

    #[test]
    fn pinned_tests_map_to_cargo_test_targets() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("Cargo.toml", "[workspace]\nmembers = [\"proto\", \"traffic\"]\n");
        write(
            "proto/Cargo.toml",
            "[package]\nname = \"proto\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"not this\"\n",
        );
        write("proto/tests/wire.rs", &invocation("0.169.0"));
        write("proto/tests/conformance/main.rs", &invocation("0.169.0"));
        write("proto/src/lib.rs", &invocation("0.171.0"));
        write("traffic/Cargo.toml", &format!("[package]\nname = {TRAFFIC_PACKAGE:?}\n"));
        write("traffic/src/drift.rs", &invocation("0.169.0"));
        write("target/debug/build/out.rs", &invocation("0.1.0"));
        write("proto/tests/snapshots/a.snap.new", "");
        write("proto/tests/snapshots/a.snap", "");
        write(
            "client/Cargo.toml",
            "[package]\nname = \"client\"\nautotests = false\n\n[[test]]\nname = \"it\"\npath = \"tests/it.rs\"\n\n[dependencies]\n",
        );
        write("client/tests/real.rs", &invocation("0.169.0"));
        write("client/tests/deeper/more.rs", &invocation("0.169.0"));
        write("target/x.snap.new", "");

        let pinned = scan_pinned(root.path());
        let files: Vec<_> = pinned.iter().map(|p| (p.file.to_str().unwrap(), p.version.as_str())).collect();
        assert_eq!(
            files,
            [
                ("client/tests/deeper/more.rs", "0.169.0"),
                ("client/tests/real.rs", "0.169.0"),
                ("proto/src/lib.rs", "0.171.0"),
                ("proto/tests/conformance/main.rs", "0.169.0"),
                ("proto/tests/wire.rs", "0.169.0"),
                ("traffic/src/drift.rs", "0.169.0"),
            ]
        );
        let runs = test_runs(root.path(), &pinned);
        assert_eq!(
            runs,
            [
                TestRun { package: TRAFFIC_PACKAGE.into(), targets: vec![] },
                TestRun { package: "client".into(), targets: vec!["--test it".into()] },
                TestRun {
                    package: "proto".into(),
                    targets: vec!["--lib".into(), "--test conformance".into(), "--test wire".into()]
                },
            ]
        );
        assert_eq!(
            runs[2].cargo_args().join(" "),
            "test --package proto --all-features --no-fail-fast --lib --test conformance --test wire -- --include-ignored"
        );
        assert_eq!(pending_snapshots(root.path()), [PathBuf::from("proto/tests/snapshots/a.snap.new")]);
    }

    /// The real workspace: the pinned tests are found and run by their own targets.
    #[test]
    fn pinned_tests_of_this_workspace() {
        let root = crate::root();
        let pinned = scan_pinned(&root);
        let wire = pinned
            .iter()
            .find(|p| p.file == Path::new("protocol/tests/wire.rs"))
            .expect("protocol/tests/wire.rs is pinned");
        assert_eq!(wire.line, 6);
        assert_eq!(
            test_target(&root, &wire.file),
            Some(("codex-app-protocol".to_owned(), Some("--test it".to_owned())))
        );
        let conformance = Path::new("protocol/tests/conformance/main.rs");
        assert_eq!(
            test_target(&root, conformance),
            Some(("codex-app-protocol".to_owned(), Some("--test it".to_owned())))
        );
        assert_eq!(
            test_target(&root, Path::new("traffic/src/drift.rs")),
            Some((TRAFFIC_PACKAGE.to_owned(), Some("--lib".to_owned())))
        );
    }

    #[test]
    fn failed_tests_from_cargo_output() {
        let out: Vec<String> = [
            "running 3 tests",
            "test drift::tests::x ... ok",
            "test fixtures_have_no_drift ... FAILED",
            "test pinned_to_another_codex_release ... FAILED",
            "test result: FAILED. 1 passed; 2 failed",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(failed_tests(&out), ["fixtures_have_no_drift", "pinned_to_another_codex_release"]);
    }

    fn step(name: &str, outcome: Outcome) -> Step {
        Step { name: name.to_owned(), outcome, took: Duration::from_millis(1500) }
    }

    #[test]
    fn report_of_a_run_that_stopped_on_decisions() {
        let missing = Missing {
            codex_version: "0.171.0".into(),
            responses: vec![ResponseProposal {
                method: "a/b".into(),
                direction: "ClientRequest",
                proposal: "any".into(),
                why: String::new(),
            }],
            null_distinct_from_absent: vec![NullProposal { key: "T.m".into(), proposal: true, doc: String::new() }],
        };
        let report = Report {
            version: "0.171.0".into(),
            steps: vec![
                step("install codex 0.171.0", Outcome::Ok),
                step("regen", Outcome::Stopped("2 decision(s) to add; nothing was written".into())),
                step("record", Outcome::Skipped("regen did not finish".into())),
            ],
            decisions: Some(missing),
            pinned: vec![Pinned { file: "protocol/tests/wire.rs".into(), line: 6, version: "0.169.0".into() }],
            ..Report::default()
        };
        assert!(!report.is_done());
        let text = report.render();
        for expected in [
            "  regen                            1.5s  stopped: 2 decision(s) to add; nothing was written",
            "  record                           1.5s  skipped: regen did not finish",
            "- decisions to add: 2 (listed above, with the lines to paste into vendor-schemas/decisions.json); add them, then run `cargo xtask upgrade 0.171.0` again",
            "    protocol/tests/wire.rs:6: pinned to codex 0.169.0",
        ] {
            assert!(text.contains(expected), "{expected:?} not in:\n{text}");
        }
        assert!(!text.contains("failed"), "a stop is not a failure:\n{text}");
    }

    #[test]
    fn report_of_a_run_that_went_through() {
        let mut report = Report {
            version: "0.171.0".into(),
            steps: ["install codex 0.171.0", "regen", "record", "drift", "tests codex-app-traffic"]
                .map(|s| step(s, Outcome::Ok))
                .into(),
            changes: Some(("0.169.0".into(), "3 breaking, 10 compatible".into())),
            ..Report::default()
        };
        assert!(report.is_done());
        let text = report.render();
        assert!(text.contains("nothing needs a person"), "{text}");
        assert!(
            text.contains("changelog since codex 0.169.0 in vendor-schemas/CHANGES.md: 3 breaking, 10 compatible"),
            "{text}"
        );

        report.steps[2].outcome = Outcome::Failed("2 scenario(s) failed: dynamic_tool, lifecycle\nmore".into());
        report.scenarios = vec![("dynamic_tool".into(), "request `thread/start`: does not fit".into())];
        report.snapshots = vec!["traffic/tests/snapshots/it__snapshots__lifecycle.snap.new".into()];
        report.failed_tests = vec!["codex-app-traffic: snapshots".into()];
        assert!(!report.is_done());
        let text = report.render();
        for expected in [
            "  record                           1.5s  FAILED: 2 scenario(s) failed: dynamic_tool, lifecycle\n",
            "- scenarios that no longer fit codex 0.171.0 (1)",
            "    dynamic_tool: request `thread/start`: does not fit",
            "- snapshots to review: 1 pending (`cargo insta review`)",
            "- failing tests (1):\n    codex-app-traffic: snapshots",
            "- step `record` failed: 2 scenario(s) failed: dynamic_tool, lifecycle\n    more",
        ] {
            assert!(text.contains(expected), "{expected:?} not in:\n{text}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn failed_traffic_commands_say_why() {
        use std::os::unix::process::ExitStatusExt as _;
        let failed = std::process::ExitStatus::from_raw(1 << 8);
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_traffic_status("drift", std::process::ExitStatus::from_raw(0), &[]).is_ok());
        let err = check_traffic_status("drift", failed, &lines(&["x", "Error: 3 drift finding(s) in 1 file(s)"]))
            .unwrap_err();
        assert_eq!(err.to_string(), "3 drift finding(s) in 1 file(s)");
        let err =
            check_traffic_status("record", failed, &lines(&["error: could not compile `codex-app-protocol` (lib)"]))
                .unwrap_err();
        assert!(err.to_string().contains("does not compile"), "{err}");
        let err = check_traffic_status("record", failed, &[]).unwrap_err();
        assert!(err.to_string().contains("`xtask-traffic record` failed"), "{err}");
    }
}
