//! `cargo xtask history`: adds to the archive of every release's schema bundles
//! (`vendor-schemas/releases/`, see `codex_app_codegen::releases`) the published releases it
//! lacks; and [`build`]: the surface history of the supported range
//! (`codex_app_codegen::history`), folded from that archive and the vendored set, which regen
//! does whenever what it is folded from changed ([`folded_from`]), so `vendor-schemas/history.json`
//! is what the repository's inputs give (`regen --check` folds every time and says when it is
//! not).
//!
//! Every version `npm view @openai/codex versions` lists (without the platform-suffixed
//! packages, pre-releases included) from `--from` to the vendored release that the archive
//! lacks is installed once, its two schema bundles kept in a cache (`.codex-bin/history/VERSION/`,
//! git-ignored) and the install deleted. A rerun installs only what the cache lacks, so an
//! interrupted run resumes. A release that cannot be installed or whose binary does not run
//! (some publish no Linux binary) is named and kept in the archive as skipped, with why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use std::collections::BTreeMap;

use codex_app_codegen::history::{version_cmp, History, RetiredFile, HISTORY_FILE, RETIRED_FILE};
use codex_app_codegen::releases::{self, Release, RELEASES_DIR};
use codex_app_codegen::{SchemaSet, Settings, BUNDLE_FILE};

use crate::codex;

/// Where the bundles of each release are kept between runs, relative to the workspace root.
pub const CACHE_DIR: &str = ".codex-bin/history";

/// The oldest release the archive starts at when it is empty (the oldest the generator reads).
pub const DEFAULT_FROM: &str = "0.60.1";

#[derive(clap::Args)]
pub struct Args {
    /// The oldest release to add (default: the archive's oldest, else 0.60.1).
    #[arg(long)]
    from: Option<String>,
    /// Installs at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Use only what the cache holds; install nothing (the release list comes from the cache).
    #[arg(long)]
    offline: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let started = Instant::now();
    let newest =
        codex_app_codegen::vendor::read_vendored(&root.join(crate::regen::VENDOR_DIR)).map_err(anyhow::Error::msg)?;
    let archive_dir = root.join(RELEASES_DIR);
    let archived = releases::versions(&archive_dir).map_err(anyhow::Error::msg)?;
    let from = args.from.clone().or_else(|| archived.first().cloned()).unwrap_or_else(|| DEFAULT_FROM.to_owned());
    let cache = root.join(CACHE_DIR);
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let listed = if args.offline { cached_versions(&cache)? } else { published_versions()? };
    let missing: Vec<String> = listed
        .into_iter()
        .filter(|v| version_cmp(v, &from).is_ge() && version_cmp(v, &newest.codex_version).is_lt())
        .filter(|v| !archived.contains(v))
        .collect();
    if missing.is_empty() {
        println!("history: the archive has every release from {from} to {} ({RELEASES_DIR})", newest.codex_version);
        return Ok(());
    }
    println!("history: {} release(s) from {from} on are not in the archive", missing.len());
    if !args.offline {
        fetch_all(&cache, &missing, args.jobs.max(1))?;
    }
    let mut all = releases::read(&archive_dir, &newest, "0.0.0").map_err(anyhow::Error::msg)?;
    for version in &missing {
        let release = match load(&cache, version) {
            Fetched::Bundles(set) => Release::Bundles(set),
            Fetched::Skipped(why) => {
                println!("history: warning: codex {version} skipped: {why}");
                Release::Skipped(why)
            }
        };
        all.push((version.clone(), release));
    }
    let files = releases::write(&archive_dir, &all, &newest).map_err(anyhow::Error::msg)?;
    let mut written = 0;
    for (path, text) in files {
        let full = root.join(&path);
        if std::fs::read_to_string(&full).ok().as_deref() != Some(text.as_str()) {
            std::fs::create_dir_all(full.parent().expect("a file of a folder"))?;
            std::fs::write(&full, text).with_context(|| full.display().to_string())?;
            written += 1;
        }
    }
    println!(
        "history: {written} file(s) of {RELEASES_DIR} written in {:.0?}; `cargo xtask regen` folds them into {HISTORY_FILE}",
        started.elapsed()
    );
    Ok(())
}

/// The history of the range from `floor` to `newest` (the set the code is generated from),
/// from `releases` (the archive's, and any it does not hold yet): [`releases::history`].
pub fn build(releases: &[(String, Release)], newest: &SchemaSet, floor: &str) -> anyhow::Result<History> {
    let settings = Settings::codex()?.proposing();
    releases::history(releases, newest, floor, &settings).map_err(anyhow::Error::msg)
}

