//! Replaces values that change on every run with stable placeholders, so that re-recording
//! with the same codex gives a small diff.
//!
//! Rules, applied to every JSON line of one transcript (non-JSON lines stay verbatim):
//! - A placeholder keeps the JSON type: strings become strings, numbers become `0`; `null`,
//!   booleans, arrays and objects keep their kind. Member names are never renamed or removed
//!   and member order is kept (the line is read into [`Node`], an order-preserving tree), so
//!   shape changes show.
//! - By member name: times (`*At`, `*AtMs`, `durationMs`) -> `0` / `"<time>"`; process ids
//!   (`processId`, `pid`) -> `0` / `"<pid>"`; `serverName` (the host name) -> `"<hostname>"`;
//!   `userAgent` keeps its version but its OS and terminal parts become `(<os>)` and
//!   `<terminal>`.
//! - Inside any string: the run's literal paths and URLs (the temporary `CODEX_HOME`, the
//!   mock's base URL) -> their placeholders; UUIDs -> `<uuid:N>`, numbered by first appearance
//!   in the transcript so equal ids stay equal; date-times -> `<datetime>`; `yyyy/mm/dd` ->
//!   `<date>`; `sha256:<64 hex>` -> `sha256:<hash>`.
//! - Object keys that are data (a map keyed by thread id) get the same in-string replacements;
//!   a member name never contains a UUID, path or date, so it is unchanged.
//! - The only reordering: objects the server fills from a hash map, whose key order changes
//!   from run to run ([`UNORDERED_MAPS`]: `config/read`'s `config`, which flattens a hash map
//!   after its fixed fields, and its `origins`), get their keys sorted (one level).

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// Members whose value is an object the server serializes (partly) in hash order.
pub const UNORDERED_MAPS: &[&str] = &["config", "origins"];

