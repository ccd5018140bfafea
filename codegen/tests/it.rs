//! The generator's integration tests, in one test binary (`cargo test -p codex-app-codegen
//! --test it`): each file beside this one is a module of it. `autotests = false` in
//! Cargo.toml: a new file under `tests/` is compiled only once it is listed here.

mod common;
mod compile;
mod constructs;
