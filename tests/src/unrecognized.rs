//! Finding `Unrecognized` variants inside a decoded value.
//!
//! Every open union and enum of the protocol crate decodes a tag or value it does not know to
//! its `Unrecognized` variant, which keeps the JSON as it came and encodes it back unchanged.
//! So an unknown variant survives the round trip and serde's data model never reveals it: an
//! unknown string enum value is buffered and then decoded as `String`, an unknown union tag as
//! a `Map` — the same calls a plain `String` or map field makes — and its re-encoding is
//! `serialize_str` / `serialize_map` without a variant name (`#[serde(untagged)]`).
//!
//! The one place the variant is visible without a second description of every type is the
//! derived `Debug` text, which names every enum variant (`status: Unrecognized("paused")`)
//! and quotes every string of data (so data can never look like a variant name). The check is:
//!
//! 1. Format the decoded value with `{:?}` into a reused buffer and look for `Unrecognized`.
//!    That is one linear pass with no allocation per line, and almost every line stops here.
//! 2. Only when the word occurs: parse the `Debug` text into a tree and walk it together with
//!    the re-encoded JSON, mapping struct fields to members (Rust `thread_id` to wire
//!    `threadId`, compared without case and `_`), `Some(x)` and newtype variants to the same
//!    JSON value, vectors to arrays and maps to objects. Each `Unrecognized` node gives the
//!    JSON path of the value. A quoted occurrence (inside a string) is no node and is ignored.
//!
//! The same walk records the Rust struct name at each JSON object, which the round trip uses to
//! apply the one exception of the null policy (`Option<Option<T>>` members).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::path::{push_index, push_key};

/// The word every catch-all variant of the protocol crate is named with.
pub const MARKER: &str = "Unrecognized";

/// What the walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// JSON paths of `Unrecognized` values, with a description of each.
    pub unrecognized: Vec<(String, String)>,
    /// The paths in `unrecognized` (a line can have thousands).
    seen: HashSet<String>,
    /// The Rust struct decoded at each JSON object path.
    pub structs: HashMap<String, String>,
}

/// Walks the `Debug` text of a decoded value together with its re-encoded JSON; `root` is the
/// path of `json` in the message.
pub fn walk(debug: &str, json: &Value, root: &str) -> Result<Walk, String> {
    let mut parser = Parser { s: debug, b: debug.as_bytes(), i: 0, depth: 0 };
    let node = parser.value()?;
    parser.skip_ws();
    if parser.i != parser.b.len() {
        return Err(parser.error("trailing text"));
    }
    let mut walk = Walk::default();
    let mut path = root.to_owned();
    walk.node(&node, Some(json), &mut path);
    Ok(walk)
}

