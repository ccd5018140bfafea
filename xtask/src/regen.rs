//! `cargo xtask regen`: vendor the schema codex prints and regenerate the protocol crate.
//!
//! When it replaces the vendored schema, it also writes `vendor-schemas/CHANGES.md`: the
//! protocol changelog from the previously vendored release (see `cargo xtask diff`). So
//! CHANGES.md always describes the last upgrade; `--check` does not look at it.
//!
//! A run is all or nothing: [`plan`] computes every file in memory (the generated code, the
//! changelog from the previously vendored set, the vendored bundles and manifest), and only
//! when all of that succeeded does [`Plan::apply`] write them. A run that stops on a missing
//! decision or fails writes nothing, so the rerun after adding the decisions still compares
//! with the previous release and writes the same changelog as a run that never stopped.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use codex_app_codegen::vendor::{self, Manifest, MANIFEST_FILE};
use codex_app_codegen::{generate_from_ir, GeneratedFile, SchemaSet, Settings, Summary, BUNDLE_FILE};

use codex_app_codegen::history::{version_cmp, History, HISTORY_FILE};
use codex_app_codegen::releases::{Release, RELEASES_DIR};

use crate::codex;

/// The command every generated file's header names.
pub const COMMAND: &str = "cargo xtask regen";

/// The changelog of the last upgrade, next to the vendored schema.
pub const CHANGES_FILE: &str = "CHANGES.md";

/// The vendored schema set, relative to the workspace root.
pub const VENDOR_DIR: &str = "vendor-schemas";

#[derive(clap::Args)]
pub struct Args {
    /// The codex binary to run (default: $CODEX_BIN, the pinned .codex-bin install, then PATH).
    #[arg(long)]
    codex: Option<PathBuf>,
    /// Use this `generate-json-schema` output folder instead of running codex.
    #[arg(long, conflicts_with = "codex")]
    stable: Option<PathBuf>,
    /// The `generate-json-schema --experimental` output folder that goes with `--stable`.
    #[arg(long, requires = "stable")]
    experimental: Option<PathBuf>,
    /// The codex release that printed `--stable` (`0.171.0`): the manifest, the file headers
    /// and the supported range are keyed by it. Required with `--stable`.
    #[arg(long, requires = "stable")]
    codex_version: Option<String>,
    /// Moves the oldest release of the supported range (a release of `vendor-schemas/releases/`
    /// or the vendored one); `vendor-schemas/history.json` keeps it.
    #[arg(long)]
    floor: Option<String>,
    /// Write nothing; fail with a diff if the committed files are not what the vendored
    /// schema gives (or, when a codex is found, if the vendored schema is not what it prints).
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let started = std::time::Instant::now();

    let fresh = if let Some(stable) = &args.stable {
        let Some(version) = args.codex_version.as_deref().filter(|v| semver::Version::parse(v).is_ok()) else {
            bail!(
                "regen --stable {}: name the codex release that printed it with `--codex-version VERSION` \
                 (`codex --version` of that binary, such as 0.171.0){}: the supported range, the manifest and \
                 the changelog are keyed by it",
                stable.display(),
                args.codex_version.as_deref().map(|v| format!("; `{v}` is not a release number")).unwrap_or_default()
            );
        };
        println!("regen: schema from {}", stable.display());
        Some(SchemaSet::read(stable, args.experimental.as_deref(), version)?)
    } else if let Some(codex) = codex::find(args.codex.as_deref()) {
        println!("regen: running {}", codex.display());
        Some(from_codex(&codex)?)
    } else {
        println!("regen: no codex found (--codex, $CODEX_BIN, .codex-bin/, PATH); using vendor-schemas/");
        None
    };
    let settings = Settings { floor: args.floor.clone(), ..Settings::codex()? };
    if args.check {
        return check(&root, fresh, &settings, started);
    }
    let plan = regen(&root, fresh, &settings).map_err(|e| e.context("regen stopped; nothing was written"))?;
    print_summary(&plan.set, &plan.summary, started);
    Ok(())
}

