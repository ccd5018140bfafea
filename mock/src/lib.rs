//! What the real `codex app-server` runs against in this project's tests and recordings: a
//! loopback mock of the model and a throw-away `CODEX_HOME` that points the server at it.
//!
//! - [`responses`]: the mock of the OpenAI Responses API (scripted SSE bodies, recorded
//!   requests, a body that holds for interrupts).
//! - [`codex`]: the pinned codex release, installed into the workspace's `.codex-bin/` the
//!   first time a test needs it.
//! - [`home`]: a fresh `CODEX_HOME` with a `config.toml` for the mock, and the environment the
//!   server must run with so that nothing of the user's own setup leaks in.
//!
//! Used by `cargo xtask record` and by the tests of `codex-app-client`; it does not depend on
//! the protocol crate, so either can use it with whatever feature set it builds.

pub mod codex;
pub mod home;
pub mod responses;

pub use home::CodexHome;
pub use responses::{ev, MockBody, MockServer, Outcome, RecordedRequest};