#[derive(Debug)]
enum Node<'a> {
    /// A quoted string (still escaped).
    Str(&'a str),
    /// A number, `true`, `false`, or any other bare word without a body.
    Atom(&'a str),
    Named(&'a str, Body<'a>),
    List(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
    Tuple(Vec<Node<'a>>),
}

#[derive(Debug)]
enum Body<'a> {
    /// `Name { a: 1, b: 2 }`
    Fields(Vec<(&'a str, Node<'a>)>),
    /// `Name(x, y)`
    Items(Vec<Node<'a>>),
    /// `Array [..]` (serde_json's `Value::Array`)
    List(Vec<Node<'a>>),
    /// `Object {..}` (serde_json's `Value::Object`)
    Map(Vec<(Node<'a>, Node<'a>)>),
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 2048;

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        let end = (self.i + 40).min(self.s.len());
        let end = (end..=self.s.len()).find(|&e| self.s.is_char_boundary(e)).unwrap_or(self.s.len());
        let start = (0..=self.i.min(self.s.len())).rev().find(|&s| self.s.is_char_boundary(s)).unwrap_or(0);
        format!("cannot read the Debug text at byte {}: {what} (near `{}`)", self.i, &self.s[start..end])
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek() == Some(b' ') {
            self.i += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.s[self.i..].starts_with(token) {
            self.i += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        self.skip_ws();
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{token}`")))
        }
    }

    fn value(&mut self) -> Result<Node<'a>, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_ws();
        let node = match self.peek() {
            Some(b'"') => Node::Str(self.quoted(b'"')?),
            Some(b'\'') => Node::Str(self.quoted(b'\'')?),
            Some(b'[') => {
                self.i += 1;
                Node::List(self.items(b']')?)
            }
            Some(b'{') => {
                self.i += 1;
                Node::Map(self.entries()?)
            }
            Some(b'(') => {
                self.i += 1;
                Node::Tuple(self.items(b')')?)
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => Node::Atom(self.word()),
            Some(c) if c == b'_' || c.is_ascii_alphabetic() => self.named()?,
            _ => return Err(self.error("expected a value")),
        };
        self.depth -= 1;
        Ok(node)
    }

    /// A run of characters that can make up a number or a word (`-1.5e-7`, `r#type`, `NaN`).
    fn word(&mut self) -> &'a str {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'-' | b'#') {
                self.i += 1;
            } else {
                break;
            }
        }
        &self.s[start..self.i]
    }

    fn named(&mut self) -> Result<Node<'a>, String> {
        let name = self.word();
        if self.peek() == Some(b'(') {
            self.i += 1;
            return Ok(Node::Named(name, Body::Items(self.items(b')')?)));
        }
        if self.s[self.i..].starts_with(" [") {
            self.i += 2;
            return Ok(Node::Named(name, Body::List(self.items(b']')?)));
        }
        if self.s[self.i..].starts_with(" {") {
            self.i += 2;
            let save = self.i;
            self.skip_ws();
            if self.eat("}") {
                return Ok(Node::Named(name, Body::Fields(Vec::new())));
            }
            // `field: value` makes a struct; a quoted key or any other value makes a map.
            let is_field = matches!(self.peek(), Some(c) if c == b'_' || c.is_ascii_alphabetic()) && {
                let word_end = self.i + self.s[self.i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '#')).unwrap_or(0);
                self.s[word_end..].starts_with(": ")
            };
            self.i = save;
            return if is_field {
                Ok(Node::Named(name, Body::Fields(self.fields()?)))
            } else {
                Ok(Node::Named(name, Body::Map(self.entries()?)))
            };
        }
        Ok(Node::Atom(name))
    }

    fn quoted(&mut self, quote: u8) -> Result<&'a str, String> {
        let start = self.i + 1;
        let mut i = start;
        while i < self.b.len() {
            match self.b[i] {
                b'\\' => i += 2,
                c if c == quote => {
                    self.i = i + 1;
                    return Ok(&self.s[start..i]);
                }
                _ => i += 1,
            }
        }
        Err(self.error("unterminated string"))
    }

    /// Comma-separated values up to `close` (already past the opening bracket).
    fn items(&mut self, close: u8) -> Result<Vec<Node<'a>>, String> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(items);
            }
            if !items.is_empty() {
                self.expect(",")?;
                self.skip_ws();
                if self.peek() == Some(close) {
                    self.i += 1;
                    return Ok(items);
                }
            }
            items.push(self.value()?);
        }
    }

    /// `key: value` pairs up to `}` (already past `{`).
    fn entries(&mut self) -> Result<Vec<(Node<'a>, Node<'a>)>, String> {
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            if self.eat("}") {
                return Ok(entries);
            }
            if !entries.is_empty() {
                self.expect(",")?;
                self.skip_ws();
                if self.eat("}") {
                    return Ok(entries);
                }
            }
            let key = self.value()?;
            self.expect(":")?;
            let value = self.value()?;
            entries.push((key, value));
        }
    }

    /// `field: value` pairs up to `}` (already past `{`); `..` marks omitted fields.
    fn fields(&mut self) -> Result<Vec<(&'a str, Node<'a>)>, String> {
        let mut fields = Vec::new();
        loop {
            self.skip_ws();
            if self.eat("}") {
                return Ok(fields);
            }
            if !fields.is_empty() {
                self.expect(",")?;
                self.skip_ws();
                if self.eat("}") {
                    return Ok(fields);
                }
            }
            if self.eat("..") {
                continue;
            }
            let name = self.word();
            if name.is_empty() {
                return Err(self.error("expected a field name"));
            }
            self.expect(":")?;
            fields.push((name, self.value()?));
        }
    }
}

