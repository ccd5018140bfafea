//! The client's integration tests, in one test binary (`cargo test -p codex-app-client --test
//! it`): each file beside this one is a module of it, so the protocol crate is linked into one
//! test executable, not one per file. `autotests = false` in Cargo.toml: a new file under
//! `tests/` is compiled only once it is listed here.

// `common` writes this release's types (its turn helper): pinned like the tests that use it.
codex_app_client::protocol::__test_support::pinned_to_codex! { "0.171.0",
mod common;
}
mod cancel;
mod memory;
mod misbehaving;
mod real;
mod reconnect;
mod structured;
mod tap_transcript;
