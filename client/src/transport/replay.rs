//! Replay (feature `replay`): a recorded session as the server, so that an application's tests
//! run without codex.
//!
//! Record a session once against the real codex with the [`Tap`](crate::Tap) (its transcript:
//! one `{"dir":"c2s"|"s2c","line":"..."}` per line), then give the transcript to
//! [`Replay`] and connect the client to its [`ReplayTransport`]:
//!
//! - each line the application sends is matched to a line the client sent in the recording
//!   (see [the matching rule](#the-matching-rule)); a request is answered with the recorded
//!   response, under the application's id;
//! - each line the server sent is sent once every client line recorded before it has been
//!   matched: the notifications and server requests that followed a request come after it,
//!   and the application's answers to the server's requests are matched in turn;
//! - a request the transcript does not have is answered with a JSON-RPC error
//!   ([`MISMATCH`]) whose message is a diff against the nearest recorded request (the one of
//!   the same method that differs least), so the application's call fails with it;
//! - [`ReplayCheck::finish`] says, at the end of the test, what did not match and which
//!   recorded client lines the application never sent.
//!
//! # The matching rule
//!
//! A request matches a recorded request of the same method whose params are equal after both
//! are normalized; a notification likewise; an answer to a server request matches the
//! recorded answer with the same id (the server's ids are replayed as recorded) and an equal
//! result or error. Recorded lines are matched at most once, the earliest first. What may
//! differ:
//!
//! - **ids** of the application's requests (the recorded response is sent with the
//!   application's id);
//! - **`null` and absent** members, as the protocol treats them;
//! - **UUIDs** (any string of the 8-4-4-4-12 hex form, and the traffic fixtures' `<uuid:N>`
//!   placeholders): compared as `<uuid>`;
//! - **timestamps**: numbers and strings of members whose name ends in `At` or `AtMs`, or is
//!   `timestamp`: compared as `<time>`;
//! - **temporary paths**: the system's temporary folder (`std::env::temp_dir()`, and `/tmp`)
//!   at the start of a string is compared as `<tmp>`, and a folder name made by `tempfile`
//!   (`.tmp` and six characters) after it as `<tmpname>`;
//! - members named with [`Replay::ignore_member`], wherever they are.
//!
//! Everything else must be equal: a changed prompt, option or method is a mismatch.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::{LineReceiver, LineSender, Transport};

/// The JSON-RPC error code of the answer to a request the transcript does not have.
pub const MISMATCH: i64 = -32099;

/// A transcript to replay as the server; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct Replay {
    entries: Vec<Recorded>,
    ignored: Vec<String>,
}

/// One line of the transcript.
#[derive(Debug, Clone)]
struct Recorded {
    /// The 1-based line of the transcript.
    number: usize,
    from_client: bool,
    line: String,
    value: Value,
}

/// A transcript that could not be read.
#[derive(Debug)]
pub struct ReplayError(String);

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

impl Replay {
    /// Reads a transcript as the tap writes it (blank lines are skipped).
    pub fn from_transcript(text: &str) -> Result<Replay, ReplayError> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let number = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let bad = |why: String| ReplayError(format!("transcript line {number}: {why}"));
            let entry: Value = serde_json::from_str(raw).map_err(|e| bad(format!("not JSON: {e}")))?;
            let from_client = match entry.get("dir").and_then(Value::as_str) {
                Some("c2s") => true,
                Some("s2c") => false,
                _ => return Err(bad("`dir` is not \"c2s\" or \"s2c\"".into())),
            };
            let line = entry.get("line").and_then(Value::as_str).ok_or_else(|| bad("no `line` string".into()))?;
            let value = serde_json::from_str(line).map_err(|e| bad(format!("its `line` is not JSON: {e}")))?;
            entries.push(Recorded { number, from_client, line: line.to_owned(), value });
        }
        Ok(Replay { entries, ignored: Vec::new() })
    }

    /// Reads the transcript in the file at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Replay, ReplayError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReplayError(format!("cannot read the transcript {}: {e}", path.display())))?;
        Replay::from_transcript(&text).map_err(|e| ReplayError(format!("{}: {e}", path.display())))
    }

    /// Members named `name` are left out of the comparison wherever they are (a value the
    /// application makes anew each run, say).
    pub fn ignore_member(mut self, name: impl Into<String>) -> Self {
        self.ignored.push(name.into());
        self
    }

    /// The transport to connect the client with, and the check to finish the test with.
    pub fn start(self) -> (ReplayTransport, ReplayCheck) {
        let (to_client, from_server) = mpsc::unbounded_channel();
        let mut state = State {
            consumed: vec![false; self.entries.len()],
            sent: vec![false; self.entries.len()],
            entries: self.entries,
            ignored: self.ignored,
            ids: HashMap::new(),
            to_client: Some(to_client),
            mismatches: Vec::new(),
        };
        state.release();
        let shared = Arc::new(Mutex::new(state));
        (ReplayTransport { shared: shared.clone(), from_server }, ReplayCheck { shared })
    }
}

