//! Which parts of the protocol belong to codex's experimental API, in every build.
//!
//! The server gates its experimental API behind `capabilities.experimentalApi` in
//! `initialize`, and the crate gates it behind its `experimental` feature: a build without the
//! feature has no experimental method, member, enum value or union arm. Codex still sends some
//! of them to clients that did not opt in (codex 0.171.0: `thread/start`'s
//! `result.multiAgentMode`, `thread/list`'s `result.readStates`, ...), which a stable build's
//! decoder skips or keeps as `Unrecognized`. These functions say, from the generated tables
//! (keyed by what the schema calls each item, and compiled without the feature too), which of
//! what a message carries is experimental, so that a tool such as the drift check can tell
//! such a member from one the types do not know at all:
//!
//! ```
//! use codex_app_protocol::availability::experimental;
//! # if !codex_app_protocol::__test_support::written_for("0.171.0") { return; }
//!
//! let result = serde_json::json!({ "thread": {}, "multiAgentMode": "explicitRequestOnly" });
//! let found = experimental::in_result("thread/start", &result).unwrap();
//! assert_eq!(found[0].path, "result.multiAgentMode");
//! assert_eq!(found[0].item, "ThreadStartResponse.multiAgentMode");
//! assert!(experimental::is_method("mock/experimentalMethod"));
//! assert!(!experimental::is_method("thread/start"));
//! ```

use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;

use super::{find_method, Found, Plans};
use crate::path::JsonPath;

/// A member, enum value or union arm of the experimental API that a message carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Where, as a JSON path into the message (`result.multiAgentMode`).
    pub path: JsonPath,
    /// What, by what the schema calls it: `Type.member`, or `Type::value` for an enum value or
    /// union arm.
    pub item: String,
    /// An enum value or union arm rather than a member.
    pub is_value: bool,
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (`{}`)", self.path, self.item)
    }
}

/// Whether `method` (of either direction, by its wire name) belongs to the experimental API.
/// `false` for a method the crate does not know.
pub fn is_method(method: &str) -> bool {
    find_method(method).is_some_and(|row| row.experimental)
}

/// The experimental members, enum values and union arms in the params of `method`, each with
/// its path from `params` (through objects, arrays and unions; an experimental member is
/// reported, not looked into). `params` is anything that serializes as the params do: a
/// `serde_json::Value`, JSON text as a `serde_json::value::RawValue`, or typed params. Empty
/// for a method the crate does not know; an error when `params` fails to serialize as JSON.
pub fn in_params<P: Serialize + ?Sized>(method: &str, params: &P) -> Result<Vec<Item>, serde_json::Error> {
    plans().params(method, params).map(items)
}

/// [`in_params`] for the result of a request: paths start at `result`.
pub fn in_result<R: Serialize + ?Sized>(method: &str, result: &R) -> Result<Vec<Item>, serde_json::Error> {
    plans().result(method, result).map(items)
}

/// The walk that looks for the experimental API, built once.
fn plans() -> &'static Plans {
    static PLANS: OnceLock<Plans> = OnceLock::new();
    PLANS.get_or_init(|| Plans::new(|m| m.experimental))
}

fn items(found: Vec<Found>) -> Vec<Item> {
    let mut out: Vec<Item> =
        found.into_iter().map(|f| Item { item: f.item(), is_value: f.is_value(), path: f.path }).collect();
    out.dedup();
    out
}
