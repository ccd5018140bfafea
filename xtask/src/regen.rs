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

use std::collections::BTreeMap;

use codex_app_codegen::history::{version_cmp, History, HISTORY_FILE, RETIRED_FILE};
use codex_app_codegen::releases::{self, Release, RELEASES_DIR};

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
    /// and the supported range are keyed by it. Required with `--stable`. Alone: regenerate
    /// from that release as `vendor-schemas/` holds it (the vendored one or one of
    /// `vendor-schemas/releases/`), without a codex.
    #[arg(long, conflicts_with = "codex")]
    codex_version: Option<String>,
    /// Let the schema given replace the bundles of a release `vendor-schemas/` already holds
    /// under its version (a development or patched build of it); without it, such a regen stops.
    #[arg(long)]
    replace: bool,
    /// Moves the oldest release of the supported range (a release of `vendor-schemas/releases/`
    /// or the vendored one); `vendor-schemas/history.json` keeps it.
    #[arg(long)]
    floor: Option<String>,
    /// Write nothing; fail with a diff if the committed files are not what the vendored
    /// schema gives (or, when a codex is found, if the vendored schema is not what it prints).
    #[arg(long)]
    check: bool,
    /// Also print the generator's warnings about the types of older releases of the range.
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let started = std::time::Instant::now();
    let fresh = source(&root, &args)?;
    let settings = Settings { floor: args.floor.clone(), ..Settings::codex()? };
    if args.check {
        return check(&root, fresh, &settings, started, args.verbose);
    }
    let archived = if args.replace { Archived::Replace } else { Archived::Keep };
    let plan = regen(&root, fresh, &settings, archived).map_err(|e| e.context("regen stopped; nothing was written"))?;
    print_summary(&plan.set, &plan.summary, started, args.verbose);
    Ok(())
}

/// The schema set a regen is asked for: `--stable` (with `--codex-version`), a release
/// `vendor-schemas/` holds (`--codex-version` alone), what the codex found prints, else `None`
/// (the vendored set).
fn source(root: &Path, args: &Args) -> anyhow::Result<Option<SchemaSet>> {
    let release = codex_app_codegen::history::is_version;
    if let Some(stable) = &args.stable {
        let Some(version) = args.codex_version.as_deref().filter(|v| release(v)) else {
            bail!(
                "regen --stable {}: name the codex release that printed it with `--codex-version VERSION` \
                 (`codex --version` of that binary, such as 0.171.0){}: the supported range, the manifest and \
                 the changelog are keyed by it",
                stable.display(),
                args.codex_version.as_deref().map(|v| format!("; `{v}` is not a release number")).unwrap_or_default()
            );
        };
        println!("regen: schema from {}", stable.display());
        return Ok(Some(SchemaSet::read(stable, args.experimental.as_deref(), version)?));
    }
    if let Some(version) = &args.codex_version {
        if !release(version) {
            bail!("regen --codex-version {version}: not a release number (such as 0.171.0)");
        }
        println!("regen: codex {version} as {VENDOR_DIR}/ holds it");
        return held(root, version).map(Some);
    }
    if let Some(codex) = codex::find(args.codex.as_deref()) {
        println!("regen: running {}", codex.display());
        return from_codex(&codex).map(Some);
    }
    println!("regen: no codex found (--codex, $CODEX_BIN, .codex-bin/, PATH); using {VENDOR_DIR}/");
    Ok(None)
}

/// The bundles of `version` as the workspace at `root` holds them (the vendored set, or a
/// release of the archive), as codex printed them.
pub fn held(root: &Path, version: &str) -> anyhow::Result<SchemaSet> {
    let vendored = vendor::read_vendored(&root.join(VENDOR_DIR)).map_err(anyhow::Error::msg)?;
    if vendored.codex_version == version {
        return Ok(vendored);
    }
    let archive = root.join(RELEASES_DIR);
    let release = releases::read(&archive, &vendored, version).map_err(anyhow::Error::msg)?;
    match release.into_iter().find(|(v, _)| v == version) {
        Some((_, Release::Bundles(set))) => releases::printed(&set).map_err(anyhow::Error::msg),
        Some((_, Release::Skipped(why))) => bail!("codex {version} has no bundles in {RELEASES_DIR} ({why})"),
        None => {
            let versions = releases::versions(&archive).map_err(anyhow::Error::msg)?;
            bail!(
                "codex {version} is neither vendored ({}) nor in {RELEASES_DIR} ({} to {}); \
                 regen from it with `--codex PATH` or `--stable DIR --codex-version {version}`",
                vendored.codex_version,
                versions.first().map_or("empty", String::as_str),
                versions.last().map_or("empty", String::as_str),
            )
        }
    }
}