/// Regenerates the workspace at `root` from `fresh` (vendoring it), or from the vendored set
/// when `fresh` is `None`: [`plan`], then [`Plan::apply`]. Writes nothing when planning fails
/// (a decision `settings` do not hold, a generator error, a changelog that cannot be made).
pub fn regen(root: &Path, fresh: Option<SchemaSet>, settings: &Settings) -> anyhow::Result<Plan> {
    let plan = plan(root, fresh, settings)?;
    plan.apply(root)?;
    Ok(plan)
}

/// A change to one file of the workspace, relative to its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Write {
        path: PathBuf,
        contents: String,
    },
    /// A generated file the generator no longer writes.
    Remove(PathBuf),
    /// The vendored experimental folder, when the new release has no experimental bundle.
    RemoveDir(PathBuf),
}

/// Everything a regen changes, computed in memory before anything is written.
#[derive(Debug)]
pub struct Plan {
    /// The set the code is generated from.
    pub set: SchemaSet,
    pub summary: Summary,
    /// In the order they are applied: generated files, `CHANGES.md`, then the vendored bundles
    /// and last `manifest.json` (what marks the vendored set). Only files whose bytes change.
    pub actions: Vec<Action>,
    /// What was left alone and why (no previous set, schema unchanged).
    pub notes: Vec<String>,
    /// `summary()` of the changelog written to `CHANGES.md`, with the previous release.
    pub changes: Option<(String, String)>,
}

/// Computes a regen of the workspace at `root` without writing anything: reads the previously
/// vendored set, generates every file with `settings` (a decision they do not hold is an
/// error with [`codex_app_codegen::decisions::Undecided::Fail`]:
/// [`codex_app_codegen::Error::missing_decisions`]), and, when `fresh` replaces the vendored
/// set, the changelog from it and the vendored files.
pub fn plan(root: &Path, fresh: Option<SchemaSet>, settings: &Settings) -> anyhow::Result<Plan> {
    let vendor_dir = root.join(VENDOR_DIR);
    let (set, previous) = match fresh {
        Some(set) => {
            let previous = vendor::read_vendored(&vendor_dir);
            (set, Some(previous))
        }
        None => (vendor::read_vendored(&vendor_dir).map_err(anyhow::Error::msg)?, None),
    };
    let mut notes = Vec::new();
    let (with_history, history_files) = with_history(root, &set, previous.as_ref(), settings, &mut notes)?;
    let ir = codex_app_codegen::build_ir_with(&set, &with_history).map_err(anyhow::Error::new)?;
    let (files, summary) = generate_from_ir(&ir, &set, COMMAND, &with_history).map_err(anyhow::Error::new)?;

    let mut actions = Vec::new();
    for file in &files {
        write_if_changed(&mut actions, root, &file.path, &file.contents);
    }
    for (path, text) in &history_files {
        write_if_changed(&mut actions, root, path, text);
    }
    if let Some(history) = &with_history.history {
        // The table of the supported range in docs/supported-releases.md, between its markers.
        let table = crate::availability::release_table(&ir, history);
        let releases_doc = Path::new("docs/supported-releases.md");
        if let Ok(readme) = std::fs::read_to_string(root.join(releases_doc)) {
            use crate::availability::{README_END, README_START};
            if let (Some(start), Some(end)) = (readme.find(README_START), readme.find(README_END)) {
                let new = format!("{}{table}{}", &readme[..start], &readme[end + README_END.len()..]);
                write_if_changed(&mut actions, root, releases_doc, &new);
            }
        }
    }
    for path in orphans(root, &files)? {
        actions.push(Action::Remove(path));
    }

    let mut changes = None;
    if let Some(previous) = previous {
        match previous {
            Err(e) => {
                notes.push(format!("no previous vendored schema to compare with ({e}); {CHANGES_FILE} not written"))
            }
            Ok(p) if p.stable == set.stable && p.experimental == set.experimental => {
                notes.push(format!("schema unchanged since codex {}; {CHANGES_FILE} left as it is", p.codex_version));
            }
            Ok(p) => {
                let report = codex_app_codegen::diff::diff_sets_with(&p, &set, settings).map_err(|e| {
                    anyhow::anyhow!(
                        "cannot write the changelog from codex {} ({e}); nothing was written (vendoring without it would lose it)",
                        p.codex_version
                    )
                })?;
                write_if_changed(&mut actions, root, &Path::new(VENDOR_DIR).join(CHANGES_FILE), &report.to_markdown());
                changes = Some((p.codex_version, report.summary()));
            }
        }
        for (folder, text) in [("stable", Some(&set.stable)), ("experimental", set.experimental.as_ref())] {
            let path = Path::new(VENDOR_DIR).join(folder);
            match text {
                Some(text) => write_if_changed(&mut actions, root, &path.join(BUNDLE_FILE), text),
                None if root.join(&path).exists() => actions.push(Action::RemoveDir(path)),
                None => {}
            }
        }
        write_if_changed(
            &mut actions,
            root,
            &Path::new(VENDOR_DIR).join(MANIFEST_FILE),
            &Manifest::for_set(&set).to_json(),
        );
    }
    Ok(Plan { set, summary, actions, notes, changes })
}