/// The server's side of a replay: what the transcript has, matched and sent.
#[derive(Debug)]
struct State {
    entries: Vec<Recorded>,
    /// Client lines matched.
    consumed: Vec<bool>,
    /// Server lines sent.
    sent: Vec<bool>,
    ignored: Vec<String>,
    /// The recorded id of a matched request (as JSON text) -> the application's id.
    ids: HashMap<String, Value>,
    /// `None` once the application closed its side.
    to_client: Option<mpsc::UnboundedSender<String>>,
    mismatches: Vec<Mismatch>,
}

/// A line of the application that no recorded line matches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Mismatch {
    /// The line the application sent.
    pub line: String,
    /// What is wrong: a diff against the nearest recorded line, or why there is none.
    pub report: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

/// What kind of client line, and what it is matched by.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A request (its method) or a notification.
    Call { method: String, request: bool },
    /// An answer to the server's request with this id.
    Answer { id: String },
}

fn kind(value: &Value) -> Option<Kind> {
    let id = value.get("id").filter(|id| !id.is_null());
    match value.get("method").and_then(Value::as_str) {
        Some(method) => Some(Kind::Call { method: method.to_owned(), request: id.is_some() }),
        None => Some(Kind::Answer { id: id?.to_string() }),
    }
}

/// What of a client line is compared: params for a call, result or error for an answer.
fn payload(value: &Value) -> Value {
    let mut object = Map::new();
    for key in ["params", "result", "error"] {
        if let Some(v) = value.get(key) {
            object.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(object)
}

impl State {
    /// Sends every server line whose earlier client lines have all been matched.
    fn release(&mut self) {
        for i in 0..self.entries.len() {
            let entry = &self.entries[i];
            if entry.from_client {
                if !self.consumed[i] {
                    return;
                }
                continue;
            }
            if self.sent[i] {
                continue;
            }
            self.sent[i] = true;
            let line = self.server_line(i);
            self.send(line);
        }
    }

    /// The recorded server line `i`, a response under the application's id.
    fn server_line(&self, i: usize) -> String {
        let entry = &self.entries[i];
        let is_response = entry.value.get("method").is_none();
        match entry.value.get("id").map(Value::to_string).and_then(|id| self.ids.get(&id)) {
            Some(id) if is_response => {
                let mut value = entry.value.clone();
                value["id"] = id.clone();
                value.to_string()
            }
            _ => entry.line.clone(),
        }
    }

    fn send(&self, line: String) {
        if let Some(to_client) = &self.to_client {
            let _ = to_client.send(line);
        }
    }

    /// Matches a line of the application, answers or records a mismatch, and sends what it
    /// releases.
    fn client_line(&mut self, line: String) {
        let value: Value = match serde_json::from_str(&line) {
            Ok(value) => value,
            Err(e) => {
                return self.mismatch(line, None, format!("replay: the application sent a line that is not JSON ({e})"))
            }
        };
        let Some(kind) = kind(&value) else {
            return self.mismatch(line, None, "replay: the application sent a line without a method or id".into());
        };
        let wanted = normalize(&payload(&value), None, &self.ignored);
        let candidates: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].from_client && !self.consumed[i])
            .filter(|&i| kind_of(&self.entries[i]).as_ref() == Some(&kind))
            .collect();
        let found = candidates
            .iter()
            .copied()
            .find(|&i| normalize(&payload(&self.entries[i].value), None, &self.ignored) == wanted);
        match found {
            Some(i) => {
                self.consumed[i] = true;
                if let (Kind::Call { request: true, .. }, Some(recorded), Some(id)) =
                    (&kind, self.entries[i].value.get("id"), value.get("id"))
                {
                    self.ids.insert(recorded.to_string(), id.clone());
                }
                self.release();
            }
            None => {
                let report = self.report(&kind, &wanted, &candidates);
                let id = match kind {
                    Kind::Call { request: true, .. } => value.get("id").cloned(),
                    _ => None,
                };
                self.mismatch(line, id, report);
            }
        }
    }

    /// The diff against the nearest recorded line of the same kind, or why there is none.
    fn report(&self, kind: &Kind, wanted: &Value, candidates: &[usize]) -> String {
        let what = match kind {
            Kind::Call { method, request: true } => format!("`{method}` request"),
            Kind::Call { method, request: false } => format!("`{method}` notification"),
            Kind::Answer { id } => format!("answer to the server's request {id}"),
        };
        let wanted_text = pretty(wanted);
        let nearest = candidates
            .iter()
            .map(|&i| {
                let recorded = pretty(&normalize(&payload(&self.entries[i].value), None, &self.ignored));
                let ratio = similar::TextDiff::from_lines(&recorded, &wanted_text).ratio();
                (i, recorded, ratio)
            })
            .max_by(|a, b| a.2.total_cmp(&b.2));
        match nearest {
            Some((i, recorded, _)) => {
                let diff = similar::TextDiff::from_lines(&recorded, &wanted_text);
                let unified = diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("recorded (transcript line {})", self.entries[i].number), "sent")
                    .to_string();
                format!("replay: the transcript has no {what} like this one; against the nearest recorded one (normalized):\n{unified}")
            }
            None => {
                let recorded = (0..self.entries.len())
                    .filter(|&i| self.entries[i].from_client && !self.consumed[i])
                    .filter_map(|i| kind_of(&self.entries[i]).map(|k| describe(&k)))
                    .collect::<Vec<_>>();
                let left = if recorded.is_empty() { "nothing".to_owned() } else { recorded.join(", ") };
                format!(
                    "replay: the transcript has no {what} left to match (sent: {}); the recorded client lines not yet matched: {left}",
                    wanted_text.replace('\n', " ")
                )
            }
        }
    }

    fn mismatch(&mut self, line: String, id: Option<Value>, report: String) {
        tracing::warn!(target: "codex_app_client::replay", "{report}");
        if let Some(id) = id {
            let error = json!({"id": id, "error": {"code": MISMATCH, "message": report}});
            self.send(error.to_string());
        }
        self.mismatches.push(Mismatch { line, report });
    }
}

