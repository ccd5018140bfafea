//! `cargo xtask drift FILE... [--from server|client]`: decode every line of recorded traffic
//! with the typed crate and report drift (see `codex_app_traffic::drift`).

use std::path::PathBuf;

use anyhow::bail;
use codex_app_traffic::{drift, Format, Side};

#[derive(clap::Args)]
pub struct Args {
    /// Transcripts (`{"dir","line"}` NDJSON), or plain NDJSON of one side with `--from`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The files are plain NDJSON written by this side (`server`: a saved server stdout).
    #[arg(long, value_name = "server|client")]
    from: Option<Side>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = match args.from {
        Some(side) => Format::OneSided(side),
        None => Format::Transcript,
    };
    let mut reports = Vec::new();
    for file in &args.files {
        match drift::check_file(file, format) {
            Ok(report) => reports.push((file.display().to_string(), report)),
            Err(e) => bail!("{}: {e}", file.display()),
        }
    }
    print!("{}", drift::render(&reports));
    let drift: usize = reports.iter().map(|(_, r)| r.drift_count()).sum();
    if drift > 0 {
        bail!("{drift} drift finding(s) in {} file(s)", reports.iter().filter(|(_, r)| r.drift_count() > 0).count());
    }
    Ok(())
}
