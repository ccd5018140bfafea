//! What serde's data model hides in a decoded value, found by the walk the protocol crate
//! writes with every type ([`codex_app_protocol::inspect`]).
//!
//! An `Unrecognized` variant (an unknown enum value, union arm or method) round-trips
//! unchanged, so only the types can tell it is there; and an `Option<Option<T>>` member looks
//! like any optional member on the wire. The walk reports both with their JSON paths
//! ([`JsonPath`], as every other finding's).

use codex_app_protocol::framing::excerpt;
use std::collections::{HashMap, HashSet};

use codex_app_protocol::inspect::{Inspect, Inspector, Step};
use codex_app_protocol::path::JsonPath;
use serde_json::Value;

/// What the walk of one decoded value found.
#[derive(Debug, Default)]
pub struct Found<'j> {
    /// `(path, Rust type, description)` of each `Unrecognized` value, in the order of the walk.
    pub unrecognized: Vec<(JsonPath, &'static str, String)>,
    /// Paths of `Option<Option<T>>` members (present or not) -> the struct that has them.
    pub null_meaningful: HashMap<JsonPath, &'static str>,
    /// The first variant reported at the root: `(Rust type, Rust variant)`.
    pub root_variant: Option<(&'static str, &'static str)>,
    /// The paths in `unrecognized`, so each is reported once (a line can have thousands).
    seen: HashSet<JsonPath>,
    root_len: usize,
    /// The message as JSON (its re-encoding), where each unknown value is looked up by its
    /// path to describe it.
    json: Option<&'j Value>,
}

/// Walks `value`, which sits at `root` in its message (`[]` for a whole message,
/// `[Key("result")]` for a response's result); `json` is the whole message.
pub fn inspect<'a, 'j, T: Inspect + ?Sized>(value: &'a T, root: &[Step<'a>], json: Option<&'j Value>) -> Found<'j> {
    let mut found = Found { root_len: root.len(), json, ..Found::default() };
    let mut path = root.to_vec();
    value.inspect(&mut path, &mut found);
    found
}

impl Inspector for Found<'_> {
    fn unrecognized(&mut self, path: &[Step<'_>], ty: &'static str) {
        let here = JsonPath::from_steps(path);
        if self.seen.insert(here.clone()) {
            let detail = describe(ty, self.json.and_then(|json| at(json, path)));
            self.unrecognized.push((here, ty, detail));
        }
    }

    fn variant(&mut self, path: &[Step<'_>], ty: &'static str, rust: &'static str, _wire: Option<&str>) {
        if path.len() == self.root_len && self.root_variant.is_none() {
            self.root_variant = Some((ty, rust));
        }
    }

    fn null_meaningful(&mut self, path: &[Step<'_>], ty: &'static str) {
        self.null_meaningful.insert(JsonPath::from_steps(path), ty);
    }
}

/// What an unknown value of the type `ty` looks like, for the report; `json` is the value at
/// its path in the re-encoded message.
pub fn describe(ty: &str, json: Option<&Value>) -> String {
    match json {
        Some(Value::String(s)) => format!("unknown enum value {} of `{ty}`", Value::String(s.clone())),
        Some(Value::Object(o)) => {
            if let Some((tag, Value::String(v))) =
                o.iter().find(|(k, v)| matches!(k.as_str(), "type" | "kind" | "method" | "mode") && v.is_string())
            {
                format!("unknown union variant `{tag}: {}` of `{ty}`", Value::String(v.clone()))
            } else if o.len() == 1 {
                let key = o.keys().next().map(String::as_str).unwrap_or_default();
                format!("unknown union variant `{key}` (single-key object) of `{ty}`")
            } else {
                let text = serde_json::to_string(o).unwrap_or_default();
                format!("unknown union variant {} of `{ty}`", excerpt(&text, 80))
            }
        }
        Some(other) => format!("unknown union variant {} of `{ty}`", excerpt(&other.to_string(), 80)),
        None => format!("unknown variant of `{ty}` (not located in the JSON)"),
    }
}

/// The value at `path` (steps from the root) inside `json`.
pub fn at<'v>(json: &'v Value, path: &[Step<'_>]) -> Option<&'v Value> {
    path.iter().try_fold(json, |v, step| match step {
        Step::Key(k) => v.get(*k),
        Step::Index(i) => v.get(*i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_and_locates_unknown_values() {
        assert_eq!(
            describe("X", Some(&json!({"other": {}}))),
            "unknown union variant `other` (single-key object) of `X`"
        );
        assert_eq!(describe("S", Some(&json!("paused"))), "unknown enum value \"paused\" of `S`");
        let v = json!({"a": [{"b": 1}]});
        assert_eq!(at(&v, &[Step::Key("a"), Step::Index(0), Step::Key("b")]), Some(&json!(1)));
        assert_eq!(at(&v, &[Step::Key("a"), Step::Index(3)]), None);
    }

    // Written against types of the vendored release (see `written_for_codex!`).
    codex_app_protocol::__test_support::written_for_codex! { "0.171.0",
    use codex_app_protocol::roundtrip::reencode;
    use codex_app_protocol::{Message, ServerMessage};

    /// Unknown values found by the generated walk, with their paths and types; a string that
    /// looks like a variant is data, not a finding.
    #[test]
    fn finds_unrecognized_values_by_json_path() {
        let line = r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","status":"paused","items":[{"type":"agentMessage","id":"a","text":"Unrecognized(\"x\")"},{"type":"hologram","id":"h"}]}}}"#;
        let Ok(Message::Notification(n)) = ServerMessage::from_line(line) else { panic!("{line}") };
        let json = reencode(&n).unwrap();
        let found = inspect(&n, &[], Some(&json));
        let paths: Vec<(String, &str)> = found.unrecognized.iter().map(|(p, t, _)| (p.to_string(), *t)).collect();
        assert_eq!(paths, [("params.turn.items[1]".to_owned(), "ThreadItem"), ("params.turn.status".to_owned(), "TurnStatus")]);
        assert_eq!(found.unrecognized[0].2, "unknown union variant `type: \"hologram\"` of `ThreadItem`");
        assert_eq!(found.root_variant, Some(("ServerNotification", "TurnCompleted")));
    }
    }
}