/// Regenerates the workspace at `root` from `fresh` (vendoring it), or from the vendored set
/// when `fresh` is `None`: [`plan`], then [`Plan::apply`]. Writes nothing when planning fails
/// (a decision `settings` do not hold, a generator error, a changelog that cannot be made).
pub fn regen(root: &Path, fresh: Option<SchemaSet>, settings: &Settings, archived: Archived) -> anyhow::Result<Plan> {
    let plan = plan(root, fresh, settings, archived, Fold::IfStale)?;
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
    /// The changelog written to `CHANGES.md`, change by change.
    pub changelog: Option<codex_app_changelog::Report>,
}

/// What a regen may do to a release the archive already holds when the schema it is given has
/// that release's version and other bundles (a development or patched build).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Archived {
    /// Stop, and say so: nothing is written.
    #[default]
    Keep,
    /// The given bundles become that release's (`--replace`).
    Replace,
}

/// Whether a regen folds the range's history again when the committed one was folded from
/// the same inputs ([`crate::history::folded_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Take the committed history then: only the newest release is lowered.
    IfStale,
    /// Lower every release of the range (`--check`, which also checks the committed history).
    Always,
}

/// Computes a regen of the workspace at `root` without writing anything: reads the previously
/// vendored set and the archive of releases, generates every file with `settings` (a decision
/// they do not hold is an error with [`codex_app_codegen::decisions::Undecided::Fail`]:
/// [`codex_app_codegen::Error::missing_decisions`]), and, when `fresh` replaces the vendored
/// set, the vendored files, the archive that holds every release it held and `fresh`
/// ([`vendor`]), and the changelog of `fresh` from the release before it.
pub fn plan(
    root: &Path,
    mut fresh: Option<SchemaSet>,
    settings: &Settings,
    archived: Archived,
    fold: Fold,
) -> anyhow::Result<Plan> {
    let mut notes = Vec::new();
    let mut writes: Vec<(PathBuf, String)> = Vec::new();
    let mut removes = Vec::new();
    let mut changes_from = None;
    let floor = floor(root, settings)?;
    let vendored = vendor::read_vendored(&root.join(VENDOR_DIR)).ok();
    if let (Some(fresh_set), Some(vendored)) = (&fresh, &vendored) {
        if fresh_set == vendored {
            notes.push(format!(
                "schema unchanged since codex {}; {CHANGES_FILE} left as it is",
                fresh_set.codex_version
            ));
            fresh = None;
        }
    }
    // The releases of the archive as they read back (`None`: read only when a fold needs
    // them), and the archive's files of the range once the run is done.
    let (set, releases, range_files) = match fresh {
        None => {
            let set = vendored.ok_or_else(|| anyhow::anyhow!("{VENDOR_DIR}: no vendored schema"))?;
            let files = match &floor {
                Some(floor) => crate::history::range_files(root, floor, &set.codex_version)?,
                None => BTreeMap::new(),
            };
            (set, None, files)
        }
        Some(fresh) => {
            let vendored = vendor(root, &fresh, archived, &mut notes)?;
            let files = vendored
                .files
                .iter()
                .filter_map(|(path, text)| {
                    let version = path.strip_prefix(RELEASES_DIR).ok()?.to_str()?.strip_suffix(".json")?;
                    let in_range = floor
                        .as_deref()
                        .is_some_and(|floor| crate::history::in_range(version, floor, &fresh.codex_version));
                    in_range.then(|| (version.to_owned(), text.clone()))
                })
                .collect();
            writes.extend(vendored.files);
            removes.extend(vendored.removed);
            changes_from = vendored.changes_from;
            (fresh, Some(vendored.releases), files)
        }
    };
    let history = match &floor {
        Some(floor) => range_history(root, &set, floor, &range_files, releases, fold, &mut notes)?,
        None => None,
    };
    let with_history = match &history {
        Some((history, folded_from)) => {
            writes.push((PathBuf::from(HISTORY_FILE), history.to_json()));
            writes.push((PathBuf::from(RETIRED_FILE), crate::history::retired_json(history, folded_from)));
            Settings { history: Some(history.clone()), floor: None, ..settings.clone() }
        }
        None => settings.clone(),
    };
    let ir = codex_app_codegen::build_ir_with(&set, &with_history).map_err(anyhow::Error::new)?;
    let (files, summary) = generate_from_ir(&ir, &set, COMMAND, &with_history).map_err(anyhow::Error::new)?;

    let mut actions = Vec::new();
    for file in &files {
        write_if_changed(&mut actions, root, &file.path, &file.contents);
    }
    if let Some((history, _)) = &history {
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

    let (mut changes, mut changelog) = (None, None);
    if let Some(previous) = changes_from {
        let report = codex_app_changelog::diff_sets_with(&previous, &set, settings).map_err(|e| {
            anyhow::anyhow!(
                "cannot write the changelog from codex {} ({e}); nothing was written (vendoring without it would lose it)",
                previous.codex_version
            )
        })?;
        write_if_changed(&mut actions, root, &Path::new(VENDOR_DIR).join(CHANGES_FILE), &report.to_markdown());
        changes = Some((previous.codex_version, report.summary()));
        changelog = Some(report);
    }
    // The vendored files last, `manifest.json` (what marks the vendored set) at the very end.
    writes.sort_by_key(|(path, _)| path.ends_with(MANIFEST_FILE));
    for (path, text) in &writes {
        write_if_changed(&mut actions, root, path, text);
    }
    actions.extend(removes);
    Ok(Plan { set, summary, actions, notes, changes, changelog })
}

/// What vendoring a set changes: the files to write and remove, every release the workspace
/// then holds but the vendored one, and the release the changelog is written from.
struct Vendored {
    files: Vec<(PathBuf, String)>,
    removed: Vec<Action>,
    releases: Vec<(String, Release)>,
    changes_from: Option<SchemaSet>,
}

/// Vendoring `fresh` in the workspace at `root`: its bundles and manifest, and the archive
/// written again so that it holds every release it held and the one vendored before
/// ([`releases::write`]: the newest release anchors it, so vendoring an older one loses
/// nothing, and vendoring the newest again gives the committed files). A release the archive
/// holds with other bundles than `fresh` (same version) is replaced only with
/// [`Archived::Replace`]. The changelog is from the newest release older than `fresh`.
fn vendor(root: &Path, fresh: &SchemaSet, archived: Archived, notes: &mut Vec<String>) -> anyhow::Result<Vendored> {
    let vendor_dir = root.join(VENDOR_DIR);
    let archive_dir = root.join(RELEASES_DIR);
    let on_disk = releases::versions(&archive_dir).map_err(anyhow::Error::msg)?;
    let mut held: Vec<(String, Release)> = match vendor::read_vendored(&vendor_dir) {
        Ok(previous) => {
            let mut held = releases::read(&archive_dir, &previous, "0.0.0").map_err(anyhow::Error::msg)?;
            held.push((previous.codex_version.clone(), Release::Bundles(previous)));
            held
        }
        Err(e) if on_disk.is_empty() => {
            notes.push(format!("no previous vendored schema ({e}); {CHANGES_FILE} not written"));
            Vec::new()
        }
        Err(e) => bail!("{e}; the archive of releases ({RELEASES_DIR}) is read from the vendored set"),
    };
    let version = &fresh.codex_version;
    match held.iter().position(|(v, _)| v == version) {
        Some(i) => {
            if let Release::Bundles(old) = &held[i].1 {
                if releases::same_bundles(old, fresh) {
                    notes.push(format!("codex {version}: the bundles {VENDOR_DIR}/ holds for it"));
                } else if archived == Archived::Keep {
                    bail!(
                        "codex {version} prints other bundles than the codex {version} that {VENDOR_DIR}/ holds \
                         (a development or patched build?): regen from the released codex {version}, or pass \
                         `--replace` to make these its bundles (every other release is kept)"
                    );
                } else {
                    notes.push(format!("codex {version}: its bundles replaced by the ones given (--replace)"));
                }
            }
            held[i].1 = Release::Bundles(fresh.clone());
        }
        None => held.push((version.clone(), Release::Bundles(fresh.clone()))),
    }
    held.sort_by(|a, b| version_cmp(&a.0, &b.0));
    let files = releases::write(&archive_dir, &held, fresh).map_err(anyhow::Error::msg)?;
    let mut removed: Vec<Action> = on_disk
        .iter()
        .map(|v| Path::new(RELEASES_DIR).join(format!("{v}.json")))
        .filter(|path| !files.iter().any(|(p, _)| p == path))
        .map(Action::Remove)
        .collect();
    let mut out: Vec<(PathBuf, String)> = files;
    for (folder, text) in [("stable", Some(&fresh.stable)), ("experimental", fresh.experimental.as_ref())] {
        let path = Path::new(VENDOR_DIR).join(folder);
        match text {
            Some(text) => out.push((path.join(BUNDLE_FILE), text.clone())),
            None if root.join(&path).exists() => removed.push(Action::RemoveDir(path)),
            None => {}
        }
    }
    out.push((Path::new(VENDOR_DIR).join(MANIFEST_FILE), Manifest::for_set(fresh).to_json()));
    let unchanged = vendor::read_vendored(&vendor_dir).is_ok_and(|v| v == *fresh);
    let changes_from = if unchanged {
        notes.push(format!("schema unchanged since codex {version}; {CHANGES_FILE} left as it is"));
        None
    } else {
        held.iter().rev().filter(|(v, _)| version_cmp(v, version).is_lt()).find_map(|(_, r)| match r {
            Release::Bundles(set) => Some(set.clone()),
            Release::Skipped(_) => None,
        })
    };
    held.retain(|(v, _)| v != version);
    Ok(Vendored { files: out, removed, releases: held, changes_from })
}

/// Every release from `from` on that the archive at `root` holds but `vendored`'s, read back
/// with it.
fn archive(root: &Path, vendored: &SchemaSet, from: &str) -> anyhow::Result<Vec<(String, Release)>> {
    releases::read(&root.join(RELEASES_DIR), vendored, from).map_err(anyhow::Error::msg)
}

/// The floor of the supported range: `--floor`, else the committed history's; `None` for a
/// workspace without a history.
fn floor(root: &Path, settings: &Settings) -> anyhow::Result<Option<String>> {
    Ok(settings.floor.clone().or(crate::history::read_committed(root)?.map(|h| h.floor)))
}

/// The surface history of the supported range, from `floor` to `set`, with the digest of what
/// it is folded from ([`crate::history::folded_from`], of the archive's `files` of the range):
/// the committed one when it was folded from the same (and `fold` allows it), else folded from
/// `releases` (read back from the archive at `root` when `None`). `None` for a set older than
/// the floor, which is generated alone.
fn range_history(
    root: &Path,
    set: &SchemaSet,
    floor: &str,
    files: &BTreeMap<String, String>,
    releases: Option<Vec<(String, Release)>>,
    fold: Fold,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<(History, String)>> {
    if version_cmp(&set.codex_version, floor).is_lt() {
        notes.push(format!(
            "codex {} is older than the floor of the supported range ({floor}): generated from it alone",
            set.codex_version
        ));
        return Ok(None);
    }
    let folded_from = crate::history::folded_from(floor, set, files)?;
    if fold == Fold::IfStale {
        if let Some(history) = crate::history::committed_if_current(root, &folded_from)? {
            return Ok(Some((history, folded_from)));
        }
        notes.push(format!(
            "{HISTORY_FILE} folded again from the releases of the range (what it was folded from changed: a \
             release, the floor or the generator)"
        ));
    }
    let releases = match releases {
        Some(releases) => releases,
        // Only the range is read back: the older releases are not asked for.
        None => archive(root, set, floor)?,
    };
    Ok(Some((crate::history::build(&releases, set, floor)?, folded_from)))
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
    let floor = committed.floor;
    let files = crate::history::range_files(root, &floor, &set.codex_version)?;
    let Some((history, _)) = range_history(root, &set, &floor, &files, None, Fold::IfStale, &mut Vec::new())? else {
        bail!("the vendored codex {} is older than the floor of {HISTORY_FILE} ({floor})", set.codex_version);
    };
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
    verbose: bool,
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
    let plan = plan(root, None, settings, Archived::Keep, Fold::Always)?;
    stale.extend(plan.stale(root));
    print_summary(&set, &plan.summary, started, verbose);
    if !stale.is_empty() {
        for s in &stale {
            eprintln!("{s}");
        }
        bail!("generated code is stale; run `{COMMAND}` and commit the result");
    }
    println!("regen --check: up to date");
    Ok(())
}

/// The counts of a generated set, the time since `started`, and the generator's warnings about
/// the schema given (with `verbose`, also those about older releases of the range, which the
/// schema given cannot change).
pub fn print_summary(set: &SchemaSet, summary: &Summary, started: std::time::Instant, verbose: bool) {
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
    let (range, own): (Vec<_>, Vec<_>) = summary.warnings.iter().partition(|w| w.range);
    if !own.is_empty() {
        println!(
            "regen: {} construct(s) without a faithful Rust type (typed as they say; nothing is lost on the wire):",
            own.len()
        );
        for w in own {
            println!("  warning: {w}");
        }
    }
    if verbose && !range.is_empty() {
        println!("regen: {} note(s) on what older releases of the supported range had:", range.len());
        for w in range {
            println!("  note: {w}");
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

impl Plan {
    /// What the plan would change in the workspace at `root`, one entry per file: a written
    /// file's diff against the committed one, or that a file is not generated any more.
    fn stale(&self, root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for action in &self.actions {
            match action {
                Action::Write { path, contents } => out.extend(stale_diff(root, path, contents)),
                Action::Remove(path) | Action::RemoveDir(path) => {
                    out.push(format!("{} is not generated any more", path.display()))
                }
            }
        }
        out
    }
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
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use codex_app_codegen::decisions::Decisions;
    use serde_json::json;

    use super::*;

    /// For the tests written against the repository as committed, the newest release vendored
    /// (its range, history and archive): whether it is. After a regen from an older release
    /// (`--codex-version`) it is not, and such a test fails saying so, or, with
    /// `CODEX_APP_SKIP_PINNED_TESTS` set (to anything but empty or `0`), is skipped: this
    /// gives `false` and the test returns.
    pub(crate) fn the_newest_release_is_vendored() -> bool {
        let root = crate::root();
        let vendored = vendor::read_vendored(&root.join(VENDOR_DIR)).unwrap().codex_version;
        let held = releases::versions(&root.join(RELEASES_DIR)).unwrap();
        let Some(newest) =
            held.into_iter().filter(|v| version_cmp(v, &vendored).is_gt()).max_by(|a, b| version_cmp(a, b))
        else {
            return true;
        };
        assert!(
            codex_app_protocol::__test_support::skipping_pinned_tests(),
            "written for the repository with its newest release vendored, codex {newest}, not {vendored}: \
             `cargo xtask regen --codex-version {newest}`, or set CODEX_APP_SKIP_PINNED_TESTS=1 to skip it"
        );
        false
    }

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
        regen(dir.path(), Some(set("1.0.0", false)), &undecided(), Archived::Keep).unwrap();
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
        let err = regen(stopped.path(), Some(set("1.1.0", true)), &undecided(), Archived::Keep)
            .expect_err("two decisions are missing");
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
        regen(stopped.path(), Some(set("1.1.0", true)), &decided(), Archived::Keep).unwrap();
        let straight = workspace();
        regen(straight.path(), Some(set("1.1.0", true)), &decided(), Archived::Keep).unwrap();
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
        let again = plan(stopped.path(), Some(set("1.1.0", true)), &decided(), Archived::Keep, Fold::IfStale).unwrap();
        assert_eq!(again.actions, []);
        assert!(again.notes.iter().any(|n| n.contains("schema unchanged since codex 1.1.0")), "{:?}", again.notes);
    }

    /// The committed files are what a regen from the vendored set writes (rust-analyzer's
    /// sourcegen test): the generated code, the supported releases' table, and the range's
    /// history, taken as committed when it was folded from what the repository holds now
    /// (`retired.json`'s digest of the range's archive, the vendored set and the generator's
    /// sources), else folded again. `cargo xtask regen --check` (CI) folds it again in any case.
    #[test]
    fn the_committed_files_are_what_a_regen_writes() {
        let root = crate::root();
        let plan = plan(&root, None, &Settings::codex().unwrap(), Archived::Keep, Fold::IfStale).unwrap();
        let stale = plan.stale(&root);
        assert!(stale.is_empty(), "{}\nrun `{COMMAND}`", stale.join("\n"));
        // The history agrees with the vendored release's own surface, read apart from the fold:
        // every key it says the release has (no `until`) names an item of the release, and none it
        // says the release lacks does. (What it lacks is not always in the range's types: a value
        // of an enum that became a string, a member of a struct that became a union, has no place
        // there; the history keeps it, the availability tables do not.)
        let set = vendor::read_vendored(&root.join(VENDOR_DIR)).unwrap();
        let history = crate::history::read_committed(&root).unwrap().expect("a committed history");
        let plain = Settings::codex().unwrap().proposing();
        let ir = codex_app_codegen::build_ir_with(&set, &plain).unwrap();
        let newest: std::collections::BTreeSet<_> =
            codex_app_codegen::history::listing(&ir).into_iter().map(|listed| listed.key).collect();
        let disagree: Vec<String> = history
            .items
            .iter()
            .filter(|(key, a)| a.availability.until.is_some() == newest.contains(*key))
            .map(|(key, a)| format!("{key} ({a:?})"))
            .collect();
        assert!(
            history.items.len() > 100 && disagree.is_empty(),
            "of {} keys of the history, these disagree with the vendored release's surface: {disagree:?}",
            history.items.len()
        );
    }

    #[test]
    fn a_generator_error_writes_nothing() {
        let root = workspace();
        let before = files(root.path());
        let mut broken = set("1.1.0", false);
        // Not valid JSON Schema (regen takes every valid construct): a `$ref` to nothing.
        broken.stable = broken.stable.replacen("#/definitions/GadgetGetParams", "#/definitions/NoSuchType", 1);
        let err = regen(root.path(), Some(broken), &decided(), Archived::Keep).expect_err("a dangling `$ref`");
        assert!(err.to_string().contains("NoSuchType"), "{err}");
        assert_eq!(changed(&before, &files(root.path())), Vec::<PathBuf>::new(), "a failed run changed these files");
    }

    /// A workspace whose `vendor-schemas/` is a copy of the repository's (its archive of
    /// releases included) without the history, so that a regen lowers only what it vendors.
    fn repository_copy() -> tempfile::TempDir {
        fn copy(from: &Path, to: &Path) {
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let path = entry.unwrap().path();
                let target = to.join(path.file_name().unwrap());
                if path.is_dir() {
                    copy(&path, &target);
                } else {
                    std::fs::copy(&path, &target).unwrap();
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        copy(&crate::root().join(VENDOR_DIR), &dir.path().join(VENDOR_DIR));
        std::fs::remove_file(dir.path().join(HISTORY_FILE)).unwrap();
        std::fs::create_dir_all(dir.path().join(codex_app_codegen::GENERATED_DIR)).unwrap();
        dir
    }

    /// Every release `root` holds, each with the sha256 of its bundles as compact JSON (the
    /// archive reads its releases back as compact JSON; the vendored set is printed).
    fn held_releases(root: &Path) -> BTreeMap<String, Option<(String, Option<String>)>> {
        let vendored = vendor::read_vendored(&root.join(VENDOR_DIR)).unwrap();
        let mut all = releases::read(&root.join(RELEASES_DIR), &vendored, "0.0.0").unwrap();
        let compact = |t: &str| t.parse::<serde_json::Value>().unwrap().to_string();
        let vendored = SchemaSet {
            stable: compact(&vendored.stable),
            experimental: vendored.experimental.as_deref().map(compact),
            ..vendored
        };
        all.push((vendored.codex_version.clone(), Release::Bundles(vendored)));
        let sha = |text: &str| codex_app_codegen::vendor::sha256_hex(text.as_bytes());
        all.into_iter()
            .map(|(v, r)| {
                let sums = match r {
                    Release::Bundles(set) => Some((sha(&set.stable), set.experimental.as_deref().map(sha))),
                    Release::Skipped(_) => None,
                };
                (v, sums)
            })
            .collect()
    }

    /// `root`'s vendored set with one member more in `ThreadArchiveParams` (as a patched build
    /// of that release would print it).
    fn with_one_member_more(set: &SchemaSet) -> SchemaSet {
        let mut stable: serde_json::Value = serde_json::from_str(&set.stable).unwrap();
        let params = stable.pointer_mut("/definitions/v2/ThreadArchiveParams/properties").expect("a params type");
        params["reason"] = json!({"type": "string"});
        SchemaSet { stable: serde_json::to_string_pretty(&stable).unwrap(), ..set.clone() }
    }

    #[test]
    fn a_regen_from_an_older_release_and_back_loses_nothing_and_gives_the_same_files() {
        if !the_newest_release_is_vendored() {
            return;
        }
        let root = repository_copy();
        let newest = vendored_version(root.path()).unwrap();
        let settings = Settings::codex().unwrap();
        // The files as a regen from the vendored set leaves them.
        regen(root.path(), None, &settings, Archived::Keep).unwrap();
        let committed = files(root.path());
        let releases = held_releases(root.path());

        // An older release (read from the archive, as a codex of it would print it) vendored:
        // every release is still there, the newest one included.
        let older = held(root.path(), "0.140.0").unwrap();
        assert_ne!(older.codex_version, newest);
        regen(root.path(), Some(older), &settings, Archived::Keep).unwrap();
        assert_eq!(vendored_version(root.path()).unwrap(), "0.140.0");
        assert_eq!(held_releases(root.path()), releases, "the releases held changed");
        let archived_newest = root.path().join(RELEASES_DIR).join(format!("{newest}.json"));
        assert!(archived_newest.exists(), "the newest release is not in the archive");

        // Back to the newest, from the repository alone: the files as they were.
        let back = held(root.path(), &newest).unwrap();
        regen(root.path(), Some(back), &settings, Archived::Keep).unwrap();
        assert_eq!(changed(&committed, &files(root.path())), Vec::<PathBuf>::new(), "not the files committed");
    }

    #[test]
    fn the_history_is_folded_again_only_when_what_it_was_folded_from_changed() {
        if !the_newest_release_is_vendored() {
            return;
        }
        let root = repository_copy();
        std::fs::copy(crate::root().join(HISTORY_FILE), root.path().join(HISTORY_FILE)).unwrap();
        let folded = |plan: &Plan| plan.notes.iter().any(|n| n.contains("folded again"));
        // A floor near the newest release, so that a fold lowers a few releases.
        let near = Settings { floor: Some("0.169.0".to_owned()), ..Settings::codex().unwrap() };
        let moved = regen(root.path(), None, &near, Archived::Keep).unwrap();
        assert!(folded(&moved), "the floor moved: {:?}", moved.notes);

        let settings = Settings::codex().unwrap();
        let again = plan(root.path(), None, &settings, Archived::Keep, Fold::IfStale).unwrap();
        assert!(!folded(&again), "{:?}", again.notes);
        assert_eq!(again.actions, [], "what the committed history gives is what was written");
        let full = plan(root.path(), None, &settings, Archived::Keep, Fold::Always).unwrap();
        assert_eq!(full.actions, [], "the committed history is what a fold gives");

        // Folded from something else (another generator): folded again, and rewritten.
        let retired = root.path().join(RETIRED_FILE);
        let text = std::fs::read_to_string(&retired).unwrap();
        let digest = text.lines().nth(1).unwrap().to_owned();
        std::fs::write(&retired, text.replacen(&digest, "  \"folded_from\": \"another generator\",", 1)).unwrap();
        let stale = plan(root.path(), None, &settings, Archived::Keep, Fold::IfStale).unwrap();
        assert!(folded(&stale), "{:?}", stale.notes);
        assert_eq!(stale.actions, [Action::Write { path: PathBuf::from(RETIRED_FILE), contents: text }]);
    }

    #[test]
    fn a_held_release_with_other_bundles_stops_with_one_sentence_unless_replaced() {
        let root = repository_copy();
        let settings = Settings::codex().unwrap();
        let before = files(root.path());
        let releases = held_releases(root.path());
        for version in [vendored_version(root.path()).unwrap(), "0.140.0".to_owned()] {
            let patched = with_one_member_more(&held(root.path(), &version).unwrap());
            let err = regen(root.path(), Some(patched), &settings, Archived::Keep).expect_err("other bundles");
            let text = format!("{err:#}");
            assert!(text.contains(&format!("prints other bundles than the codex {version} that")), "{text}");
            assert!(text.contains("--replace"), "{text}");
            assert_eq!(text.lines().count(), 1, "{text}");
            assert_eq!(changed(&before, &files(root.path())), Vec::<PathBuf>::new(), "a stopped regen wrote files");
        }

        // Asked for, the patched bundles become the release's; every other release is kept.
        let version = vendored_version(root.path()).unwrap();
        let patched = with_one_member_more(&held(root.path(), &version).unwrap());
        regen(root.path(), Some(patched.clone()), &settings, Archived::Replace).unwrap();
        let after = held_releases(root.path());
        assert_eq!(after.keys().collect::<Vec<_>>(), releases.keys().collect::<Vec<_>>());
        let differ: Vec<&String> = after.keys().filter(|v| after[*v] != releases[*v]).collect();
        assert_eq!(differ, [&version]);
        assert!(releases::same_bundles(&held(root.path(), &version).unwrap(), &patched));
    }
}
