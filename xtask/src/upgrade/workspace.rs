//! What the upgrade needs to know of the workspace before anything runs: its test targets,
//! the tests written for a codex release and which targets hold them, and the snapshots (those
//! insta left for review among them).
//!
//! The packages and their targets are cargo's data: `cargo metadata --format-version 1
//! --no-deps` gives each target's kind, name, root file (`src_path`) and whether `cargo test`
//! runs it (`test`); no `Cargo.toml` is read here.
//!
//! Where `written_for_codex!` is invoked, and with which release, is in the sources only: it is
//! a `macro_rules!` macro, and no compiler output says where a macro was invoked. (After a regen
//! from a release out of the range each invocation compiles to a test named
//! `written_for_a_codex_release_out_of_range`, but only a build of every test target would list
//! those, without the file and line a person needs, and not at all before regen goes through.)
//! So [`Workspace::scan_written_for`] reads the `.rs` files under the targets' root folders for the
//! invocation (`written_for_in`), and a file belongs to the targets whose root file is in the
//! nearest folder above it: Rust's module layout (a crate's modules are the files under its
//! root's folder), which a `#[path]` attribute pointing elsewhere would escape.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use anyhow::{bail, Context as _};
use serde::Deserialize;

use super::{SESSION_PACKAGES, STABLE_PACKAGE};

/// `cargo metadata --format-version 1` (the fields used here).
#[derive(Deserialize)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    targets: Vec<MetadataTarget>,
}

#[derive(Deserialize)]
struct MetadataTarget {
    name: String,
    kind: Vec<String>,
    src_path: PathBuf,
    /// Absent from older cargos' output: then taken as tested.
    #[serde(default = "yes")]
    test: bool,
}

fn yes() -> bool {
    true
}

/// How `cargo test` selects a target.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Selector {
    Lib,
    Bin(String),
    Test(String),
    Bench(String),
    Example(String),
}

impl Selector {
    /// From a target's `kind` and name; `None` for a build script (`custom-build`).
    fn of(kind: &[String], name: &str) -> Option<Selector> {
        let name = name.to_owned();
        match kind.first()?.as_str() {
            "lib" | "rlib" | "dylib" | "cdylib" | "staticlib" | "proc-macro" => Some(Selector::Lib),
            "bin" => Some(Selector::Bin(name)),
            "test" => Some(Selector::Test(name)),
            "bench" => Some(Selector::Bench(name)),
            "example" => Some(Selector::Example(name)),
            _ => None,
        }
    }

    pub fn args(&self) -> Vec<String> {
        let (flag, name) = match self {
            Selector::Lib => return vec!["--lib".to_owned()],
            Selector::Bin(name) => ("--bin", name),
            Selector::Test(name) => ("--test", name),
            Selector::Bench(name) => ("--bench", name),
            Selector::Example(name) => ("--example", name),
        };
        vec![flag.to_owned(), name.clone()]
    }
}

/// A target of a workspace package that `cargo test` can select (build scripts are left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub package: String,
    pub selector: Selector,
    /// The folder of its root file, relative to the workspace root.
    pub folder: PathBuf,
    /// Whether `cargo test` runs it (`test = false` in its manifest: not).
    pub tested: bool,
}

/// The workspace as `cargo metadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub root: PathBuf,
    pub target_directory: PathBuf,
    pub targets: Vec<Target>,
}

/// A `written_for_codex!` invocation: where, and the release it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFor {
    /// Relative to the workspace root.
    pub file: PathBuf,
    pub line: usize,
    pub version: String,
}

/// One `cargo test` run: a package, all its targets or some.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestRun {
    pub package: String,
    /// Empty: every target.
    pub targets: Vec<Selector>,
}

impl TestRun {
    /// `cargo`'s arguments: cargo reports the build as JSON messages.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["test", "--package", &self.package].map(str::to_owned).into();
        if self.package != STABLE_PACKAGE {
            args.push("--all-features".to_owned());
        }
        args.extend(["--no-fail-fast", "--message-format", "json"].map(str::to_owned));
        args.extend(self.targets.iter().flat_map(Selector::args));
        // The tests that need the codex binary are `#[ignore]`d; upgrade has one installed.
        args.extend(["--", "--include-ignored"].map(str::to_owned));
        args
    }
}

