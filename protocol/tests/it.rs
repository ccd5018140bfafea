//! The protocol crate's integration tests, in one test binary (`cargo test -p codex-app-protocol
//! --test it`): each file beside this one is a module of it, so the big generated crate is
//! linked into one test executable, not one per file. `autotests = false` in Cargo.toml: a new
//! file under `tests/` is compiled only once it is listed here.
//!
//! `codex-app-protocol-stable` compiles this file again, without `experimental` (with
//! `inspect`), as a module of the crate itself (see `src/lib.rs`): the modules name the crate
//! `codex_app_protocol::` and each other `super::`, never `crate::`.

mod availability;
/// The drift check as an application without the experimental API runs it: the traffic
/// crate's sources, a module here, over this crate built without `experimental` and with
/// `inspect` (`codex-app-protocol-stable`'s test build), in this binary rather than one more
/// build of the crate. With `experimental`, the traffic crate's own tests read the sessions.
#[cfg(all(feature = "inspect", not(feature = "experimental")))]
#[path = "../../traffic/src/lib.rs"]
#[allow(dead_code, unused_imports)] // A library: these tests use some of its API.
mod codex_app_traffic;
mod common;
#[path = "conformance/main.rs"]
mod conformance;
pub(crate) mod counting;
mod fuzz_findings;
mod hostile_lines;
/// With `experimental` only: the decode of every params and result type through a deserializer
/// of its own compiles every type's decoder once more, and the build with `experimental` holds
/// every type the one without does, decoded by the same macros.
#[cfg(feature = "experimental")]
mod leaks;
mod memory;
mod methods;
#[cfg(all(feature = "inspect", not(feature = "experimental")))]
mod stable_sessions;
mod wire;