/// A JSON value that keeps member order (serde_json's `Value` sorts members unless its
/// `preserve_order` feature is on, which this workspace must not enable).
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        struct NodeVisitor;

        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
                Ok(Node::Number(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
                serde_json::Number::from_f64(v).map(Node::Number).ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, v: &str) -> Result<Node, E> {
                Ok(Node::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Node, E> {
                Ok(Node::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Node>()? {
                    members.push((k, v));
                }
                Ok(Node::Object(members))
            }
        }

        deserializer.deserialize_any(NodeVisitor)
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => s.serialize_unit(),
            Node::Bool(b) => s.serialize_bool(*b),
            Node::Number(n) => n.serialize(s),
            Node::String(v) => s.serialize_str(v),
            Node::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

pub struct Normalizer {
    /// Literal substrings and their placeholders, longest first.
    literals: Vec<(String, String)>,
    uuids: HashMap<String, usize>,
}

impl Normalizer {
    /// `literals`: run-specific strings (paths, URLs) and the placeholder for each.
    pub fn new(literals: &[(String, String)]) -> Normalizer {
        let mut literals: Vec<(String, String)> =
            literals.iter().filter(|(from, _)| !from.is_empty()).cloned().collect();
        literals.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Normalizer { literals, uuids: HashMap::new() }
    }

    /// Normalizes one wire line; returns it compact, on one line. Non-JSON stays verbatim.
    pub fn line(&mut self, line: &str) -> String {
        match serde_json::from_str::<Node>(line) {
            Ok(node) => serde_json::to_string(&self.node(node, None)).expect("a JSON tree always serializes"),
            Err(_) => line.to_owned(),
        }
    }

    /// Normalizes a value found under member `key` (if any).
    fn node(&mut self, node: Node, key: Option<&str>) -> Node {
        let kind = key.map(field_kind).unwrap_or(FieldKind::Plain);
        match node {
            Node::Number(_) if kind != FieldKind::Plain => Node::Number(0.into()),
            Node::String(s) => Node::String(match kind {
                FieldKind::Time => "<time>".to_owned(),
                FieldKind::Pid => "<pid>".to_owned(),
                FieldKind::Host => "<hostname>".to_owned(),
                FieldKind::UserAgent => self.string(&user_agent(&s)),
                FieldKind::Plain => self.string(&s),
            }),
            Node::Array(items) => Node::Array(items.into_iter().map(|v| self.node(v, None)).collect()),
            Node::Object(mut members) => {
                if key.is_some_and(|k| UNORDERED_MAPS.contains(&k)) {
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                }
                Node::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| {
                            let v = self.node(v, Some(&k));
                            (self.string(&k), v)
                        })
                        .collect(),
                )
            }
            other => other,
        }
    }

    /// In-string replacements: literals, UUIDs, date-times, dates, sha256 digests.
    pub fn string(&mut self, s: &str) -> String {
        let mut s = s.to_owned();
        for (from, to) in &self.literals {
            if s.contains(from.as_str()) {
                s = s.replace(from.as_str(), to);
            }
        }
        let bytes = s.as_bytes();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
            let replacement = if !boundary {
                None
            } else if let Some(n) = matches(bytes, i, UUID) {
                let number = self.uuid_number(&s[i..i + n]);
                Some((n, format!("<uuid:{number}>")))
            } else if let Some(n) = datetime(bytes, i) {
                Some((n, "<datetime>".to_owned()))
            } else if let Some(n) = matches(bytes, i, b"dddd/dd/dd") {
                Some((n, "<date>".to_owned()))
            } else {
                sha256(bytes, i).map(|n| (n, "sha256:<hash>".to_owned()))
            };
            match replacement {
                // A match must also end at a boundary (not inside a longer token).
                Some((n, text)) if !bytes.get(i + n).is_some_and(u8::is_ascii_alphanumeric) => {
                    out.push_str(&s[copied..i]);
                    out.push_str(&text);
                    i += n;
                    copied = i;
                }
                _ => i += 1,
            }
        }
        out.push_str(&s[copied..]);
        out
    }

    fn uuid_number(&mut self, uuid: &str) -> usize {
        let next = self.uuids.len() + 1;
        *self.uuids.entry(uuid.to_ascii_lowercase()).or_insert(next)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    Plain,
    Time,
    Pid,
    Host,
    UserAgent,
}

fn field_kind(key: &str) -> FieldKind {
    match key {
        "processId" | "pid" => FieldKind::Pid,
        "serverName" => FieldKind::Host,
        "userAgent" => FieldKind::UserAgent,
        "durationMs" => FieldKind::Time,
        k if k.ends_with("At") || k.ends_with("AtMs") => FieldKind::Time,
        _ => FieldKind::Plain,
    }
}

/// `name/1.2.3 (Debian 12.0.0; x86_64) xterm (client; 0.1.0)` ->
/// `name/1.2.3 (<os>) <terminal> (client; 0.1.0)`. Other shapes stay as they are.
fn user_agent(ua: &str) -> String {
    let Some(open) = ua.find(" (") else {
        return ua.to_owned();
    };
    let Some(close) = ua[open..].find(')').map(|c| open + c) else {
        return ua.to_owned();
    };
    let rest = &ua[close + 1..];
    let tail = match rest.strip_prefix(' ') {
        Some(after) => match after.find(" (") {
            Some(end) if end > 0 => format!(" <terminal>{}", &after[end..]),
            _ => rest.to_owned(),
        },
        None => rest.to_owned(),
    };
    format!("{} (<os>){tail}", &ua[..open])
}

const UUID: &[u8] = b"hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";

/// Matches `pat` at `i`: `h` a hex digit, `d` a decimal digit, anything else itself.
fn matches(s: &[u8], i: usize, pat: &[u8]) -> Option<usize> {
    let window = s.get(i..i + pat.len())?;
    let ok = window.iter().zip(pat).all(|(&c, &p)| match p {
        b'h' => c.is_ascii_hexdigit(),
        b'd' => c.is_ascii_digit(),
        _ => c == p,
    });
    ok.then_some(pat.len())
}

/// `2026-11-26T01:04:07` with optional `.fraction` and `Z` / `+hh:mm`, or the file-name form
/// `2026-11-26T01-04-07`.
fn datetime(s: &[u8], i: usize) -> Option<usize> {
    if let Some(mut n) = matches(s, i, b"dddd-dd-ddTdd:dd:dd") {
        if s.get(i + n) == Some(&b'.') {
            let digits = s[i + n + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                n += 1 + digits;
            }
        }
        if s.get(i + n) == Some(&b'Z') {
            n += 1;
        } else if let Some(m) = matches(s, i + n, b"+dd:dd").or_else(|| matches(s, i + n, b"-dd:dd")) {
            n += m;
        }
        return Some(n);
    }
    matches(s, i, b"dddd-dd-ddTdd-dd-dd")
}

fn sha256(s: &[u8], i: usize) -> Option<usize> {
    let prefix = b"sha256:";
    if !s[i..].starts_with(prefix) {
        return None;
    }
    let hex = s[i + prefix.len()..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
    (hex == 64).then_some(prefix.len() + 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(line: &str) -> String {
        Normalizer::new(&[("/tmp/codex-home-AbC".into(), "<codex-home>".into())]).line(line)
    }

    #[test]
    fn keeps_types_keys_and_order() {
        let line = r#"{"z":1,"id":"01a21561-977e-7232-aeef-6112818ff849","again":"01A21561-977E-7232-AEEF-6112818FF849","other":"884bf1c5-31b7-4b05-a64d-a7b34e68cb96","createdAt":1795655047,"startedAt":null,"emittedAtMs":1795655047123,"cwd":"/tmp/codex-home-AbC/work","processId":"51876"}"#;
        assert_eq!(
            norm(line),
            r#"{"z":1,"id":"<uuid:1>","again":"<uuid:1>","other":"<uuid:2>","createdAt":0,"startedAt":null,"emittedAtMs":0,"cwd":"<codex-home>/work","processId":"<pid>"}"#
        );
    }

    #[test]
    fn embedded_values() {
        let line = r#"{"path":"/tmp/codex-home-AbC/sessions/2026/11/26/rollout-2026-11-26T01-04-07-01a21561-977e-7232-aeef-6112818ff849.jsonl","v":"sha256:0f682eef1f32ec370f01fb8d2e9441f42bee5d6cf8d27a20b9eb691a93dd8586","t":"x 2026-11-26T01:03:16.853116Z y"}"#;
        assert_eq!(
            norm(line),
            r#"{"path":"<codex-home>/sessions/<date>/rollout-<datetime>-<uuid:1>.jsonl","v":"sha256:<hash>","t":"x <datetime> y"}"#
        );
    }

    #[test]
    fn map_keys_that_are_ids() {
        let line = r#"{"readStates":{"01a21561-977e-7232-aeef-6112818ff849":{"n":1}}}"#;
        assert_eq!(norm(line), r#"{"readStates":{"<uuid:1>":{"n":1}}}"#);
    }

    #[test]
    fn unordered_maps_are_sorted() {
        let line = r#"{"origins":{"b":{"z":1,"a":2},"a":1},"other":{"b":1,"a":2}}"#;
        assert_eq!(norm(line), r#"{"origins":{"a":1,"b":{"z":1,"a":2}},"other":{"b":1,"a":2}}"#);
    }

    #[test]
    fn user_agent_os_and_terminal() {
        assert_eq!(
            user_agent("codex-recorder/0.169.0 (Debian 12.0.0; x86_64) xterm (codex-recorder; 0.1.0)"),
            "codex-recorder/0.169.0 (<os>) <terminal> (codex-recorder; 0.1.0)"
        );
        assert_eq!(user_agent("plain"), "plain");
    }

    #[test]
    fn non_json_and_partial_hex_untouched() {
        assert_eq!(norm("this is not JSON"), "this is not JSON");
        let line = r#"{"h":"x01a21561-977e-7232-aeef-6112818ff849"}"#;
        assert_eq!(norm(line), line);
    }

    #[test]
    fn reserializes_unchanged_lines_byte_for_byte() {
        let line = r#"{"a":[1,2.5,-3,true,null,18446744073709551615],"b":"é \"q\" \\ \u0001\n","c":{"d":1e-7},"z":{"y":1,"x":2}}"#;
        assert_eq!(norm(line), line);
    }
}