impl Workspace {
    /// `cargo metadata --format-version 1 --no-deps` in `root`.
    pub fn load(root: &Path) -> anyhow::Result<Workspace> {
        let out = crate::cargo()
            .current_dir(root)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .stderr(Stdio::inherit())
            .output()
            .context("cannot run cargo metadata")?;
        if !out.status.success() {
            bail!("`cargo metadata` failed ({})", out.status);
        }
        Workspace::from_json(&out.stdout)
    }

    /// From what `cargo metadata --format-version 1` printed.
    pub fn from_json(json: &[u8]) -> anyhow::Result<Workspace> {
        let metadata: Metadata = serde_json::from_slice(json).context("`cargo metadata` printed something else")?;
        let root = metadata.workspace_root;
        let mut targets = Vec::new();
        for package in metadata.packages {
            for t in package.targets {
                let Some(selector) = Selector::of(&t.kind, &t.name) else { continue };
                // `src_path` may go through `..` (a package whose root file is another's).
                let file = lexical(&t.src_path);
                let folder = file.parent().and_then(|f| f.strip_prefix(&root).ok()).with_context(|| {
                    format!("{} (of {}) is not in the workspace {}", t.src_path.display(), package.name, root.display())
                })?;
                targets.push(Target {
                    package: package.name.clone(),
                    selector,
                    folder: folder.to_owned(),
                    tested: t.test,
                });
            }
        }
        Ok(Workspace { root, target_directory: metadata.target_directory, targets })
    }

    /// The targets that hold `file` (relative to the root): those whose root file is in the
    /// nearest folder above it (more than one when targets share a folder).
    pub fn owners(&self, file: &Path) -> Vec<&Target> {
        let holding: Vec<&Target> = self.targets.iter().filter(|t| file.starts_with(&t.folder)).collect();
        let nearest = holding.iter().map(|t| t.folder.components().count()).max();
        holding.into_iter().filter(|t| Some(t.folder.components().count()) == nearest).collect()
    }

    /// The `.rs` files under the targets' folders, relative to the root, sorted.
    pub fn source_files(&self) -> Vec<PathBuf> {
        let folders: BTreeSet<&Path> = self.targets.iter().map(|t| t.folder.as_path()).collect();
        let mut files = BTreeSet::new();
        for folder in folders {
            let under = files_under(&self.root.join(folder), &|name| name.ends_with(".rs"));
            files.extend(under.into_iter().map(|f| folder.join(f)));
        }
        files.into_iter().collect()
    }

    /// Every `written_for_codex!` invocation in [`Workspace::source_files`] (not in comments).
    pub fn scan_written_for(&self) -> Vec<WrittenFor> {
        let mut found = Vec::new();
        for file in self.source_files() {
            let Ok(text) = std::fs::read_to_string(self.root.join(&file)) else { continue };
            for (line, version) in written_for_in(&text) {
                found.push(WrittenFor { file: file.clone(), line, version });
            }
        }
        found
    }

    /// The traffic crate, whole, and the tested targets that hold tests written for a codex
    /// release, sorted.
    pub fn test_runs(&self, written_for: &[WrittenFor]) -> Vec<TestRun> {
        let mut runs: Vec<TestRun> =
            SESSION_PACKAGES.iter().map(|p| TestRun { package: (*p).to_owned(), targets: Vec::new() }).collect();
        for target in written_for.iter().flat_map(|p| self.owners(&p.file)).filter(|t| t.tested) {
            match runs.iter_mut().find(|r| r.package == target.package) {
                // Every target already, or this one already.
                Some(run) if run.targets.is_empty() || run.targets.contains(&target.selector) => {}
                Some(run) => run.targets.push(target.selector.clone()),
                None => runs.push(TestRun { package: target.package.clone(), targets: vec![target.selector.clone()] }),
            }
        }
        for run in &mut runs {
            run.targets.sort();
        }
        runs.sort();
        runs
    }

