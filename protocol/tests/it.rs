//! The protocol crate's integration tests, in one test binary (`cargo test -p codex-app-protocol
//! --test it`): each file beside this one is a module of it, so the big generated crate is
//! linked into one test executable, not one per file. `autotests = false` in Cargo.toml: a new
//! file under `tests/` is compiled only once it is listed here.
//!
//! `codex-app-protocol-stable` compiles this file again, without features, as a module of the
//! crate itself (see `src/lib.rs`): the modules name the crate `codex_app_protocol::` and each
//! other `super::`, never `crate::`.

mod availability;
mod common;
#[path = "conformance/main.rs"]
mod conformance;
pub(crate) mod counting;
mod fuzz_findings;
mod hostile_lines;
mod leaks;
mod memory;
mod methods;
mod wire;
