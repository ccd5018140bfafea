//! Handing a command from the light `xtask` binary to a binary built with more, through
//! `cargo run`, so that `cargo xtask <command>` stays one command:
//! - `record`, `drift` and `bench` to `xtask-traffic`, built (in release) with the generated
//!   protocol crate ([`crate::traffic::command`]);
//! - `upgrade` to `xtask-upgrade`, built with the feature `upgrade` ([`upgrade_command`]).

use std::ffi::OsString;

use anyhow::{bail, Context as _};

/// The arguments of a forwarded command, passed on untouched (`--help` included).
#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

/// `cargo xtask <command> <args>`: the binary that has `command` run with `args`; fails when
/// it fails.
pub fn forward(command: &str, forwarded: Forwarded) -> anyhow::Result<()> {
    let (mut cmd, binary) = match command {
        "upgrade" => (upgrade_command(&forwarded.args), "xtask-upgrade"),
        _ => (crate::traffic::command(command, &forwarded.args), "xtask-traffic"),
    };
    let status = cmd.status().context("cannot run cargo")?;
    if status.success() {
        return Ok(());
    }
    match binary {
        "xtask-traffic" => bail!(
            "`cargo xtask {command}` failed ({status}). It runs xtask-traffic, which is built with the generated protocol \
             crate: if cargo printed compile errors above, the generated code does not compile (`cargo xtask regen` \
             still works; see docs/upgrading.md)"
        ),
        _ => bail!("`cargo xtask {command}` failed ({status})"),
    }
}

/// `cargo run --package xtask --no-default-features --features upgrade --bin xtask-upgrade --
/// upgrade <args>` in the workspace: the debug build, as `cargo xtask` builds `xtask`, without
/// the protocol crate (the upgrade regenerates it before anything compiles it).
pub fn upgrade_command(args: &[OsString]) -> std::process::Command {
    let mut cmd = crate::cargo();
    cmd.current_dir(crate::root()).args([
        "run",
        "--quiet",
        "--package",
        "xtask",
        "--no-default-features",
        "--features",
        "upgrade",
        "--bin",
        "xtask-upgrade",
        "--",
        "upgrade",
    ]);
    cmd.args(args);
    cmd
}
