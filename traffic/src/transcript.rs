//! The transcript format: what was said on one `codex app-server` connection, in order.
//!
//! A transcript is NDJSON, one object per line:
//!
//! ```text
//! {"dir":"c2s","line":"{\"id\":1,\"method\":\"initialize\",\"params\":{...}}"}
//! {"dir":"s2c","line":"{\"id\":1,\"result\":{...}}"}
//! {"dir":"c2s","line":"this is not JSON","bad":true}
//! ```
//!
//! - `dir`: `"c2s"` (client to server, written to the server's stdin) or `"s2c"` (server to
//!   client, read from its stdout).
//! - `line`: the exact wire line, without its newline, as a JSON string. It need not be JSON.
//! - `bad` (optional, only on `c2s` lines): the client sent this line deliberately malformed
//!   (a non-JSON line, an unknown method, wrong params). The drift check still decodes it and
//!   reports what it finds, but as expected, not as drift.
//!
//! Blank lines are skipped. Any other member, a missing member or `bad` on a server line is an
//! error: a transcript is a test fixture, and a typo in it must not pass silently.
//!
//! Plain NDJSON of one side (a saved server stdout, a client log) is read with
//! [`Format::OneSided`]: every non-blank line is one wire line of that side.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Which way a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Dir {
    /// Client to server.
    #[serde(rename = "c2s")]
    C2s,
    /// Server to client.
    #[serde(rename = "s2c")]
    S2c,
}

impl Dir {
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::C2s => "c2s",
            Dir::S2c => "s2c",
        }
    }

    /// The other direction (a response goes the opposite way of its request).
    pub fn opposite(self) -> Dir {
        match self {
            Dir::C2s => Dir::S2c,
            Dir::S2c => Dir::C2s,
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The side that wrote a one-sided NDJSON file (`--from server|client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Client,
}

impl Side {
    /// The direction of every line that side wrote.
    pub fn dir(self) -> Dir {
        match self {
            Side::Server => Dir::S2c,
            Side::Client => Dir::C2s,
        }
    }
}

impl std::str::FromStr for Side {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "server" => Ok(Side::Server),
            "client" => Ok(Side::Client),
            other => Err(format!("expected `server` or `client`, got `{other}`")),
        }
    }
}

/// How a file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"dir", "line"}` objects (both sides).
    Transcript,
    /// Plain NDJSON written by one side.
    OneSided(Side),
}

/// One line of traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line number in the file it was read from (0 for entries built in memory).
    pub number: usize,
    pub dir: Dir,
    /// The wire line, without its newline.
    pub line: String,
    /// A deliberately malformed client line.
    pub bad: bool,
}

impl Entry {
    pub fn new(dir: Dir, line: impl Into<String>) -> Entry {
        Entry { number: 0, dir, line: line.into(), bad: false }
    }

    /// This entry as one transcript line (without the newline): `{"dir","line"}`, plus
    /// `"bad":true` when marked.
    pub fn to_transcript_line(&self) -> String {
        #[derive(Serialize)]
        struct Out<'a> {
            dir: Dir,
            line: &'a str,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            bad: bool,
        }
        serde_json::to_string(&Out { dir: self.dir, line: &self.line, bad: self.bad })
            .expect("a struct of strings and a bool always serializes")
    }
}

/// Writes entries as a transcript: one object per line, each line ending in `\n`.
pub fn to_transcript(entries: &[Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        out.push_str(&e.to_transcript_line());
        out.push('\n');
    }
    out
}

/// A file that is not a valid transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptError {
    /// 1-based line number, when the error is about one line.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TranscriptError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Object<'a> {
    dir: Dir,
    #[serde(borrow)]
    line: Cow<'a, str>,
    #[serde(default)]
    bad: bool,
}