/// `settings` with the surface history of the supported range, folded from the archive of
/// releases (`vendor-schemas/releases/`) from the floor (`--floor`, else the committed
/// history's) to `set`, and the files that go with it: `vendor-schemas/history.json` and, when
/// `set` is newer than the vendored release it replaces, that release's archive file. A set
/// older than the vendored one (a rehearsal of another release) is generated alone, as is a
/// workspace without a history.
fn with_history(
    root: &Path,
    set: &SchemaSet,
    previous: Option<&Result<SchemaSet, String>>,
    settings: &Settings,
    notes: &mut Vec<String>,
) -> anyhow::Result<(Settings, Vec<(PathBuf, String)>)> {
    let committed = crate::history::read_committed(root)?;
    let Some(floor) = settings.floor.clone().or_else(|| committed.map(|h| h.floor)) else {
        return Ok((settings.clone(), Vec::new()));
    };
    let mut files = Vec::new();
    let between = match previous {
        None => Vec::new(),
        Some(Err(e)) => bail!("no vendored schema to extend the supported range from ({e})"),
        Some(Ok(prev)) => match version_cmp(&set.codex_version, &prev.codex_version) {
            std::cmp::Ordering::Equal => Vec::new(),
            std::cmp::Ordering::Greater => {
                let replaced = vec![(prev.codex_version.clone(), Release::Bundles(prev.clone()))];
                files.extend(codex_app_codegen::releases::write(&replaced, set).map_err(anyhow::Error::msg)?);
                notes.push(format!(
                    "codex {} added to the supported range; codex {} archived in {RELEASES_DIR}",
                    set.codex_version, prev.codex_version
                ));
                replaced
            }
            std::cmp::Ordering::Less => {
                notes.push(format!(
                    "codex {} is older than the vendored release ({}): generated from it alone",
                    set.codex_version, prev.codex_version
                ));
                return Ok((settings.clone(), Vec::new()));
            }
        },
    };
    let history = crate::history::build(root, set, &floor, &between)?;
    files.push((PathBuf::from(HISTORY_FILE), history.to_json()));
    Ok((Settings { history: Some(history), floor: None, ..settings.clone() }, files))
}

/// The codex release of the vendored schema (`vendor-schemas/manifest.json`).
pub fn vendored_version(root: &Path) -> anyhow::Result<String> {
    let set = vendor::read_vendored(&root.join(VENDOR_DIR)).map_err(anyhow::Error::msg)?;
    Ok(set.codex_version)
}

