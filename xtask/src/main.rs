//! Project automation: `cargo xtask <command>`. One module per command.

#[cfg(feature = "traffic")]
mod bench;
mod build_times;
mod codex;
#[cfg(feature = "traffic")]
mod drift;
mod diff;
#[cfg(feature = "traffic")]
mod record;
mod regen;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "codex-app-protocol automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Vendor the codex schema and regenerate protocol/src/generated/.
    Regen(regen::Args),
    /// Record real app-server traffic into tests/fixtures/<codex version>/<scenario>.ndjson.
    #[cfg(feature = "traffic")]
    Record(record::Args),
    /// Check recorded traffic against the typed crate; exits non-zero on drift.
    #[cfg(feature = "traffic")]
    Drift(drift::Args),
    /// The protocol changelog between two schema sets (Markdown, or --json).
    Diff(diff::Args),
    /// Typed decode/encode of recorded server traffic against serde_json::Value, &RawValue
    /// and (--peer) codex-codes.
    #[cfg(feature = "traffic")]
    Bench(bench::Args),
    /// Clean rebuild and check times of the protocol crate, dependencies prebuilt.
    BuildTimes(build_times::Args),
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is in the workspace").to_owned()
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Regen(args) => regen::run(args),
        #[cfg(feature = "traffic")]
        Command::Record(args) => record::run(args),
        #[cfg(feature = "traffic")]
        Command::Drift(args) => drift::run(args),
        Command::Diff(args) => diff::run(args),
        #[cfg(feature = "traffic")]
        Command::Bench(args) => bench::run(args),
        Command::BuildTimes(args) => build_times::run(args),
    }
}
