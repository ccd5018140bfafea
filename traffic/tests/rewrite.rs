//! A line written again as another JSON writer might write it: members rotated and sometimes
//! reversed, whitespace between tokens, strings escaped where JSON allows it. Deterministic:
//! the same rewrite on every run. Shared by the tests that check such lines are the same
//! messages (`other_writers.rs` here, and the protocol crate's `stable_sessions.rs`, which
//! includes this file by its path).

use serde_json::value::RawValue;
use serde_json::Value;

/// Each of `lines` that is JSON text written again by another writer, in place, with
/// `choices`; how many were (the others are left as they are: not JSON, or a message that gives
/// a member of its envelope twice, which a rewrite through `Value` would give once, a message
/// codex reads where it reads none; inside the envelope, `Value` keeps the last value, as codex
/// and the crate read it).
pub(crate) fn rewrite_all<'a>(lines: impl IntoIterator<Item = &'a mut String>, choices: &mut Choices) -> usize {
    let mut rewritten = 0;
    for line in lines {
        let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
        if serde_json::from_str::<Members>(line)
            .is_ok_and(|Members(m)| m.iter().enumerate().any(|(i, (key, _))| m[..i].iter().any(|(k, _)| k == key)))
        {
            continue;
        }
        let mut out = String::new();
        write(&value, choices, &mut out);
        assert_eq!(serde_json::from_str::<Value>(&out).ok(), Some(value), "{out}");
        *line = out;
        rewritten += 1;
    }
    rewritten
}

/// The top-level members of a JSON object line, in order, each given twice kept twice, values
/// as written.
pub(crate) struct Members(pub(crate) Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A small deterministic generator (xorshift64): the same rewrite on every run.
pub(crate) struct Choices(pub(crate) u64);

impl Choices {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// One of `n` (n > 0).
    fn pick(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// JSON's whitespace, as other writers put it between tokens (none, one space, a tab, a
/// carriage return, several).
fn space(choices: &mut Choices, out: &mut String) {
    out.push_str(["", "", " ", "\t", "\r", "  \t "][choices.pick(6)]);
}

/// `s` as a JSON string, each character written plainly or as an escape JSON allows for it
/// (`\uXXXX` for any, a surrogate pair above the first plane, `\/` for a slash); what must be
/// escaped always is.
fn string(s: &str, choices: &mut Choices, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let escape = choices.pick(3) == 0;
        match c {
            '"' => out.push_str(["\\\"", "\\u0022"][choices.pick(2)]),
            '\\' => out.push_str(["\\\\", "\\u005C"][choices.pick(2)]),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '/' if escape => out.push_str("\\/"),
            c if (c as u32) < 0x20 || escape => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `value` written by another writer: members rotated and sometimes reversed, whitespace
/// between tokens, strings escaped; numbers as serde_json writes them (their kind, integer or
/// float, is part of the value).
fn write(value: &Value, choices: &mut Choices, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            if !members.is_empty() {
                let by = choices.pick(members.len() as u64);
                members.rotate_left(by);
            }
            if choices.pick(2) == 0 {
                members.reverse();
            }
            sequence(('{', '}'), members, choices, out, |(key, value), choices, out| {
                string(key, choices, out);
                space(choices, out);
                out.push(':');
                space(choices, out);
                write(value, choices, out);
            });
        }
        Value::Array(items) => sequence(('[', ']'), items, choices, out, write),
        Value::String(s) => string(s, choices, out),
        other => out.push_str(&other.to_string()),
    }
}

/// `items` between the two `brackets`, separated by commas, each written by `each` with
/// whitespace on both sides.
fn sequence<T>(
    brackets: (char, char),
    items: impl IntoIterator<Item = T>,
    choices: &mut Choices,
    out: &mut String,
    mut each: impl FnMut(T, &mut Choices, &mut String),
) {
    out.push(brackets.0);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        space(choices, out);
        each(item, choices, out);
        space(choices, out);
    }
    out.push(brackets.1);
}