/// The vendored history applied to the vendored schema: the IR of the supported range.
pub fn range_ir(root: &Path) -> anyhow::Result<(codex_app_codegen::ir::Ir, History)> {
    let set = vendor::read_vendored(&root.join(VENDOR_DIR)).map_err(anyhow::Error::msg)?;
    let Some(committed) = crate::history::read_committed(root)? else {
        bail!("no {HISTORY_FILE}; run `cargo xtask regen --floor VERSION`");
    };
    let history = crate::history::build(root, &set, &committed.floor, &[])?;
    let settings = Settings { history: Some(history.clone()), ..Settings::codex()? };
    Ok((codex_app_codegen::build_ir_with(&set, &settings).map_err(anyhow::Error::new)?, history))
}

impl Plan {
    /// Writes the planned changes under `root`, printing each.
    pub fn apply(&self, root: &Path) -> anyhow::Result<()> {
        for note in &self.notes {
            println!("regen: {note}");
        }
        for action in &self.actions {
            match action {
                Action::Write { path, contents } => {
                    let full = root.join(path);
                    if let Some(parent) = full.parent() {
                        std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
                    }
                    std::fs::write(&full, contents).with_context(|| full.display().to_string())?;
                    println!("updated {}", path.display());
                }
                Action::Remove(path) => {
                    std::fs::remove_file(root.join(path)).with_context(|| path.display().to_string())?;
                    println!("removed {}", path.display());
                }
                Action::RemoveDir(path) => {
                    std::fs::remove_dir_all(root.join(path)).with_context(|| path.display().to_string())?;
                    println!("removed {}", path.display());
                }
            }
        }
        if let Some((previous, summary)) = &self.changes {
            println!("protocol changes since codex {previous}: {summary}");
            println!("wrote {VENDOR_DIR}/{CHANGES_FILE}");
        }
        Ok(())
    }
}

/// `--check`: writes nothing; fails with a readable diff when the committed files are not what
/// the vendored set gives, or when `fresh` (what the codex found prints) is not the vendored set.
fn check(
    root: &Path,
    fresh: Option<SchemaSet>,
    settings: &Settings,
    started: std::time::Instant,
) -> anyhow::Result<()> {
    let set = vendor::read_vendored(&root.join(VENDOR_DIR)).map_err(anyhow::Error::msg)?;
    let mut stale = Vec::new();
    if let Some(fresh) = fresh {
        if set.stable != fresh.stable || set.experimental != fresh.experimental {
            stale.push(format!(
                "vendor-schemas/ holds codex {} but codex {} prints a different schema",
                set.codex_version, fresh.codex_version
            ));
        }
    }
    // What a regen from the vendored set would write (the history applied, the releases table).
    let plan = plan(root, None, settings)?;
    for action in &plan.actions {
        match action {
            Action::Write { path, contents } => stale.extend(stale_diff(root, path, contents)),
            Action::Remove(path) | Action::RemoveDir(path) => {
                stale.push(format!("{} is not generated any more", path.display()))
            }
        }
    }
    print_summary(&set, &plan.summary, started);
    if !stale.is_empty() {
        for s in &stale {
            eprintln!("{s}");
        }
        bail!("generated code is stale; run `{COMMAND}` and commit the result");
    }
    println!("regen --check: up to date");
    Ok(())
}

/// The counts of a generated set, and the time since `started`.
pub fn print_summary(set: &SchemaSet, summary: &Summary, started: std::time::Instant) {
    println!(
        "codex {}: {} types; methods: {} client requests, {} server requests, {} server notifications, {} client notifications",
        set.codex_version,
        summary.types,
        summary.client_requests,
        summary.server_requests,
        summary.server_notifications,
        summary.client_notifications
    );
    println!(
        "experimental: {} methods, {} types, {} members/arms/values; {} generated lines; {:.2?}",
        summary.experimental_methods,
        summary.experimental_types,
        summary.experimental_members,
        summary.lines,
        started.elapsed()
    );
    if !summary.warnings.is_empty() {
        println!(
            "regen: {} construct(s) without a faithful Rust type (typed as they say; nothing is lost on the wire):",
            summary.warnings.len()
        );
        for w in &summary.warnings {
            println!("  warning: {w}");
        }
    }
}

