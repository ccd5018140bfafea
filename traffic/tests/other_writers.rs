//! Lines written by another JSON writer than codex's: every line of every recorded release's
//! fixtures, both directions, written again with its members in another order, whitespace
//! between its tokens and its strings (keys, method names and values) escaped where JSON
//! allows it, is the same message. The drift check finds on it exactly what it finds on the
//! line as codex wrote it, each finding with the same kind, method and path: for the current
//! release, nothing but the lines marked bad.

use std::path::PathBuf;

use codex_app_traffic::drift::{self, Finding};
use codex_app_traffic::transcript::{self, Entry};
use codex_app_traffic::Format;
use serde_json::Value;

use crate::support::{fixtures_dir, fixtures_for_test};

/// A small deterministic generator (xorshift64): the same rewrite on every run.
struct Choices(u64);

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
            out.push('{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                space(choices, out);
                string(key, choices, out);
                space(choices, out);
                out.push(':');
                space(choices, out);
                write(value, choices, out);
                space(choices, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                space(choices, out);
                write(item, choices, out);
                space(choices, out);
            }
            out.push(']');
        }
        Value::String(s) => string(s, choices, out),
        other => out.push_str(&other.to_string()),
    }
}

/// What the drift check says of a line, but the detail's text (which names columns).
fn finding(f: &Finding) -> String {
    format!(
        "{} {} {:?} {:?} {} expected={}",
        f.number,
        f.dir,
        f.kind,
        f.method,
        f.path.as_ref().map(ToString::to_string).unwrap_or_default(),
        f.expected
    )
}

#[test]
fn every_fixture_line_written_by_another_writer_is_the_same_message() {
    let Some(current) = fixtures_for_test("every_fixture_line_written_by_another_writer_is_the_same_message") else {
        return;
    };
    let root = fixtures_dir().parent().unwrap().to_path_buf();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    paths.sort();
    let mut choices = Choices(0x9E37_79B9_7F4A_7C15);
    let mut rewritten = 0;
    for path in &paths {
        let entries = transcript::read_file(path, Format::Transcript).unwrap();
        let others: Vec<Entry> = entries
            .iter()
            .map(|entry| {
                let mut other = entry.clone();
                if let Ok(value) = serde_json::from_str::<Value>(&entry.line) {
                    let mut line = String::new();
                    write(&value, &mut choices, &mut line);
                    assert_eq!(serde_json::from_str::<Value>(&line).ok(), Some(value), "{line}");
                    other.line = line;
                    rewritten += 1;
                }
                other
            })
            .collect();
        let as_codex_wrote = drift::check(&entries, Format::Transcript);
        let as_others_write = drift::check(&others, Format::Transcript);
        let found = |report: &drift::Report| report.findings.iter().map(finding).collect::<Vec<_>>();
        assert_eq!(found(&as_others_write), found(&as_codex_wrote), "{}", path.display());
        assert_eq!(
            (as_others_write.typed, &as_others_write.methods),
            (as_codex_wrote.typed, &as_codex_wrote.methods),
            "{}: other lines typed",
            path.display()
        );
        if current.contains(path) {
            let drift: Vec<String> = as_others_write.drift().map(ToString::to_string).collect();
            assert!(drift.is_empty(), "{}: {drift:#?}", path.display());
        }
    }
    assert!(paths.len() > current.len(), "no older release's fixtures");
    assert!(rewritten > 1000, "only {rewritten} lines rewritten");
}
