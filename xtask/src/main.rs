//! `cargo xtask <command>`. `regen`, `diff`, `build-times` and `upgrade` run here; `record`, `drift` and
//! `bench` need the generated protocol crate and run in `xtask-traffic` (see the library docs).

use clap::{Parser, Subcommand};
use xtask::{availability, build_times, diff, history, regen, traffic, upgrade};

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
    Record(traffic::Forwarded),
    /// Check recorded traffic against the typed crate; exits non-zero on drift
    /// (`cargo xtask drift --help`).
    Drift(traffic::Forwarded),
    /// Typed decode/encode of recorded server traffic against serde_json::Value, &RawValue
    /// and (--peer) codex-codes (`cargo xtask bench --help`).
    Bench(traffic::Forwarded),
    /// The protocol surface of every codex release of the supported range, into
    /// vendor-schemas/history.json (installs each release once; cached, resumable).
    History(history::Args),
    /// When each method, member, enum value and union arm came and went (--json: methods and members).
    Availability(availability::Args),
    /// The whole codex upgrade: install VERSION (default: the latest on npm), regen, record,
    /// drift, the tests an upgrade changes; then a report of what needs a person.
    Upgrade(upgrade::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Regen(args) => regen::run(args),
        Command::Diff(args) => diff::run(args),
        Command::BuildTimes(args) => build_times::run(args),
        Command::Record(args) => traffic::forward("record", args),
        Command::Drift(args) => traffic::forward("drift", args),
        Command::Bench(args) => traffic::forward("bench", args),
        Command::Upgrade(args) => upgrade::run(args),
        Command::History(args) => history::run(args),
        Command::Availability(args) => availability::run(args),
    }
}
