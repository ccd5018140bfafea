//! `cargo xtask <command>`. `regen`, `diff`, `build-times`, `history` and `availability` run
//! here; `record`, `drift` and `bench` run in `xtask-traffic`, `upgrade` in `xtask-upgrade`
//! (see the library docs).

use clap::{Parser, Subcommand};
use xtask::forward::{forward, Forwarded};
use xtask::{availability, build_times, diff, history, regen};

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
    /// Clean rebuild and check times of the protocol crate, dependencies prebuilt.
    BuildTimes(build_times::Args),
    /// Record real app-server traffic into traffic/fixtures/VERSION/SCENARIO.ndjson
    /// (`cargo xtask record --help` for its options).
    Record(Forwarded),
    /// Check recorded traffic against the typed crate; exits non-zero on drift
    /// (`cargo xtask drift --help`).
    Drift(Forwarded),
    /// Typed decode/encode of recorded server traffic against serde_json::Value, &RawValue
    /// and (--peer) codex-codes (`cargo xtask bench --help`).
    Bench(Forwarded),
    /// The protocol surface of every codex release of the supported range, into
    /// vendor-schemas/history.json (installs each release once; cached, resumable).
    History(history::Args),
    /// When each method, member, enum value and union arm came and went (--json: methods and members).
    Availability(availability::Args),
    /// The whole codex upgrade: install VERSION (default: the latest on npm), regen, record,
    /// drift, the tests an upgrade changes; then a report of what needs a person.
    /// (`cargo xtask upgrade --help` for its options)
    Upgrade(Forwarded),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Regen(args) => regen::run(args),
        Command::Diff(args) => diff::run(args),
        Command::BuildTimes(args) => build_times::run(args),
        Command::Record(args) => forward("record", args),
        Command::Drift(args) => forward("drift", args),
        Command::Bench(args) => forward("bench", args),
        Command::Upgrade(args) => forward("upgrade", args),
        Command::History(args) => history::run(args),
        Command::Availability(args) => availability::run(args),
    }
}
