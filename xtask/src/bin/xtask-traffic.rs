//! The traffic commands of `cargo xtask` (`record`, `drift`, `bench`), built with the
//! generated protocol crate. Run through `cargo xtask <command>`, which builds this binary.

use clap::{Parser, Subcommand};
use xtask::{bench, drift, record};

/// `cargo xtask bench --mimalloc` (feature `mimalloc`): the benchmarks with mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "codex-app-protocol automation: the commands that decode traffic"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Record real app-server traffic into traffic/fixtures/VERSION/SCENARIO.ndjson.
    Record(record::Args),
    /// Check recorded traffic against the typed crate; exits non-zero on drift.
    Drift(drift::Args),
    /// Typed decode/encode of recorded server traffic against serde_json::Value, &RawValue
    /// and (--peer) codex-codes.
    Bench(bench::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Record(args) => record::run(args),
        Command::Drift(args) => drift::run(args),
        Command::Bench(args) => bench::run(args),
    }
}
