//! The traffic crate's integration tests, in one test binary (`cargo test -p codex-app-traffic
//! --test it`): each file beside this one is a module of it, so the protocol crate is linked
//! into one test executable, not one per file. `autotests = false` in Cargo.toml: a new file
//! under `tests/` is compiled only once it is listed here.

mod fixtures;
mod fuzz_findings;
mod mutations;
mod older_servers;
mod one_pass;
mod other_writers;
mod rewrite;
mod snapshots;
mod support;
