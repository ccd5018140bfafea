//! `cargo xtask regen`: vendor the schema codex prints and regenerate the protocol crate.
//!
//! When it replaces the vendored schema, it also writes `vendor-schemas/CHANGES.md`: the
//! protocol changelog from the previously vendored release (see `cargo xtask diff`). So
//! CHANGES.md always describes the last upgrade; `--check` does not look at it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use codex_app_codegen::vendor::{self, Manifest, MANIFEST_FILE};
use codex_app_codegen::{SchemaSet, BUNDLE_FILE};

use crate::codex;

/// The command every generated file's header names.
pub const COMMAND: &str = "cargo xtask regen";

/// The changelog of the last upgrade, next to the vendored schema.
pub const CHANGES_FILE: &str = "CHANGES.md";

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
    /// The codex version that printed `--stable` (for the manifest and file headers).
    #[arg(long, requires = "stable", default_value = "unknown")]
    codex_version: String,
    /// Write nothing; fail with a diff if the committed files are not what the vendored
    /// schema gives (or, when a codex is found, if the vendored schema is not what it prints).
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let vendor_dir = root.join("vendor-schemas");
    let started = std::time::Instant::now();

    let fresh = if let Some(stable) = &args.stable {
        println!("regen: schema from {}", stable.display());
        Some(SchemaSet::read(stable, args.experimental.as_deref(), &args.codex_version)?)
    } else if let Some(codex) = codex::find(args.codex.as_deref()) {
        println!("regen: running {}", codex.display());
        Some(from_codex(&codex)?)
    } else {
        println!("regen: no codex found (--codex, $CODEX_BIN, .codex-bin/, PATH); using vendor-schemas/");
        None
    };

    let mut stale = Vec::new();
    let set = match fresh {
        Some(set) if args.check => {
            let vendored = vendor::read_vendored(&vendor_dir).map_err(anyhow::Error::msg)?;
            if vendored.stable != set.stable || vendored.experimental != set.experimental {
                stale.push(format!(
                    "vendor-schemas/ holds codex {} but codex {} prints a different schema",
                    vendored.codex_version, set.codex_version
                ));
            }
            vendored
        }
        Some(set) => {
            let previous = vendor::read_vendored(&vendor_dir);
            write_vendored(&vendor_dir, &set)?;
            write_changes(&vendor_dir, previous, &set)?;
            set
        }
        None => vendor::read_vendored(&vendor_dir).map_err(anyhow::Error::msg)?,
    };

    let (files, summary) = codex_app_codegen::generate(&set, COMMAND).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut expected = Vec::new();
    for file in &files {
        let path = root.join(&file.path);
        expected.push(path.clone());
        if let Some(diff) = ensure_file_contents(&path, &file.contents, args.check)? {
            stale.push(diff);
        }
    }
    for dir in codex_app_codegen::GENERATED_DIRS {
        let generated_dir = root.join(dir);
        if args.check && !generated_dir.exists() {
            // Its files are reported stale above.
            continue;
        }
        for entry in std::fs::read_dir(&generated_dir).with_context(|| generated_dir.display().to_string())? {
            let path = entry?.path();
            if !expected.contains(&path) {
                if args.check {
                    stale.push(format!("{} is not generated any more", rel(&path)));
                } else {
                    std::fs::remove_file(&path)?;
                    println!("removed {}", rel(&path));
                }
            }
        }
    }

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
        println!("regen: {} construct(s) without a faithful Rust type (typed as they say; nothing is lost on the wire):", summary.warnings.len());
        for w in &summary.warnings {
            println!("  warning: {w}");
        }
    }
    if !stale.is_empty() {
        for s in &stale {
            eprintln!("{s}");
        }
        bail!("generated code is stale; run `{COMMAND}` and commit the result");
    }
    if args.check {
        println!("regen --check: up to date");
    }
    Ok(())
}

fn from_codex(codex: &Path) -> anyhow::Result<SchemaSet> {
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

/// Writes `CHANGES.md`: what changed since the previously vendored set. Leaves it alone when
/// the schema did not change, or when there was no readable previous set.
fn write_changes(dir: &Path, previous: Result<SchemaSet, String>, set: &SchemaSet) -> anyhow::Result<()> {
    let previous = match previous {
        Ok(p) => p,
        Err(e) => {
            println!("regen: no previous vendored schema to compare with ({e}); {CHANGES_FILE} not written");
            return Ok(());
        }
    };
    if previous.stable == set.stable && previous.experimental == set.experimental {
        println!("regen: schema unchanged since codex {}; {CHANGES_FILE} left as it is", previous.codex_version);
        return Ok(());
    }
    match codex_app_codegen::diff::diff_sets(&previous, set) {
        Ok(report) => {
            std::fs::write(dir.join(CHANGES_FILE), report.to_markdown())?;
            println!("protocol changes since codex {}: {}", previous.codex_version, report.summary());
            println!("wrote vendor-schemas/{CHANGES_FILE}");
        }
        Err(e) => println!("regen: could not compare with codex {}: {e}; {CHANGES_FILE} not written", previous.codex_version),
    }
    Ok(())
}

fn tempdir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("xtask-regen-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Writes the bundles byte for byte and the manifest; removes an experimental bundle the new
/// set does not have.
fn write_vendored(dir: &Path, set: &SchemaSet) -> anyhow::Result<()> {
    for (folder, text) in [("stable", Some(&set.stable)), ("experimental", set.experimental.as_ref())] {
        let path = dir.join(folder).join(BUNDLE_FILE);
        match text {
            Some(text) => {
                std::fs::create_dir_all(path.parent().expect("has a parent"))?;
                std::fs::write(&path, text)?;
            }
            None if path.exists() => std::fs::remove_dir_all(dir.join(folder))?,
            None => {}
        }
    }
    std::fs::write(dir.join(MANIFEST_FILE), Manifest::for_set(set).to_json())?;
    println!("vendored codex {} into vendor-schemas/", set.codex_version);
    Ok(())
}

/// Writes `contents` to `path` if it differs; in check mode returns a readable diff instead.
pub fn ensure_file_contents(path: &Path, contents: &str, check: bool) -> anyhow::Result<Option<String>> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if old == contents {
        return Ok(None);
    }
    if !check {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        }
        std::fs::write(path, contents).with_context(|| path.display().to_string())?;
        println!("updated {}", rel(path));
        return Ok(None);
    }
    let diff = similar::TextDiff::from_lines(old.as_str(), contents);
    let mut text = format!("{} is stale:\n", rel(path));
    let unified = diff.unified_diff().context_radius(2).header("committed", "regenerated").to_string();
    const MAX_LINES: usize = 60;
    let lines: Vec<&str> = unified.lines().collect();
    text.push_str(&lines[..lines.len().min(MAX_LINES)].join("\n"));
    if lines.len() > MAX_LINES {
        text.push_str(&format!("\n... ({} more diff lines)", lines.len() - MAX_LINES));
    }
    Ok(Some(text))
}

fn rel(path: &Path) -> String {
    path.strip_prefix(crate::root()).unwrap_or(path).display().to_string()
}
