//! Project automation behind `cargo xtask`. One module per command.
//!
//! Three binaries share these modules:
//! - `xtask` (what `cargo xtask` runs, built without default features): `regen`, `diff`,
//!   `build-times`, `history` and `availability`, which need the generator alone. It never
//!   compiles the protocol crate, so `cargo xtask regen` starts fast on a fresh clone and still
//!   runs when the generated code does not compile.
//! - `xtask-traffic` (feature `traffic`): `record`, `drift` and `bench`, which decode traffic
//!   with the generated crate.
//! - `xtask-upgrade` (feature `upgrade`): `upgrade`, which also parses the workspace's Rust
//!   with line numbers (it runs the traffic commands and the tests as `cargo` subprocesses).
//!
//! `xtask` hands the commands of the other two to them through `cargo run` ([`forward`]), so
//! `cargo xtask drift ...` is still one command.

pub mod availability;
#[cfg(feature = "traffic")]
pub mod bench;
pub mod build_times;
pub mod codex;
pub mod diff;
#[cfg(feature = "traffic")]
pub mod drift;
pub mod forward;
pub mod history;
#[cfg(feature = "traffic")]
pub mod record;
pub mod regen;
pub mod traffic;
#[cfg(feature = "upgrade")]
pub mod upgrade;

use std::path::PathBuf;
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is in the workspace").to_owned()
}

/// The cargo that runs this program (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