/// Whether `version` is a release of the range from `floor` to `newest`, `newest` left out (the
/// releases whose archive files the range's history is folded from).
pub fn in_range(version: &str, floor: &str, newest: &str) -> bool {
    version_cmp(version, floor).is_ge() && version_cmp(version, newest).is_lt()
}

/// The archive's files of the range from `floor` to `newest` (not included), by version, as
/// the workspace at `root` holds them.
pub fn range_files(root: &Path, floor: &str, newest: &str) -> anyhow::Result<BTreeMap<String, String>> {
    let dir = root.join(RELEASES_DIR);
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| dir.display().to_string()),
    };
    for entry in entries {
        let path = entry?.path();
        let Some(version) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        if in_range(version, floor, newest) {
            let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
            out.insert(version.to_owned(), text);
        }
    }
    Ok(out)
}

/// What the range's history is folded from, as one sha256: the floor, the newest release's
/// bundles, the archive's `files` of the range ([`range_files`]) and the generator that folds
/// them (the sources this program was built from and the decisions it compiles in), so that a
/// history folded from other releases or by another generator is never taken for this one's.
pub fn folded_from(floor: &str, newest: &SchemaSet, files: &BTreeMap<String, String>) -> anyhow::Result<String> {
    let root = crate::root();
    let mut input = String::new();
    let mut part = |name: &str, text: &str| {
        // Length-prefixed, and with the line ends of any checkout.
        let text = text.replace("\r\n", "\n");
        input.push_str(&format!("{name} {}\n{text}\n", text.len()));
    };
    part("floor", floor);
    part(&format!("codex {}", newest.codex_version), &newest.stable);
    part("experimental", newest.experimental.as_deref().unwrap_or_default());
    for (version, text) in files {
        part(version, text);
    }
    let mut sources = Vec::new();
    collect_files(&root.join("codegen/src"), &mut sources)?;
    sources.extend(codex_app_codegen::SHARED_SOURCES.iter().map(|path| root.join(path)));
    sources.push(root.join("codegen/Cargo.toml"));
    sources.push(root.join(codex_app_codegen::decisions::DECISIONS_FILE));
    for path in sources {
        let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        let name = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        part(&name, &text);
    }
    Ok(codex_app_codegen::vendor::sha256_hex(input.as_bytes()))
}