fn kind_of(entry: &Recorded) -> Option<Kind> {
    kind(&entry.value)
}

fn describe(kind: &Kind) -> String {
    match kind {
        Kind::Call { method, .. } => format!("`{method}`"),
        Kind::Answer { id } => format!("the answer to server request {id}"),
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// `value` under the matching rule (see the [module docs](self)); `key`: the member it is
/// the value of.
fn normalize(value: &Value, key: Option<&str>, ignored: &[String]) -> Value {
    let timestamp = key.is_some_and(|k| k.ends_with("At") || k.ends_with("AtMs") || k == "timestamp");
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(k, v)| !v.is_null() && !ignored.iter().any(|name| name == *k))
                .map(|(k, v)| (k.clone(), normalize(v, Some(k), ignored)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize(v, None, ignored)).collect()),
        Value::Number(_) | Value::String(_) if timestamp => Value::String("<time>".into()),
        Value::String(text) => Value::String(normalize_text(text)),
        other => other.clone(),
    }
}

/// A string under the matching rule: UUIDs, temporary folders.
fn normalize_text(text: &str) -> String {
    let mut text = text.to_owned();
    let temp = std::env::temp_dir();
    for prefix in [temp.to_string_lossy().trim_end_matches('/').to_owned(), "/tmp".to_owned()] {
        if !prefix.is_empty() && text.starts_with(&prefix) {
            let rest = &text[prefix.len()..];
            if rest.is_empty() || rest.starts_with('/') {
                text = format!("<tmp>{rest}");
                break;
            }
        }
    }
    // `tempfile` names: `.tmp` and six characters, or a prefix of one's own then six.
    text = replace_words(&text, |word| {
        let six = |s: &str| s.len() == 6 && s.chars().all(|c| c.is_ascii_alphanumeric());
        (word.starts_with(".tmp") && six(&word[4..])).then(|| "<tmpname>".to_owned())
    });
    replace_words(&text, |word| {
        let uuid = word.len() == 36
            && word
                .char_indices()
                .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() });
        let placeholder = word.starts_with("<uuid:") && word.ends_with('>');
        (uuid || placeholder).then(|| "<uuid>".to_owned())
    })
}