/// Files in the generated folders (relative to `root`) that are not among `files`.
fn orphans(root: &Path, files: &[GeneratedFile]) -> anyhow::Result<Vec<PathBuf>> {
    let mut orphans = Vec::new();
    for dir in codex_app_codegen::GENERATED_DIRS {
        let generated_dir = root.join(dir);
        if !generated_dir.exists() {
            continue; // a folder not generated yet holds no stale file
        }
        for entry in std::fs::read_dir(&generated_dir).with_context(|| generated_dir.display().to_string())? {
            let path = Path::new(dir).join(entry?.file_name());
            if !files.iter().any(|f| f.path == path) {
                orphans.push(path);
            }
        }
    }
    orphans.sort();
    Ok(orphans)
}

/// Plans writing `contents` to `path` (relative to `root`) when the file does not hold them.
fn write_if_changed(actions: &mut Vec<Action>, root: &Path, path: &Path, contents: &str) {
    if std::fs::read(root.join(path)).ok().as_deref() != Some(contents.as_bytes()) {
        actions.push(Action::Write { path: path.to_owned(), contents: contents.to_owned() });
    }
}

/// The schema set `codex` prints (stable and, when it has the flag, experimental).
pub fn from_codex(codex: &Path) -> anyhow::Result<SchemaSet> {
    let version = codex::version(codex)?;
    let tmp = tempdir()?;
    let (stable, experimental) = (tmp.join("stable"), tmp.join("experimental"));
    codex::generate_schema(codex, &stable, false)?;
    let has_experimental = codex::generate_schema(codex, &experimental, true)?;
    if !has_experimental {
        println!("regen: codex {version} has no --experimental; no experimental surface");
    }
    let set = SchemaSet::read(&stable, has_experimental.then_some(experimental.as_path()), &version)?;
    std::fs::remove_dir_all(&tmp)?;
    Ok(set)
}

