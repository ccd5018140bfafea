//! Recorded codex app-server traffic: the transcript format, the drift check and the typed
//! summary. Used by `cargo xtask record` / `cargo xtask drift` and by this crate's tests, which
//! check every committed fixture (`fixtures/<codex version>/*.ndjson`).
//!
//! - [`transcript`]: reading and writing `{"dir", "line"}` transcripts and one-sided NDJSON.
//! - [`drift`]: decoding every line with the typed crate and reporting where wire and types
//!   disagree.
//! - [`summary`]: one line per message (direction, method, typed variant, key fields), for
//!   snapshot tests.

pub mod drift;
pub mod null_policy;
pub mod path;
pub mod summary;
pub mod transcript;
pub mod unrecognized;

pub use drift::{check, check_file, Finding, Kind, Report};
pub use transcript::{Dir, Entry, Format, Side};

/// The folder of the committed fixtures for the codex version the protocol crate was
/// generated from: `tests/fixtures/<CODEX_VERSION>`.
pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(codex_app_protocol::CODEX_VERSION)
}
