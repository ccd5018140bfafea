//! `cargo xtask upgrade`, built with the feature `upgrade` (it parses the workspace's Rust
//! with line numbers). Run through `cargo xtask upgrade`, which builds this binary.

use clap::{Parser, Subcommand};
use xtask::upgrade;

#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about = "codex-app-protocol automation: the codex upgrade")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The whole codex upgrade: install VERSION (default: the latest on npm), regen, record,
    /// drift, the tests an upgrade changes; then a report of what needs a person.
    Upgrade(upgrade::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Upgrade(args) => upgrade::run(args),
    }
}