/// `text` with each word (split at `/`, whitespace, `"`, `'`, `,`, `=` and `:` outside
/// `<...>`) that `replace` maps replaced.
fn replace_words(text: &str, replace: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut angle = false;
    let flush = |word: &mut String, out: &mut String| {
        match replace(word) {
            Some(replaced) => out.push_str(&replaced),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        angle = match c {
            '<' => true,
            '>' => false,
            _ => angle,
        };
        let separator = matches!(c, '/' | '"' | '\'' | ',' | '=') || c.is_whitespace() || (c == ':' && !angle);
        if separator {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The client's end of a replay; see [`Replay::start`].
#[derive(Debug)]
pub struct ReplayTransport {
    shared: Arc<Mutex<State>>,
    from_server: mpsc::UnboundedReceiver<String>,
}

/// The client-to-server half of a [`ReplayTransport`]: matches each line.
#[derive(Debug)]
pub struct ReplaySender(Arc<Mutex<State>>);

/// The server-to-client half of a [`ReplayTransport`]: the recorded lines, as released.
#[derive(Debug)]
pub struct ReplayReceiver(mpsc::UnboundedReceiver<String>);

impl Transport for ReplayTransport {
    type Sender = ReplaySender;
    type Receiver = ReplayReceiver;

    fn split(self) -> (ReplaySender, ReplayReceiver) {
        (ReplaySender(self.shared), ReplayReceiver(self.from_server))
    }
}

fn lock(shared: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

impl LineSender for ReplaySender {
    async fn send(&mut self, line: String) -> io::Result<()> {
        lock(&self.0).client_line(line);
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        // The server's side ends: the client reads what was released, then the end.
        lock(&self.0).to_client = None;
        Ok(())
    }
}

impl Drop for ReplaySender {
    fn drop(&mut self) {
        lock(&self.0).to_client = None;
    }
}

impl LineReceiver for ReplayReceiver {
    async fn recv(&mut self) -> io::Result<Option<String>> {
        Ok(self.0.recv().await)
    }

    async fn recv_many(&mut self, lines: &mut Vec<String>, max: usize) -> io::Result<usize> {
        Ok(self.0.recv_many(lines, max.max(1)).await)
    }
}

/// The end of a replay: what did not match. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ReplayCheck {
    shared: Arc<Mutex<State>>,
}

/// What [`ReplayCheck::finish`] found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayReport {
    /// The application's lines no recorded line matched, in order.
    pub mismatches: Vec<Mismatch>,
    /// The recorded client lines the application did not send: (transcript line, the line).
    pub unsent: Vec<(usize, String)>,
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the session differs from its recording:")?;
        for mismatch in &self.mismatches {
            write!(f, "\n{mismatch}")?;
        }
        if !self.unsent.is_empty() {
            write!(f, "\nthe application did not send what the transcript has on these lines:")?;
            for (number, line) in &self.unsent {
                write!(f, "\n  {number}: {line}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ReplayReport {}

impl ReplayCheck {
    /// The mismatches so far.
    pub fn mismatches(&self) -> Vec<Mismatch> {
        lock(&self.shared).mismatches.clone()
    }

    /// `Ok` when every line the application sent matched a recorded one and every recorded
    /// client line was sent; else what differs. Call it at the end of the test (after the
    /// client's [`shutdown`](crate::Client::shutdown)).
    pub fn finish(&self) -> Result<(), ReplayReport> {
        let state = lock(&self.shared);
        let unsent: Vec<(usize, String)> = (0..state.entries.len())
            .filter(|&i| state.entries[i].from_client && !state.consumed[i])
            .map(|i| (state.entries[i].number, state.entries[i].line.clone()))
            .collect();
        if state.mismatches.is_empty() && unsent.is_empty() {
            return Ok(());
        }
        Err(ReplayReport { mismatches: state.mismatches.clone(), unsent })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matching_rule() {
        let n = |v: Value| normalize(&v, None, &["nonce".to_owned()]);
        assert_eq!(
            n(
                json!({"threadId": "01a232a3-8d90-7790-bc7e-6b5aac9c1e52", "x": null, "nonce": 4, "cwd": "/tmp/.tmpAb12Cd/work"})
            ),
            json!({"threadId": "<uuid>", "cwd": "<tmp>/<tmpname>/work"})
        );
        assert_eq!(
            n(json!({"createdAt": 5, "emittedAtMs": 7, "timestamp": "t"})),
            n(json!({"createdAt": 6, "emittedAtMs": 1, "timestamp": "u"}))
        );
        assert_eq!(n(json!({"id": "<uuid:2>"})), json!({"id": "<uuid>"}));
        assert_ne!(n(json!({"text": "What is 2+2?"})), n(json!({"text": "What is 2+3?"})));
        assert_eq!(normalize_text("see /var/x and 1234"), "see /var/x and 1234");
    }
}
