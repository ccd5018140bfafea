//! Handing the traffic commands (`record`, `drift`, `bench`) from the light `xtask` binary to
//! `xtask-traffic`, which is built with the generated protocol crate.

use std::ffi::OsString;

use anyhow::{bail, Context as _};

/// The arguments of a forwarded command, passed on untouched (`--help` included).
#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

/// Runs `cargo run --release -p xtask --bin xtask-traffic -- <command> <args>` in the
/// workspace and fails when it fails. `bench --peer` builds it with `--features peer`,
/// `bench --mimalloc` with `--features mimalloc`.
///
/// This compiles the protocol crate when it changed (after a regen); if the generated code
/// does not compile, the error says so and `cargo xtask regen` still works.
pub fn forward(command: &str, forwarded: Forwarded) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(crate::root()).args(["run", "--release", "--quiet", "--package", "xtask", "--bin", "xtask-traffic"]);
    if command == "bench" {
        // Each bench flag that needs a feature of xtask-traffic.
        let mut features = vec!["client-bench"];
        for (flag, feature) in [("--peer", "peer"), ("--mimalloc", "mimalloc")] {
            if forwarded.args.iter().any(|a| a == flag) {
                features.push(feature);
            }
        }
        cmd.args(["--features", &features.join(",")]);
    }
    let status = cmd.arg("--").arg(command).args(&forwarded.args).status().context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "`cargo xtask {command}` failed ({status}). It runs xtask-traffic, which is built with the generated protocol \
             crate: if cargo printed compile errors above, the generated code does not compile (`cargo xtask regen` \
             still works; see README, \"Upgrading codex\")"
        );
    }
    Ok(())
}