/// A name compared without case, `_`, `-` and a raw-identifier prefix.
fn same_name(rust: &str, wire: &str) -> bool {
    let rust = rust.strip_prefix("r#").unwrap_or(rust);
    let mut a = rust.bytes().filter(|b| !matches!(b, b'_' | b'-')).map(|b| b.to_ascii_lowercase());
    let mut b = wire.bytes().filter(|b| !matches!(b, b'_' | b'-')).map(|b| b.to_ascii_lowercase());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (x, y) if x == y => {}
            _ => return false,
        }
    }
}

/// Undoes Rust's `Debug` escapes of a string.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let rest = chars.as_str();
                let code = rest
                    .strip_prefix('{')
                    .and_then(|r| r.find('}').map(|end| &r[..end]))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok().map(|n| (n, hex.len())));
                match code.and_then(|(n, len)| char::from_u32(n).map(|c| (c, len))) {
                    Some((c, len)) => {
                        out.push(c);
                        chars = rest[len + 2..].chars();
                    }
                    None => out.push_str("\\u"),
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// What an unknown value looks like, for the report.
fn describe(json: Option<&Value>) -> String {
    match json {
        Some(Value::String(s)) => format!("unknown enum value {}", Value::String(s.clone())),
        Some(Value::Object(o)) => {
            if let Some((tag, Value::String(v))) = o.iter().find(|(k, v)| matches!(k.as_str(), "type" | "kind" | "method") && v.is_string()) {
                format!("unknown union variant `{tag}: {}`", Value::String(v.clone()))
            } else if o.len() == 1 {
                let key = o.keys().next().map(String::as_str).unwrap_or_default();
                format!("unknown union variant `{key}` (single-key object)")
            } else {
                let text = serde_json::to_string(o).unwrap_or_default();
                format!("unknown union variant {}", crate::drift::truncate(&text, 80))
            }
        }
        Some(other) => format!("unknown union variant {}", crate::drift::truncate(&other.to_string(), 80)),
        None => "unknown variant (not located in the JSON)".to_owned(),
    }
}

impl Walk {
    fn node(&mut self, node: &Node<'_>, json: Option<&Value>, path: &mut String) {
        match node {
            Node::Named(name, _) if *name == MARKER => {
                if self.seen.insert(path.clone()) {
                    self.unrecognized.push((path.clone(), describe(json)));
                }
            }
            Node::Named(name, Body::Fields(fields)) => {
                let object = json.and_then(Value::as_object);
                if object.is_some() {
                    self.structs.insert(path.clone(), (*name).to_owned());
                }
                for (field, value) in fields {
                    let member = object.and_then(|o| o.iter().find(|(k, _)| same_name(field, k)));
                    match (member, value) {
                        (Some((key, member)), _) => self.descend(value, Some(member), path, |p| push_key(p, key)),
                        (None, Node::Atom("None")) => {}
                        // A `#[serde(flatten)]` map: its keys are members of this object.
                        (None, Node::Map(_)) => self.node(value, json, path),
                        (None, _) => {
                            let field = field.strip_prefix("r#").unwrap_or(field);
                            self.descend(value, None, path, |p| push_key(p, field))
                        }
                    }
                }
            }
            Node::Named(name, Body::Items(items)) if items.len() == 1 => {
                // An externally tagged variant with a payload is `{"variant": payload}`.
                if let Some(Value::Object(o)) = json {
                    if let (1, Some((key, inner))) = (o.len(), o.iter().next()) {
                        if same_name(name, key) {
                            return self.descend(&items[0], Some(inner), path, |p| push_key(p, key));
                        }
                    }
                }
                // `Some(x)`, a newtype variant or a union arm: the same JSON value.
                self.node(&items[0], json, path)
            }
            Node::Named(_, Body::Items(items) | Body::List(items)) | Node::List(items) | Node::Tuple(items) => {
                let array = json.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    self.descend(item, array.and_then(|a| a.get(i)), path, |p| push_index(p, i));
                }
            }
            Node::Named(_, Body::Map(entries)) | Node::Map(entries) => {
                let object = json.and_then(Value::as_object);
                for (key, value) in entries {
                    let key = match key {
                        Node::Str(s) => unescape(s),
                        Node::Atom(a) => (*a).to_owned(),
                        _ => continue,
                    };
                    let member = object.and_then(|o| o.get(&key));
                    self.descend(value, member, path, |p| push_key(p, &key));
                }
            }
            Node::Str(_) | Node::Atom(_) => {}
        }
    }

    fn descend(&mut self, node: &Node<'_>, json: Option<&Value>, path: &mut String, step: impl FnOnce(&mut String)) {
        let len = path.len();
        step(path);
        self.node(node, json, path);
        path.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug)]
    #[allow(dead_code)]
    enum Status {
        Idle,
        Unrecognized(String),
    }

    #[derive(Debug)]
    #[allow(dead_code)]
    enum Item {
        Text { text: String },
        Unrecognized(serde_json::Map<String, Value>),
    }

    #[derive(Debug)]
    #[allow(dead_code)]
    struct Thread {
        thread_id: String,
        status: Option<Status>,
        items: Vec<Item>,
        r#type: Option<Status>,
        extra: std::collections::BTreeMap<String, Value>,
    }

    #[test]
    fn finds_unrecognized_values_by_json_path() {
        let mut unknown = serde_json::Map::new();
        unknown.insert("type".into(), json!("newKind"));
        unknown.insert("note".into(), json!("Unrecognized(\"x\") { a: 1 }"));
        let thread = Thread {
            thread_id: "Unrecognized(".into(),
            status: Some(Status::Unrecognized("paused".into())),
            items: vec![Item::Text { text: "hi, \"there\"".into() }, Item::Unrecognized(unknown.clone())],
            r#type: Some(Status::Idle),
            extra: [("free-form".to_owned(), json!({"k": [1, 2.5, null]}))].into_iter().collect(),
        };
        let json = json!({"threadId": "Unrecognized(", "status": "paused", "items": [{"type": "text", "text": "hi, \"there\""}, unknown], "type": "idle", "free-form": {"k": [1, 2.5, null]}});
        let debug = format!("{thread:?}");
        let walk = walk(&debug, &json, "params").unwrap();
        assert_eq!(
            walk.unrecognized,
            [
                ("params.status".to_owned(), "unknown enum value \"paused\"".to_owned()),
                ("params.items[1]".to_owned(), "unknown union variant `type: \"newKind\"`".to_owned()),
            ]
        );
        assert_eq!(walk.structs.get("params").map(String::as_str), Some("Thread"));
    }

    #[test]
    fn externally_tagged_payloads_and_map_keys() {
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Policy {
            Never,
            Granular(Inner),
            Unrecognized(Value),
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Inner {
            mode: Status,
        }
        let by_key: std::collections::BTreeMap<String, Policy> = [
            ("a \"quoted\" key".to_owned(), Policy::Granular(Inner { mode: Status::Unrecognized("x".into()) })),
            ("b".to_owned(), Policy::Never),
            ("c".to_owned(), Policy::Unrecognized(json!({"other": {}}))),
        ]
        .into_iter()
        .collect();
        let json = json!({"a \"quoted\" key": {"granular": {"mode": "x"}}, "b": "never", "c": {"other": {}}});
        let walk = walk(&format!("{by_key:?}"), &json, "").unwrap();
        let paths: Vec<&str> = walk.unrecognized.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, [r#"["a \"quoted\" key"].granular.mode"#, "c"]);
        assert_eq!(walk.unrecognized[1].1, "unknown union variant `other` (single-key object)");
    }

    #[test]
    fn bad_debug_text_is_an_error_not_a_panic() {
        for text in ["Name { a: ", "\"open", "Name(1, ", "{1: }", "[1 2]", "", "Name { a: 1 } trailing", "é"] {
            assert!(walk(text, &json!(null), "").is_err(), "{text}");
        }
        assert!(walk("Some(\"é\")", &json!("é"), "").unwrap().unrecognized.is_empty());
    }

    #[test]
    fn unescapes_debug_strings() {
        assert_eq!(unescape(r#"a\"b\\c\n\u{1f600}\u{zz}"#), "a\"b\\c\n\u{1f600}\\u{zz}");
    }
}