/// Every file under `dir`, sorted.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| dir.display().to_string())?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The committed history with what it retired, when both were folded from `folded_from`
/// ([`folded_from`]); `None` when either file is missing or was folded from something else.
pub fn committed_if_current(root: &Path, folded_from: &str) -> anyhow::Result<Option<History>> {
    let Some(history) = read_committed(root)? else { return Ok(None) };
    let path = root.join(RETIRED_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    // A file that does not read is folded again, not an error: the fold rewrites it.
    let Ok(file) = serde_json::from_str::<RetiredFile>(&text) else { return Ok(None) };
    Ok(history.with_retired(file, folded_from))
}

/// [`RETIRED_FILE`]'s text: `folded_from`, then one type or item per line, sorted, so a review
/// reads the diff.
pub fn retired_json(history: &History, folded_from: &str) -> String {
    fn line<T: serde::Serialize + ?Sized>(v: &T) -> String {
        serde_json::to_string(v).expect("IR values serialize")
    }
    use codex_app_codegen::history::push_lines;
    let mut out = format!("{{\n  \"folded_from\": {},\n  \"types\": {{\n", line(folded_from));
    push_lines(&mut out, history.retired_types.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
    out.push_str("  },\n  \"items\": {\n");
    push_lines(&mut out, history.retired.iter().map(|(k, v)| format!("{}: {}", line(k), line(v))));
    out.push_str("  }\n}\n");
    out
}

/// What one release gave.
enum Fetched {
    Bundles(SchemaSet),
    Skipped(String),
}

/// The committed history, for its floor.
pub fn read_committed(root: &Path) -> anyhow::Result<Option<History>> {
    let path = root.join(HISTORY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(History::from_json(&text)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// `npm view @openai/codex versions`, without the platform-suffixed packages.
pub fn published_versions() -> anyhow::Result<Vec<String>> {
    let out = Command::new("npm")
        .args(["view", "@openai/codex", "versions", "--json"])
        .output()
        .context("running `npm view @openai/codex versions --json` (is npm installed?)")?;
    if !out.status.success() {
        bail!("npm view @openai/codex versions failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let all: Vec<String> = serde_json::from_slice(&out.stdout).context("npm view printed no JSON list")?;
    Ok(all.into_iter().filter(|v| is_release(v)).collect())
}

/// A codex release, not a platform package (`0.171.0-linux-x64`); pre-releases count.
fn is_release(v: &str) -> bool {
    let platform = ["linux", "darwin", "win32", "windows", "x64", "arm64"];
    codex_app_codegen::history::pre_release(v)
        .is_some_and(|pre| !pre.split('.').any(|p| platform.iter().any(|w| p.contains(w))))
}

fn cached_versions(cache: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(cache)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if is_release(&name) {
            out.push(name);
        }
    }
    out.sort_by(|a, b| version_cmp(a, b));
    Ok(out)
}

fn fetch_all(cache: &Path, versions: &[String], jobs: usize) -> anyhow::Result<()> {
    let todo: Vec<&String> = versions.iter().filter(|v| !cache.join(v).join("done").exists()).collect();
    let total = todo.len();
    if total == 0 {
        println!("history: every release is in the cache ({})", cache.display());
        return Ok(());
    }
    println!("history: installing {total} release(s) not in the cache, {jobs} at a time");
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(version) = todo.get(i) else { return };
                let t = Instant::now();
                let result = fetch(cache, version);
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                let per = started.elapsed() / n as u32;
                let left = per * (total - n) as u32;
                match result {
                    Ok(status) => println!(
                        "history: [{n}/{total}] {version}: {status} ({:.0?}; about {} left)",
                        t.elapsed(),
                        minutes(left)
                    ),
                    Err(e) => {
                        *failure.lock().expect("no panics hold it") = Some(e);
                        return;
                    }
                }
            });
        }
    });
    match failure.into_inner().expect("no panics hold it") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn minutes(d: Duration) -> String {
    format!("{}:{:02}", d.as_secs() / 60, d.as_secs() % 60)
}

/// Installs one release into a scratch folder, keeps its bundles (or why it has none) in the
/// cache, and deletes the install. An error only for what says the machine is wrong (npm
/// missing, the disk); a release that does not install or run is a skip, kept in the cache.
fn fetch(cache: &Path, version: &str) -> anyhow::Result<&'static str> {
    let dir = cache.join(version);
    // Outside the workspace: Node resolves a package's missing platform binary from any
    // parent `node_modules`, and `.codex-bin/` holds the pinned release's.
    let scratch = std::env::temp_dir().join(format!("codex-history-{}-{version}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&scratch)?;
    std::fs::create_dir_all(&dir)?;
    let outcome = install_and_print(&scratch, &dir, version);
    let _ = std::fs::remove_dir_all(&scratch);
    let status = match outcome {
        Ok(()) => "bundles kept",
        Err(why) => {
            std::fs::write(dir.join("skipped"), format!("{why:#}"))?;
            "skipped"
        }
    };
    std::fs::write(dir.join("done"), "")?;
    Ok(status)
}

fn install_and_print(scratch: &Path, dir: &Path, version: &str) -> anyhow::Result<()> {
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(scratch)
        .arg(format!("@openai/codex@{version}"))
        .output()
        .context("running npm install (is npm installed?)")?;
    if !out.status.success() {
        bail!("npm install failed: {}", last_line(&out.stderr));
    }
    let bin: PathBuf = scratch.join("node_modules/.bin/codex");
    let got = codex::version(&bin).map_err(|e| anyhow::anyhow!("the binary does not run: {}", one_line(&e)))?;
    if got != version {
        bail!("`codex --version` reports {got}, not {version}: not this release's binary");
    }
    for (sub, experimental) in [("stable", false), ("experimental", true)] {
        let out = scratch.join(sub);
        std::fs::create_dir_all(&out)?;
        if codex::generate_schema(&bin, &out, experimental)? {
            std::fs::create_dir_all(dir.join(sub))?;
            std::fs::copy(out.join(BUNDLE_FILE), dir.join(sub).join(BUNDLE_FILE))?;
        }
    }
    Ok(())
}

/// The line of an error that says what went wrong (`Error: Missing optional dependency ...`).
fn one_line(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.iter().find(|l| l.starts_with("Error:")).or(lines.last()).map(|l| (*l).to_owned()).unwrap_or_default()
}

fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_owned()
}

fn load(cache: &Path, version: &str) -> Fetched {
    let dir = cache.join(version);
    if let Ok(why) = std::fs::read_to_string(dir.join("skipped")) {
        return Fetched::Skipped(why.lines().last().unwrap_or_default().to_owned());
    }
    match SchemaSet::read_dir(&dir, version) {
        Ok(set) => Fetched::Bundles(set),
        Err(e) => Fetched::Skipped(format!("no schema in the cache: {e}")),
    }
}
