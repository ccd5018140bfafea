//! The client's integration tests, in one test binary (`cargo test -p codex-app-client --test
//! it`): each file beside this one is a module of it, so the protocol crate is linked into one
//! test executable, not one per file. `autotests = false` in Cargo.toml: a new file under
//! `tests/` is compiled only once it is listed here.

mod common;
mod memory;
mod misbehaving;
mod real;
mod structured;
mod tap_transcript;