fn tempdir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("xtask-regen-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A readable diff when `path` (relative to `root`) does not hold `contents`.
fn stale_diff(root: &Path, path: &Path, contents: &str) -> Option<String> {
    let old = std::fs::read_to_string(root.join(path)).unwrap_or_default();
    if old == contents {
        return None;
    }
    let diff = similar::TextDiff::from_lines(old.as_str(), contents);
    let mut text = format!("{} is stale:\n", path.display());
    let unified = diff.unified_diff().context_radius(2).header("committed", "regenerated").to_string();
    const MAX_LINES: usize = 60;
    let lines: Vec<&str> = unified.lines().collect();
    text.push_str(&lines[..lines.len().min(MAX_LINES)].join("\n"));
    if lines.len() > MAX_LINES {
        text.push_str(&format!("\n... ({} more diff lines)", lines.len() - MAX_LINES));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use codex_app_codegen::decisions::Decisions;
    use serde_json::json;

    use super::*;

    /// A release whose clients send `gadget/get`; `tune` adds `gadget/tune`, which the naming
    /// convention does not pair, with a member whose `null` may mean something of its own.
    fn set(version: &str, tune: bool) -> SchemaSet {
        let request = |method: &str, params: &str| {
            json!({"type": "object", "required": ["id", "method", "params"], "properties": {
                "id": {"type": "integer"}, "method": {"type": "string", "enum": [method]},
                "params": {"$ref": format!("#/definitions/{params}")}}})
        };
        let mut requests = vec![request("gadget/get", "GadgetGetParams")];
        let mut definitions = json!({
            "GadgetGetParams": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
            "GadgetGetResponse": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
        });
        if tune {
            requests.push(request("gadget/tune", "GadgetTuneParams"));
            definitions["GadgetTuneParams"] = json!({"type": "object", "properties": {
                "label": {"type": ["string", "null"], "description": "Omit to keep the label, set to `null` to remove it."}}});
            definitions["TuneGadgetResponse"] = json!({"type": "object", "properties": {}});
        }
        definitions["ClientRequest"] = json!({"oneOf": requests});
        let stable = serde_json::to_string_pretty(&json!({"definitions": definitions})).unwrap();
        SchemaSet { stable, experimental: None, codex_version: version.to_owned() }
    }

    fn decided() -> Settings {
        Settings::with_decisions(
            Decisions::from_json(
                r#"{"responses": {"gadget/tune": "TuneGadgetResponse"}, "null_distinct_from_absent": {"GadgetTuneParams.label": true}}"#,
            )
            .unwrap(),
        )
    }

    fn undecided() -> Settings {
        Settings::with_decisions(Decisions::default())
    }

    /// A workspace with codex 1.0.0 vendored and its code generated.
    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(codex_app_codegen::GENERATED_DIR)).unwrap();
        regen(dir.path(), Some(set("1.0.0", false)), &undecided()).unwrap();
        assert!(dir.path().join("vendor-schemas/manifest.json").exists());
        dir
    }

    /// Every file under `root` with its bytes.
    fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else {
                    out.insert(path.strip_prefix(root).unwrap().to_owned(), std::fs::read(&path).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(root, root, &mut out);
        out
    }

    /// The files added, removed or changed from `a` to `b`.
    fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
        a.keys()
            .chain(b.keys())
            .filter(|p| a.get(*p) != b.get(*p))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    #[test]
    fn a_run_that_stops_on_missing_decisions_writes_nothing_and_the_rerun_writes_the_changelog() {
        let stopped = workspace();
        let before = files(stopped.path());
        let err = regen(stopped.path(), Some(set("1.1.0", true)), &undecided()).expect_err("two decisions are missing");
        let missing = err
            .downcast_ref::<codex_app_codegen::Error>()
            .and_then(|e| e.missing_decisions.as_deref())
            .unwrap_or_else(|| panic!("not a missing-decisions error: {err:#}"));
        assert_eq!((missing.responses.len(), missing.null_distinct_from_absent.len()), (1, 1), "{err}");
        assert_eq!(
            changed(&before, &files(stopped.path())),
            Vec::<PathBuf>::new(),
            "a run that stopped changed these files"
        );

        // The decisions added, the rerun does what one run with them would have done.
        regen(stopped.path(), Some(set("1.1.0", true)), &decided()).unwrap();
        let straight = workspace();
        regen(straight.path(), Some(set("1.1.0", true)), &decided()).unwrap();
        let after = files(stopped.path());
        assert_eq!(
            changed(&after, &files(straight.path())),
            Vec::<PathBuf>::new(),
            "these files differ from a run that never stopped"
        );
        let changes = String::from_utf8(after[&Path::new("vendor-schemas/CHANGES.md").to_owned()].clone()).unwrap();
        assert!(changes.contains("gadget/tune") && changes.contains("1.0.0") && changes.contains("1.1.0"), "{changes}");
        assert!(
            String::from_utf8_lossy(&after[&Path::new("vendor-schemas/manifest.json").to_owned()]).contains("1.1.0")
        );

        // Nothing left to do; CHANGES.md still describes the upgrade.
        let again = plan(stopped.path(), Some(set("1.1.0", true)), &decided()).unwrap();
        assert_eq!(again.actions, []);
        assert!(again.notes.iter().any(|n| n.contains("schema unchanged since codex 1.1.0")), "{:?}", again.notes);
    }

    #[test]
    fn a_generator_error_writes_nothing() {
        let root = workspace();
        let before = files(root.path());
        let mut broken = set("1.1.0", false);
        // Not valid JSON Schema (regen takes every valid construct): a `$ref` to nothing.
        broken.stable = broken.stable.replacen("#/definitions/GadgetGetParams", "#/definitions/NoSuchType", 1);
        let err = regen(root.path(), Some(broken), &decided()).expect_err("a dangling `$ref`");
        assert!(err.to_string().contains("NoSuchType"), "{err}");
        assert_eq!(changed(&before, &files(root.path())), Vec::<PathBuf>::new(), "a failed run changed these files");
    }
}