/// Parses the text of a file in `format`.
pub fn parse(text: &str, format: Format) -> Result<Vec<Entry>, TranscriptError> {
    let mut entries = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let number = index + 1;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let entry = match format {
            Format::OneSided(side) => Entry { number, dir: side.dir(), line: raw.to_owned(), bad: false },
            Format::Transcript => {
                let object: Object<'_> = serde_json::from_str(raw).map_err(|e| TranscriptError {
                    line: Some(number),
                    message: format!(
                        "not a transcript object {{\"dir\": \"c2s\"|\"s2c\", \"line\": \"...\", \"bad\"?: true}} ({e}); \
                         for plain NDJSON of one side pass `--from server` or `--from client`"
                    ),
                })?;
                if object.bad && object.dir != Dir::C2s {
                    return Err(TranscriptError {
                        line: Some(number),
                        message: "`bad` marks deliberately malformed client lines; it is not allowed on an s2c line"
                            .into(),
                    });
                }
                if object.line.contains('\n') {
                    return Err(TranscriptError {
                        line: Some(number),
                        message: "`line` contains a newline; a wire line cannot".into(),
                    });
                }
                Entry { number, dir: object.dir, line: object.line.into_owned(), bad: object.bad }
            }
        };
        entries.push(entry);
    }
    Ok(entries)
}

/// Reads and parses a file.
pub fn read_file(path: &Path, format: Format) -> Result<Vec<Entry>, TranscriptError> {
    let bytes = std::fs::read(path)
        .map_err(|e| TranscriptError { line: None, message: format!("cannot read {}: {e}", path.display()) })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        TranscriptError { line: Some(line), message: format!("{} is not UTF-8 text", path.display()) }
    })?;
    parse(&text, format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_transcript_lines() {
        let mut bad = Entry::new(Dir::C2s, "not \"JSON\"\t\u{1}");
        bad.bad = true;
        let entries = vec![
            Entry::new(Dir::C2s, r#"{"id":1,"method":"x"}"#),
            Entry::new(Dir::S2c, r#"{"id":1,"result":{}}"#),
            bad,
        ];
        let text = to_transcript(&entries);
        assert_eq!(text.lines().next().unwrap(), r#"{"dir":"c2s","line":"{\"id\":1,\"method\":\"x\"}"}"#);
        assert!(text.lines().nth(2).unwrap().ends_with(r#","bad":true}"#));
        let back = parse(&text, Format::Transcript).unwrap();
        let numbers: Vec<usize> = back.iter().map(|e| e.number).collect();
        assert_eq!(numbers, [1, 2, 3]);
        let stripped: Vec<Entry> = back.into_iter().map(|e| Entry { number: 0, ..e }).collect();
        assert_eq!(stripped, entries);
    }

    #[test]
    fn rejects_malformed_transcripts() {
        let err = parse("\n{\"dir\":\"c2s\"}\n", Format::Transcript).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("missing field `line`"), "{err}");
        let err = parse(r#"{"dir":"sideways","line":"x"}"#, Format::Transcript).unwrap_err();
        assert!(err.message.contains("unknown variant `sideways`"), "{err}");
        let err = parse(r#"{"dir":"s2c","line":"x","bad":true}"#, Format::Transcript).unwrap_err();
        assert!(err.message.contains("not allowed on an s2c line"), "{err}");
        let err = parse(r#"{"dir":"c2s","line":"x","extra":1}"#, Format::Transcript).unwrap_err();
        assert!(err.message.contains("unknown field `extra`"), "{err}");
        let err = parse(r#"{"id":1,"result":{}}"#, Format::Transcript).unwrap_err();
        assert!(err.message.contains("--from server"), "{err}");
    }

    #[test]
    fn one_sided_files() {
        let text = "{\"id\":1,\"result\":{}}\r\n\nnot json\n";
        let entries = parse(text, Format::OneSided(Side::Server)).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].line, r#"{"id":1,"result":{}}"#);
        assert_eq!((entries[1].number, entries[1].dir, entries[1].line.as_str()), (3, Dir::S2c, "not json"));
        let client = parse("{}\n", Format::OneSided(Side::Client)).unwrap();
        assert_eq!(client[0].dir, Dir::C2s);
        assert_eq!("client".parse::<Side>(), Ok(Side::Client));
        assert!("both".parse::<Side>().is_err());
    }
}
