//! Recorded codex app-server traffic: the transcript format, the drift check and the typed
//! summary. Used by applications' tests (below), and in this crate's repository by
//! `cargo xtask record` / `cargo xtask drift` and by the tests over the recorded fixtures.
//!
//! - [`transcript`]: reading and writing `{"dir", "line"}` transcripts and one-sided NDJSON.
//! - [`drift`]: decoding every line with the typed crate and reporting where wire and types
//!   disagree.
//! - [`summary`]: one line per message (direction, method, typed variant, key fields), for
//!   snapshot tests.
//!
//! # The drift check in your tests
//!
//! Record a session of your application with `codex-app-client`'s tap
//! (`Client::builder().tap(Tap::create(path)?)`), then check the transcript: the test fails on
//! any line the types do not read as the server wrote it.
//!
//! ```no_run
//! use codex_app_traffic::{drift, Format};
//!
//! let transcript = std::path::Path::new("session.ndjson");
//! let report = codex_app_traffic::check_file(transcript, Format::Transcript).expect("the transcript reads");
//! assert_eq!(report.drift_count(), 0, "{}", drift::render(&[("session".into(), report.clone())]));
//! ```
//!
//! # Features
//!
//! The check reads with the types of the user's own build: this crate turns on the protocol
//! crate's `inspect` (a walk that adds no variant or member) and nothing that changes the
//! types, so a dev-dependency on it leaves the user's code compiling the same under
//! `cargo build` and `cargo test`. With only the stable types, what codex sends of its
//! experimental API (it sends some members to clients that did not opt in) is reported apart,
//! as [`Kind::Experimental`] with its path ([`Report::experimental`]), and is not drift. The
//! feature `experimental` turns on `codex-app-protocol/experimental`, which gives the
//! experimental types to every build that has this crate.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod drift;
pub mod summary;
pub mod transcript;
mod unrecognized;

pub use drift::{check, check_file, Finding, Kind, Report};
pub use transcript::{Dir, Entry, Format, Side};
