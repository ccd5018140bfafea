//! Project automation: `cargo xtask <command>`. One module per command.

mod codex;
mod diff;
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
    /// The protocol changelog between two schema sets (Markdown, or --json).
    Diff(diff::Args),
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is in the workspace").to_owned()
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Regen(args) => regen::run(args),
        Command::Diff(args) => diff::run(args),
    }
}