    /// Snapshots insta left for review (`*.snap.new`, `*.pending-snap`), relative to the root.
    pub fn pending_snapshots(&self) -> Vec<PathBuf> {
        files_under(&self.root, &|name| name.ends_with(".snap.new") || name.ends_with(".pending-snap"))
    }

    /// The snapshots (`*.snap`), relative to the root.
    pub fn snapshots(&self) -> Vec<PathBuf> {
        files_under(&self.root, &|name| name.ends_with(".snap"))
    }
}

/// `path` with its `.` and `..` resolved as text (cargo writes `src_path` absolute).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The folders the walks skip: build output, installs, VCS.
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

/// `(line, version)` of each `written_for_codex! { "VERSION", ...` in `text` outside `//`
/// comments (see the module docs for why the sources are read).
fn written_for_in(text: &str) -> Vec<(usize, String)> {
    const MACRO: &str = "written_for_codex!";
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The macro's name is spelled in pieces here, so that this file holds no invocation.
    fn invocation(version: &str) -> String {
        format!("codex_app_protocol::__test_support::{}! {{ \"{version}\",", "written_for_codex")
    }

    #[test]
    fn invocations_outside_comments() {
        let text = [
            "//! Docs that mention `written_for_codex!`.".to_owned(),
            invocation("0.169.0"),
            "fn a() {}".to_owned(),
            "}".to_owned(),
            format!("    /// {}", invocation("0.0.0-not-this-one")),
            format!("    {}", invocation("0.170.0").replace("{ ", "{\n        ")),
            "    let s = \"written_for_codex!\";".to_owned(),
        ]
        .join("\n");
        assert_eq!(written_for_in(&text), [(2, "0.169.0".to_owned()), (6, "0.170.0".to_owned())]);
    }

    /// A real `cargo metadata --format-version 1 --no-deps` of this workspace (cargo 1.95; four
    /// of its packages, their dependencies and features left out), with the workspace root
    /// `/work/wt-upgrade` made `root`.
    fn metadata(root: &Path) -> Workspace {
        let json = include_str!("testdata/cargo-metadata.json").replace("/work/wt-upgrade", root.to_str().unwrap());
        Workspace::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn targets_from_cargo_metadata() {
        let ws = metadata(Path::new("/w"));
        assert_eq!(ws.root, Path::new("/w"));
        assert_eq!(ws.target_directory, Path::new("/w/target"));
        let targets: Vec<String> = ws
            .targets
            .iter()
            .map(|t| {
                format!(
                    "{} {} {}{}",
                    t.package,
                    t.selector.args().join(" "),
                    t.folder.display(),
                    ["", " (untested)"][usize::from(!t.tested)]
                )
            })
            .collect();
        assert_eq!(
            targets,
            [
                "codex-app-protocol --lib protocol/src (untested)",
                "codex-app-protocol --test it protocol/tests",
                // `protocol-stable/../protocol/src/lib.rs`
                "codex-app-protocol-stable --lib protocol/src",
                "codex-app-traffic --lib traffic/src",
                "codex-app-traffic --test it traffic/tests",
                "xtask --lib xtask/src",
                "xtask --bin xtask xtask/src (untested)",
                "xtask --bin xtask-traffic xtask/src/bin (untested)",
            ]
        );
        let owners = |file: &str| -> Vec<String> {
            ws.owners(Path::new(file))
                .iter()
                .map(|t| format!("{} {}", t.package, t.selector.args().join(" ")))
                .collect()
        };
        assert_eq!(owners("protocol/tests/conformance/main.rs"), ["codex-app-protocol --test it"]);
        assert_eq!(
            owners("protocol/src/codec/structs.rs"),
            ["codex-app-protocol --lib", "codex-app-protocol-stable --lib"]
        );
        assert_eq!(owners("xtask/src/bin/xtask-traffic.rs"), ["xtask --bin xtask-traffic"]);
        assert_eq!(owners("xtask/src/upgrade/mod.rs"), ["xtask --lib", "xtask --bin xtask"]);
        assert!(owners("fuzz/fuzz_targets/line.rs").is_empty());

        let err = Workspace::from_json(b"{\"packages\": []}").unwrap_err();
        assert!(format!("{err:#}").contains("`cargo metadata` printed something else"), "{err:#}");
    }

    #[test]
    fn tests_written_for_a_release_map_to_cargo_test_targets() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("protocol/tests/wire.rs", &invocation("0.169.0"));
        write("protocol/tests/conformance/main.rs", &invocation("0.169.0"));
        write("protocol/src/lib.rs", &invocation("0.171.0"));
        write("traffic/src/drift.rs", &invocation("0.169.0"));
        write("xtask/src/bin/xtask-traffic.rs", &invocation("0.169.0"));
        write("fuzz/fuzz_targets/line.rs", &invocation("0.169.0"));
        write("protocol/target/debug/build/out.rs", &invocation("0.1.0"));
        write("protocol/tests/snapshots/a.snap.new", "");
        write("protocol/tests/snapshots/a.snap", "");
        write("target/x.snap.new", "");
        let ws = metadata(root.path());

        let written_for = ws.scan_written_for();
        let files: Vec<_> = written_for.iter().map(|p| (p.file.to_str().unwrap(), p.version.as_str())).collect();
        assert_eq!(
            files,
            [
                ("protocol/src/lib.rs", "0.171.0"),
                ("protocol/tests/conformance/main.rs", "0.169.0"),
                ("protocol/tests/wire.rs", "0.169.0"),
                ("traffic/src/drift.rs", "0.169.0"),
                ("xtask/src/bin/xtask-traffic.rs", "0.169.0"),
            ]
        );
        let runs = ws.test_runs(&written_for);
        assert_eq!(
            runs,
            [
                // Not the untested library of the same folder; xtask-traffic is untested.
                TestRun { package: "codex-app-protocol".into(), targets: vec![Selector::Test("it".into())] },
                // Whole: it checks the recorded sessions with the stable types.
                TestRun { package: STABLE_PACKAGE.into(), targets: vec![] },
                TestRun { package: SESSION_PACKAGES[0].into(), targets: vec![] },
            ]
        );
        assert_eq!(
            runs[0].cargo_args().join(" "),
            "test --package codex-app-protocol --all-features --no-fail-fast --message-format json --test it -- --include-ignored"
        );
        assert_eq!(
            runs[1].cargo_args().join(" "),
            "test --package codex-app-protocol-stable --no-fail-fast --message-format json -- --include-ignored"
        );
        assert_eq!(ws.pending_snapshots(), [PathBuf::from("protocol/tests/snapshots/a.snap.new")]);
    }

    /// The real workspace, through `cargo metadata`: the tests written for a release are found
    /// and run by their own targets.
    #[test]
    fn tests_written_for_a_release_in_this_workspace() {
        let ws = Workspace::load(&crate::root()).unwrap();
        assert_eq!(ws.root, crate::root());
        let written_for = ws.scan_written_for();
        let wire = written_for
            .iter()
            .find(|p| p.file == Path::new("protocol/tests/wire.rs"))
            .expect("protocol/tests/wire.rs is written for a release");
        assert_eq!(wire.line, 6);
        let runs = ws.test_runs(&written_for);
        let commands: Vec<String> = runs.iter().map(|r| format!("cargo {}", r.cargo_args().join(" "))).collect();
        eprintln!("{} invocation(s); the tests step runs:\n{}", written_for.len(), commands.join("\n"));
        for package in ["codex-app-protocol", "codex-app-client"] {
            let run = runs.iter().find(|r| r.package == package).unwrap_or_else(|| panic!("{package}: {runs:?}"));
            assert_eq!(run.targets, [Selector::Test("it".into())], "{package}");
        }
        for package in SESSION_PACKAGES {
            let traffic = runs.iter().find(|r| r.package == package).unwrap_or_else(|| panic!("{package}: {runs:?}"));
            assert!(traffic.targets.is_empty(), "{package}: every target");
        }
        assert!(
            ws.owners(Path::new("traffic/src/drift.rs")).iter().any(|t| t.selector == Selector::Lib && t.tested),
            "{:?}",
            ws.owners(Path::new("traffic/src/drift.rs"))
        );
    }
}
