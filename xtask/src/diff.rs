//! `cargo xtask diff OLD NEW`: the protocol changelog between two schema sets.
//!
//! OLD and NEW are folders laid out like `vendor-schemas/`: `stable/` and optional
//! `experimental/` output of `codex app-server generate-json-schema`. The codex version is the
//! `codex_version` of the folder's `manifest.json`, else the folder's name. The rules that mark
//! a change breaking are in `codex_app_changelog`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use codex_app_codegen::vendor::{Manifest, MANIFEST_FILE};
use codex_app_codegen::SchemaSet;

#[derive(clap::Args)]
pub struct Args {
    /// The older schema set.
    old: PathBuf,
    /// The newer schema set.
    new: PathBuf,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let old = read_set(&args.old)?;
    let new = read_set(&args.new)?;
    let report = codex_app_changelog::diff_sets(&old, &new).map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        print!("{}", report.to_json());
    } else {
        print!("{}", report.to_markdown());
    }
    Ok(())
}

/// Reads a schema set folder; its version comes from `manifest.json` or the folder's name.
pub fn read_set(dir: &Path) -> anyhow::Result<SchemaSet> {
    let manifest = dir.join(MANIFEST_FILE);
    let version = if manifest.exists() {
        let text = std::fs::read_to_string(&manifest).with_context(|| manifest.display().to_string())?;
        let m: Manifest = serde_json::from_str(&text).with_context(|| manifest.display().to_string())?;
        m.codex_version
    } else {
        let dir = dir.canonicalize().with_context(|| dir.display().to_string())?;
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "unknown".to_owned())
    };
    Ok(SchemaSet::read_dir(dir, &version)?)
}
