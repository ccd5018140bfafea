//! The drift check: decode every line of a transcript with the typed crate and report where
//! the wire and the types disagree.
//!
//! For each line, in order:
//!
//! 1. Not JSON: [`Kind::NotJson`] (valid JSON nested deeper than a `Value` follows is
//!    checked like any line, as a `Value` cut at 64 levels). Not a JSON-RPC envelope (no `method`/`result`/`error`, an
//!    `id` that is no string or integer, `"jsonrpc"` other than `"2.0"`): [`Kind::NotAMessage`].
//!    So is a client's line that gives a member of the envelope twice (`id`, `method`,
//!    `params`, `result` or `error`), which codex does not read: it answers nothing. The
//!    crate's decoders take the last value, as they do of any member given twice.
//! 2. A request or notification is decoded as `ClientMessage` (c2s) or `ServerMessage` (s2c).
//!    A method the crate does not know is [`Kind::UnknownMethod`]; a known method whose params
//!    do not match is [`Kind::Undecodable`] with the serde path (`params.thread.id`). A
//!    client's method with `"id": null` is a notification, as codex reads it (the crate's
//!    decoders take it for no message: the client answers such a server request with an error).
//!    A request's `id -> method` is remembered for its response.
//! 3. A response is typed through the method of the request with the same id earlier in the
//!    transcript in the opposite direction (`ClientResponse::decode` for s2c responses,
//!    `ServerResponse::decode` for c2s ones). No such request: [`Kind::OrphanResponse`]
//!    (in a one-sided file there are no requests of the other side; its responses are counted
//!    as untyped instead). Error responses are decoded as `ErrorResponse`.
//! 4. Every decoded message is encoded again and compared with the line, as JSON values, under
//!    the crate's null policy: a member whose value is `null` equals an absent member, except
//!    where the type is `Option<Option<T>>` (reported by the generated walk); a top-level
//!    `"jsonrpc": "2.0"` is dropped by design; numbers compare by value (`1` equals `1.0`).
//!    - A member the re-encoding lost is a field the types do not know: [`Kind::UnknownField`],
//!      at its JSON path (the decoder skips it, so the re-encoding does not have it; inside
//!      unions the decoder buffers too). The comparison is the protocol crate's
//!      [`codex_app_protocol::roundtrip`], and it costs nothing more per type: a
//!      second, tracking decode per method type would compile the crate's whole decoder again.
//!    - Any other difference (a changed value, an added member, a different array length, a
//!      `null`/absent change of an `Option<Option<T>>` member) is [`Kind::RoundTrip`].
//! 5. `Unrecognized` variants anywhere inside the decoded value (unknown enum values and union
//!    tags, which round-trip unchanged): [`Kind::UnknownVariant`], found by the walk the
//!    protocol crate generates with every type (`codex_app_protocol::inspect`), which also says
//!    where a member is `Option<Option<T>>`.
//! 6. A method, member, enum value or union arm that the types lack because it belongs to
//!    codex's experimental API and the build has no `experimental` feature is
//!    [`Kind::Experimental`], not [`Kind::UnknownMethod`], [`Kind::UnknownField`] or
//!    [`Kind::UnknownVariant`]: codex sends some of its experimental members to clients that did
//!    not opt in, and a build with only the stable types rightly lacks them. What is
//!    experimental is read from the protocol crate's tables
//!    ([`codex_app_protocol::availability::experimental`]), which a build without the feature
//!    has too. Such findings are reported apart and are not drift
//!    ([`Report::experimental`]); a build with `experimental` never has them.
//!
//! Both directions go through one function, generic over the protocol crate's
//! [`codex_app_protocol::side::Side`].
//!
//! Lines marked `"bad": true` are checked the same way, but what is found on them is reported
//! as expected and is not drift.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::path::Path;

use codex_app_protocol::availability::experimental;
use codex_app_protocol::framing::excerpt;
use codex_app_protocol::inspect::{Inspect, Step};
use codex_app_protocol::jsonrpc::{DecodeError, DecodeErrorKind, Parts};
use codex_app_protocol::path::JsonPath;
use codex_app_protocol::roundtrip::{self, Difference};
use codex_app_protocol::side::{self, MessageOf, MethodEnum, ResultEnum, Side};
use codex_app_protocol::{ClientNotification, ClientRequest, Message, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::transcript::{self, Dir, Entry, Format, TranscriptError};
use super::unrecognized;

/// What kind of disagreement a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The line is not JSON.
    NotJson,
    /// JSON, but not a JSON-RPC message.
    NotAMessage,
    /// A known method (or a typed response) whose value does not match its type.
    Undecodable,
    /// A method the crate does not know.
    UnknownMethod,
    /// An enum value or union variant the crate does not know (an `Unrecognized` inside).
    UnknownVariant,
    /// A member the types do not know.
    UnknownField,
    /// The value does not survive decode -> encode.
    RoundTrip,
    /// A response whose id matches no earlier request of the other side.
    OrphanResponse,
    /// A method, member, enum value or union arm of codex's experimental API that this build's
    /// types leave out (built without the `experimental` feature): not drift of the types.
    Experimental,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::NotJson,
        Kind::NotAMessage,
        Kind::Undecodable,
        Kind::UnknownMethod,
        Kind::UnknownVariant,
        Kind::UnknownField,
        Kind::RoundTrip,
        Kind::OrphanResponse,
        Kind::Experimental,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::NotJson => "not-json",
            Kind::NotAMessage => "not-a-message",
            Kind::Undecodable => "undecodable",
            Kind::UnknownMethod => "unknown-method",
            Kind::UnknownVariant => "unknown-variant",
            Kind::UnknownField => "unknown-field",
            Kind::RoundTrip => "round-trip",
            Kind::OrphanResponse => "orphan-response",
            Kind::Experimental => "experimental",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One disagreement on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line number in the file.
    pub number: usize,
    pub dir: Dir,
    pub kind: Kind,
    /// The method of the message (for a response: of its request), when known.
    pub method: Option<String>,
    /// Where in the message (`params.thread.status`), when the finding is about one place.
    pub path: Option<JsonPath>,
    pub detail: String,
    /// Found on a line marked `bad`: reported, but not drift.
    pub expected: bool,
}

impl Finding {
    /// Whether the finding is drift of the types: not on a line marked `bad`, and not
    /// experimental API that the build leaves out ([`Kind::Experimental`]).
    pub fn is_drift(&self) -> bool {
        !self.expected && self.kind != Kind::Experimental
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.number, self.dir, self.kind)?;
        if let Some(method) = &self.method {
            write!(f, " `{method}`")?;
        }
        match &self.path {
            Some(path) if path.is_empty() => f.write_str(" at (top level)")?,
            Some(path) => write!(f, " at {path}")?,
            None => {}
        }
        write!(f, ": {}", self.detail)?;
        if self.expected {
            f.write_str(" (expected: line marked bad)")?;
        }
        Ok(())
    }
}

/// The kind of message, for the table of methods seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageKind {
    Request,
    Notification,
    Response,
    Error,
}

impl MessageKind {
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Request => "request",
            MessageKind::Notification => "notification",
            MessageKind::Response => "response",
            MessageKind::Error => "error",
        }
    }
}

/// The result of checking one transcript.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Lines checked.
    pub lines: usize,
    /// Lines decoded completely into typed values (a known method with typed params, a
    /// response typed by its request's method, an error response).
    pub typed: usize,
    /// Lines marked `bad`.
    pub bad: usize,
    /// Responses in a one-sided file, which cannot be typed without their requests.
    pub untyped_responses: usize,
    pub findings: Vec<Finding>,
    /// How often each (direction, kind, method) was seen; `?` for a response with no request.
    pub methods: BTreeMap<(Dir, MessageKind, String), usize>,
}

impl Report {
    /// Findings that are drift ([`Finding::is_drift`]): not on lines marked bad, not
    /// experimental API that the build leaves out.
    pub fn drift(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.is_drift())
    }

    pub fn drift_count(&self) -> usize {
        self.drift().count()
    }

    /// Members, values, arms and methods of codex's experimental API that this build's types
    /// leave out ([`Kind::Experimental`]; never in a build with the `experimental` feature).
    /// Not drift: codex sends some of them to clients that did not opt in. To fail on them
    /// too, assert that this is empty.
    pub fn experimental(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.expected && f.kind == Kind::Experimental)
    }

    pub fn experimental_count(&self) -> usize {
        self.experimental().count()
    }
}

/// Checks the entries of one transcript.
pub fn check(entries: &[Entry], format: Format) -> Report {
    let mut checker = Checker::new(matches!(format, Format::OneSided(_)));
    for entry in entries {
        checker.entry(entry);
    }
    checker.report
}

/// Reads and checks one file.
pub fn check_file(path: &Path, format: Format) -> Result<Report, TranscriptError> {
    transcript::read_file(path, format).map(|entries| check(&entries, format))
}

/// How deep [`shallow_value`] follows a line.
const SHALLOW_DEPTH: usize = 64;

/// A line as a `Value` down to [`SHALLOW_DEPTH`] levels; each value below that is the string
/// `(JSON nested deeper than 64 levels: N bytes)`. What is cut is read as raw text (serde_json
/// skips it without recursion), so any depth takes bounded stack. Used only for a line deeper
/// than a `Value` follows: the crate decodes such a line only if its deep part is one a
/// `Value` comparison does not need (an unknown member, which the re-encoding lacks, or
/// unknown params, which are not compared).
fn shallow_value(line: &str) -> serde_json::Result<Value> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::Deserialize as _;

    struct Shallow(usize);

    impl<'de> DeserializeSeed<'de> for Shallow {
        type Value = Value;

        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
            if self.0 == 0 {
                let raw = <Box<RawValue>>::deserialize(deserializer)?;
                return Ok(Value::String(format!(
                    "(JSON nested deeper than {SHALLOW_DEPTH} levels: {} bytes)",
                    raw.get().len()
                )));
            }
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Shallow {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(v.into())
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(v.into())
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element_seed(Shallow(self.0 - 1))? {
                items.push(item);
            }
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut members = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let value = map.next_value_seed(Shallow(self.0 - 1))?;
                members.insert(key, value);
            }
            Ok(Value::Object(members))
        }
    }

    let mut deserializer = serde_json::Deserializer::from_str(line);
    let value = Shallow(SHALLOW_DEPTH).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct Checker {
    one_sided: bool,
    /// The client's `initialize` asked for the experimental API.
    opted_in: bool,
    /// Open requests of each direction: id -> method (index 0: c2s, 1: s2c).
    /// Requests waiting for a response, per direction (`1` and `"1"` are different ids).
    pending: [HashMap<RequestId, String>; 2],
    report: Report,
}

fn slot(dir: Dir) -> usize {
    match dir {
        Dir::C2s => 0,
        Dir::S2c => 1,
    }
}

/// Where the typed value sits in the message and what to compare it with.
struct Typed<'a> {
    /// The whole line as JSON.
    original: &'a Value,
    /// The re-encoded message.
    reencoded: &'a Value,
    /// Where the typed value sits in the message (`[]` for a whole message, `result`).
    root: &'static [Step<'static>],
}

impl Checker {
    fn new(one_sided: bool) -> Checker {
        Checker { one_sided, opted_in: false, pending: Default::default(), report: Report::default() }
    }

    fn find(&mut self, e: &Entry, kind: Kind, method: Option<&str>, path: Option<JsonPath>, detail: impl Into<String>) {
        self.report.findings.push(Finding {
            number: e.number,
            dir: e.dir,
            kind,
            method: method.map(str::to_owned),
            path,
            detail: detail.into(),
            expected: e.bad,
        });
    }

    fn seen(&mut self, dir: Dir, kind: MessageKind, method: &str) {
        *self.report.methods.entry((dir, kind, method.to_owned())).or_default() += 1;
    }

    fn entry(&mut self, e: &Entry) {
        self.report.lines += 1;
        if e.bad {
            self.report.bad += 1;
        }
        let value: Value = match serde_json::from_str(&e.line) {
            Ok(v) => v,
            // Valid JSON nested deeper than a `Value` follows (serde_json's limit of 128
            // levels). The crate may still decode it (an unknown member of any depth is
            // skipped, unknown params are kept as text): the line is compared as a `Value` cut
            // at `SHALLOW_DEPTH` levels, and what the crate says decides the labels.
            Err(_) if serde_json::from_str::<&RawValue>(&e.line).is_ok() => match shallow_value(&e.line) {
                Ok(v) => v,
                Err(err) => return self.find(e, Kind::NotJson, None, None, format!("{err}: {}", excerpt(&e.line, 60))),
            },
            Err(err) => return self.find(e, Kind::NotJson, None, None, format!("{err}: {}", excerpt(&e.line, 60))),
        };
        if e.dir == Dir::C2s {
            if let Some(member) = repeated_envelope_member(&e.line) {
                let detail = format!(
                    "`{member}` given twice: codex does not read a message that gives a member of its envelope \
                     twice (it answers nothing)"
                );
                return self.find(e, Kind::NotAMessage, value.get("method").and_then(Value::as_str), None, detail);
            }
        }
        let mut parts = match Parts::parse(&e.line) {
            Ok(parts) => parts,
            Err(err) => return self.find(e, Kind::NotAMessage, None, None, err.to_string()),
        };
        // codex reads a client's method with `"id": null` as a notification (as JSON-RPC 1.0
        // writes notifications), where the crate's decoders see no message.
        if e.dir == Dir::C2s && parts.null_id && parts.method.is_some() {
            parts.null_id = false;
        }
        // Remember every request, also one whose params do not decode: its response is typed
        // by the method (or at least is no orphan).
        if let (Some(id), Some(method), None, None) = (&parts.id, &parts.method, parts.result, parts.error) {
            self.pending[slot(e.dir)].insert(id.clone(), method.to_string());
        }
        if e.dir == Dir::C2s && parts.method.as_deref() == Some("initialize") {
            self.opted_in = value.pointer("/params/capabilities/experimentalApi") == Some(&Value::Bool(true));
        }
        let typed = match e.dir {
            Dir::C2s => self.line::<side::Client>(e, &value, parts),
            Dir::S2c => self.line::<side::Server>(e, &value, parts),
        };
        if typed {
            self.report.typed += 1;
        }
    }

    fn decode_error(&mut self, e: &Entry, err: DecodeError) {
        let method = err.method.clone();
        match &err.kind {
            DecodeErrorKind::Member { error, .. } => {
                let detail = error.source.to_string();
                self.find(e, Kind::Undecodable, method.as_deref(), err.path(), detail)
            }
            _ => self.find(e, Kind::NotAMessage, method.as_deref(), None, err.to_string()),
        }
    }

    /// A line sent by side `S`: its requests and notifications are `S`'s, its responses answer
    /// requests of `S::Peer` and are typed by `S::Response`.
    fn line<S: Side>(&mut self, e: &Entry, value: &Value, parts: Parts<'_>) -> bool
    where
        S::Request: Inspect,
        S::Notification: Inspect,
        S::Response: Inspect,
    {
        match MessageOf::<S>::from_envelope(parts) {
            Err(err) => {
                self.decode_error(e, err);
                false
            }
            Ok(Message::Request(req)) => {
                let method = req.method().to_owned();
                self.seen(e.dir, MessageKind::Request, &method);
                if req.is_unrecognized() {
                    self.unknown_method(
                        e,
                        &method,
                        format!("no such {} request in this version of the crate", S::NAME),
                    );
                    return false;
                }
                self.typed_message(e, &method, value, &req)
            }
            Ok(Message::Notification(n)) => {
                let method = n.method().to_owned();
                self.seen(e.dir, MessageKind::Notification, &method);
                if n.is_unrecognized() {
                    let detail = format!("no such {} notification in this version of the crate", S::NAME);
                    self.unknown_method(e, &method, detail);
                    return false;
                }
                self.typed_message(e, &method, value, &n)
            }
            Ok(Message::Response(resp)) => {
                let Some(method) = self.request_of(e, &resp.id) else { return false };
                match S::Response::decode(&method, &resp.result) {
                    Err(err) => {
                        self.find(
                            e,
                            Kind::Undecodable,
                            Some(&method),
                            Some(JsonPath::root().key("result").join(&err.path)),
                            err.source.to_string(),
                        );
                        false
                    }
                    Ok(typed) if typed.is_unrecognized() => false,
                    Ok(typed) => self.typed_response(e, &method, value, &resp.id, &typed),
                }
            }
            Ok(Message::Error(err)) => self.error_response(e, value, err),
        }
    }

    /// A method the types do not know: of codex's experimental API (which this build leaves
    /// out), or unknown.
    fn unknown_method(&mut self, e: &Entry, method: &str, detail: String) {
        if experimental::is_method(method) {
            let detail = format!("a method {}", self.experimental_detail(e.dir));
            self.find(e, Kind::Experimental, Some(method), None, detail);
        } else {
            self.find(e, Kind::UnknownMethod, Some(method), None, detail);
        }
    }

    /// Why the types lack something of the experimental API, and who sent it.
    fn experimental_detail(&self, dir: Dir) -> String {
        let who = match (dir, self.opted_in) {
            (Dir::S2c, false) => ", sent to a client that did not opt in",
            (_, true) => " (the session opted in)",
            (Dir::C2s, false) => ", sent without the opt-in",
        };
        format!("of codex's experimental API{who}; this build's types leave it out (no `experimental` feature)")
    }

    /// The method of the request a response answers; reports an orphan when there is none.
    fn request_of(&mut self, e: &Entry, id: &RequestId) -> Option<String> {
        match self.pending[slot(e.dir.opposite())].remove(id) {
            Some(method) => {
                self.seen(e.dir, MessageKind::Response, &method);
                Some(method)
            }
            None if self.one_sided => {
                self.seen(e.dir, MessageKind::Response, "?");
                self.report.untyped_responses += 1;
                None
            }
            None => {
                self.seen(e.dir, MessageKind::Response, "?");
                let id = serde_json::to_string(id).unwrap_or_default();
                let detail = format!("no earlier {} request has id {id}", e.dir.opposite());
                self.find(e, Kind::OrphanResponse, None, Some(JsonPath::root().key("id")), detail);
                None
            }
        }
    }

    fn error_response(&mut self, e: &Entry, value: &Value, err: codex_app_protocol::ErrorResponse) -> bool {
        let method = err.id.as_ref().and_then(|id| self.pending[slot(e.dir.opposite())].remove(id));
        self.seen(e.dir, MessageKind::Error, method.as_deref().unwrap_or("?"));
        if let (Some(id), None, false) = (&err.id, &method, self.one_sided) {
            let id = serde_json::to_string(id).unwrap_or_default();
            let detail = format!("an error response, but no earlier {} request has id {id}", e.dir.opposite());
            self.find(e, Kind::OrphanResponse, None, Some(JsonPath::root().key("id")), detail);
        }
        let message = Message::<ClientRequest, ClientNotification>::Error(err);
        let reencoded = match roundtrip::reencode(&message) {
            Ok(v) => v,
            Err(err) => {
                self.find(
                    e,
                    Kind::RoundTrip,
                    method.as_deref(),
                    None,
                    format!("cannot encode the decoded error: {err}"),
                );
                return false;
            }
        };
        self.check_typed(
            e,
            method.as_deref(),
            &NoVariants,
            Typed { original: value, reencoded: &reencoded, root: &[] },
        );
        true
    }

    /// Numbers compared by their text where comparing values cannot see a change: an integer
    /// outside 64 bits in the line must come back with the same digits (a `Value` member holds
    /// it as the nearest `f64`, which compares equal to itself). The re-encoded value's text
    /// has the digits the typed value's encoding has (a number is written alike from either),
    /// so the `Value` that [`roundtrip::reencode`] gave is written again rather than the typed
    /// value encoded a second time.
    fn big_integers(&mut self, e: &Entry, method: Option<&str>, reencoded: &Value) {
        let big = big_integers(&e.line);
        if big.is_empty() {
            return;
        }
        let text = reencoded.to_string();
        let mut kept: Vec<&str> = big_integers(&text).into_iter().map(|(_, literal)| literal).collect();
        for (path, literal) in big {
            if let Some(i) = kept.iter().position(|k| *k == literal) {
                kept.swap_remove(i);
                continue;
            }
            let detail =
                format!("the integer {} does not fit 64 bits; it was re-encoded as a float", excerpt(literal, 60));
            self.find(e, Kind::RoundTrip, method, Some(path), detail);
        }
    }

    fn typed_message<T: Serialize + Inspect>(&mut self, e: &Entry, method: &str, value: &Value, typed: &T) -> bool {
        match roundtrip::reencode(typed) {
            Ok(reencoded) => {
                self.check_typed(e, Some(method), typed, Typed { original: value, reencoded: &reencoded, root: &[] });
                self.big_integers(e, Some(method), &reencoded);
                true
            }
            Err(err) => {
                self.find(e, Kind::RoundTrip, Some(method), None, format!("cannot encode the decoded message: {err}"));
                false
            }
        }
    }

    fn typed_response<T: Serialize + Inspect>(
        &mut self,
        e: &Entry,
        method: &str,
        value: &Value,
        id: &RequestId,
        typed: &T,
    ) -> bool {
        let encoded = roundtrip::reencode(id).and_then(|id| Ok((id, roundtrip::reencode(typed)?)));
        match encoded {
            Ok((id, result)) => {
                let mut reencoded = serde_json::Map::new();
                reencoded.insert("id".into(), id);
                reencoded.insert("result".into(), result);
                let reencoded = Value::Object(reencoded);
                self.check_typed(
                    e,
                    Some(method),
                    typed,
                    Typed { original: value, reencoded: &reencoded, root: &[Step::Key("result")] },
                );
                self.big_integers(e, Some(method), &reencoded);
                true
            }
            Err(err) => {
                self.find(e, Kind::RoundTrip, Some(method), None, format!("cannot encode the decoded result: {err}"));
                false
            }
        }
    }

    /// Steps 4 to 6 of the module docs for one decoded message.
    fn check_typed<T: Inspect + ?Sized>(&mut self, e: &Entry, method: Option<&str>, typed: &T, t: Typed<'_>) {
        let diffs = Diffs::of(t.original, t.reencoded);

        let found = unrecognized::inspect(typed, t.root, Some(t.reencoded));
        // What of the message is experimental API, looked up only when the types lacked
        // something.
        let experimental = match method {
            Some(method) if !found.unrecognized.is_empty() || !diffs.lost.is_empty() => {
                experimental_items(method, t.original, t.root)
            }
            _ => Vec::new(),
        };
        let is_experimental = |path: &JsonPath, value: bool| {
            experimental.iter().find(|item| item.is_value == value && &item.path == path)
        };
        for (path, _, detail) in &found.unrecognized {
            match is_experimental(path, true) {
                Some(item) => {
                    let detail = format!("`{}`: a value {}", item.item, self.experimental_detail(e.dir));
                    self.find(e, Kind::Experimental, method, Some(path.clone()), detail)
                }
                None => self.find(e, Kind::UnknownVariant, method, Some(path.clone()), detail.clone()),
            }
        }

        for (path, value) in &diffs.lost {
            match is_experimental(path, false) {
                Some(item) => {
                    let detail = format!("`{}`: a member {}", item.item, self.experimental_detail(e.dir));
                    self.find(e, Kind::Experimental, method, Some(path.clone()), detail)
                }
                None => {
                    let detail = format!(
                        "member not in the type (skipped by the decoder; it was {})",
                        excerpt(&value.to_string(), 60)
                    );
                    self.find(e, Kind::UnknownField, method, Some(path.clone()), detail)
                }
            }
        }
        for (path, detail) in diffs.changed {
            self.find(e, Kind::RoundTrip, method, Some(path), detail);
        }
        for (path, original_null) in diffs.null_gaps {
            let Some(strukt) = found.null_meaningful.get(&path) else { continue };
            let member = match path.last() {
                Some(Step::Key(member)) => member.to_owned(),
                _ => path.to_string(),
            };
            let detail = if original_null {
                format!("`{strukt}.{member}` is Option<Option<T>>: an explicit null was re-encoded as absent")
            } else {
                format!("`{strukt}.{member}` is Option<Option<T>>: an absent member was re-encoded as null")
            };
            self.find(e, Kind::RoundTrip, method, Some(path), detail);
        }
    }
}

/// The members, values and arms of codex's experimental API in a message of `method`: in its
/// params (`root` empty: a request or notification) or its result (`root` is `result`).
fn experimental_items(method: &str, original: &Value, root: &[Step<'_>]) -> Vec<experimental::Item> {
    let found = match root {
        [] => original.get("params").map(|params| experimental::in_params(method, params)),
        _ => original.get("result").map(|result| experimental::in_result(method, result)),
    };
    // A `Value` always serializes.
    found.and_then(Result::ok).unwrap_or_default()
}

/// The first member of the envelope (`id`, `method`, `params`, `result`, `error`) that the
/// line's object gives twice, its key read as JSON reads it (escapes and all). codex reads a
/// message into structs that refuse a member given twice, and drops a line it cannot read.
/// Measured on 0.171.0: each of the five given twice fails to be read ("Failed to deserialize
/// JSONRPCMessage" in its log), and a request with `id`, `method` or `params` twice gets no
/// answer (0.120.0 alike); a request with `jsonrpc` or an unknown member twice, or a member
/// twice inside `params`, is answered.
fn repeated_envelope_member(line: &str) -> Option<String> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    struct Envelope;
    impl<'de> Visitor<'de> for Envelope {
        type Value = Option<String>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut seen: Vec<String> = Vec::new();
            let mut repeated = None;
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if repeated.is_none() && ["id", "method", "params", "result", "error"].contains(&key.as_str()) {
                    if seen.contains(&key) {
                        repeated = Some(key);
                    } else {
                        seen.push(key);
                    }
                }
            }
            Ok(repeated)
        }
    }
    serde_json::Deserializer::from_str(line).deserialize_map(Envelope).ok().flatten()
}

/// An error response: no variants of the protocol's enums inside.
struct NoVariants;

impl Inspect for NoVariants {
    fn inspect<'a>(&'a self, _: &mut Vec<Step<'a>>, _: &mut dyn codex_app_protocol::inspect::Inspector) {}
}

/// The integer literals of a JSON text that fit neither `i64` nor `u64`, each with its path,
/// as serde_json reads them: each value is taken as its text (`RawValue`), so a number is the
/// literal as written, and an object or array is read again for its members (no scanner of our
/// own). A text without a run of 19 digits has none and is not read; nesting is followed to
/// serde_json's own limit of 128 levels, past which no line decodes.
fn big_integers(text: &str) -> Vec<(JsonPath, &str)> {
    /// An object's members in order, each value as its text.
    struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> serde::Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                    let mut members = Vec::new();
                    while let Some((key, value)) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                        members.push((key, value));
                    }
                    Ok(Members(members))
                }
            }
            d.deserialize_map(V)
        }
    }

    let mut out = Vec::new();
    let digits = text.as_bytes().split(|b| !b.is_ascii_digit()).any(|run| run.len() >= 19);
    let Some(whole) = digits.then(|| serde_json::from_str::<&RawValue>(text).ok()).flatten() else { return out };
    let mut stack = vec![(JsonPath::root(), whole)];
    while let Some((path, raw)) = stack.pop() {
        let literal = raw.get();
        match literal.as_bytes().first() {
            _ if path.len() >= 128 => {}
            Some(b'{') => {
                let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(literal) else { continue };
                stack.extend(members.into_iter().rev().map(|(key, value)| (path.clone().key(&key), value)));
            }
            Some(b'[') => {
                let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(literal) else { continue };
                stack.extend(items.into_iter().enumerate().rev().map(|(i, value)| (path.clone().index(i), value)));
            }
            Some(b'-' | b'0'..=b'9') => {
                let integer = !literal.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
                if integer && literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err() {
                    out.push((path, literal));
                }
            }
            _ => {}
        }
    }
    out
}

/// Differences between a line and its re-encoding.
#[derive(Default)]
struct Diffs {
    /// Members with a non-null value that the re-encoding does not have.
    lost: Vec<(JsonPath, Value)>,
    /// Other differences, described.
    changed: Vec<(JsonPath, String)>,
    /// Members that are `null` on one side and absent on the other (equal unless the member
    /// is `Option<Option<T>>`); `true` when the original had the `null`.
    null_gaps: Vec<(JsonPath, bool)>,
}

impl Diffs {
    /// The differences under the crate's rule ([`codex_app_protocol::roundtrip`]), sorted the
    /// way the report gives them.
    fn of(original: &Value, reencoded: &Value) -> Diffs {
        let mut d = Diffs::default();
        for difference in roundtrip::differences(original, reencoded) {
            match difference {
                Difference::Missing { path, original } => d.lost.push((path, original.clone())),
                Difference::Added { path, reencoded } => {
                    d.changed.push((path, format!("the re-encoding adds a member: {}", short(reencoded))))
                }
                Difference::Length { path, original, reencoded } => {
                    d.changed.push((path, format!("{original} elements re-encoded as {reencoded}")))
                }
                Difference::Changed { path, original, reencoded } => {
                    d.changed.push((path, format!("{} re-encoded as {}", short(original), short(reencoded))))
                }
                Difference::NullOrAbsent { path, original_null } => d.null_gaps.push((path, original_null)),
            }
        }
        d
    }
}

fn short(v: &Value) -> String {
    excerpt(&v.to_string(), 60).into_owned()
}

/// The longest file or method name the tables print whole.
const MAX_NAME: usize = 100;

/// Prints findings of several files and the summary table: lines, typed lines, drift per
/// file; methods seen; drift by kind.
pub fn render(files: &[(String, Report)]) -> String {
    let mut out = String::new();
    for (name, report) in files {
        for f in &report.findings {
            let _ = writeln!(out, "{name}:{f}");
        }
    }
    if files.iter().any(|(_, r)| !r.findings.is_empty()) {
        out.push('\n');
    }

    // Names are cut in the tables (a method name can be any length on the wire).
    let width = files.iter().map(|(n, _)| n.len().min(MAX_NAME)).max().unwrap_or(0).max(5);
    // The experimental column only where a build without `experimental` met some.
    let experimental: usize = files.iter().map(|(_, r)| r.experimental_count()).sum();
    let column = |n: usize| if experimental > 0 { format!("  {n:>12}") } else { String::new() };
    let _ = writeln!(
        out,
        "{:<width$}  {:>7}  {:>7}  {:>5}  {:>8}{}",
        "file",
        "lines",
        "typed",
        "drift",
        "expected",
        if experimental > 0 { "  experimental" } else { "" }
    );
    let (mut lines, mut typed, mut drift, mut expected, mut untyped) = (0, 0, 0, 0, 0);
    for (name, r) in files {
        let (d, p) = (r.drift_count(), r.experimental_count());
        let x = r.findings.len() - d - p;
        let _ = writeln!(
            out,
            "{:<width$}  {:>7}  {:>7}  {d:>5}  {x:>8}{}",
            excerpt(name, MAX_NAME),
            r.lines,
            r.typed,
            column(p)
        );
        lines += r.lines;
        typed += r.typed;
        drift += d;
        expected += x;
        untyped += r.untyped_responses;
    }
    if files.len() > 1 {
        let _ = writeln!(
            out,
            "{:<width$}  {lines:>7}  {typed:>7}  {drift:>5}  {expected:>8}{}",
            "total",
            column(experimental)
        );
    }
    if untyped > 0 {
        let _ = writeln!(
            out,
            "({untyped} responses in one-sided files were not typed: their requests are not in the file)"
        );
    }

    let mut methods: BTreeMap<&(Dir, MessageKind, String), usize> = BTreeMap::new();
    for (_, r) in files {
        for (key, n) in &r.methods {
            *methods.entry(key).or_default() += n;
        }
    }
    let mwidth = methods.keys().map(|(_, _, m)| m.chars().count().min(MAX_NAME)).max().unwrap_or(0).max(6);
    let _ = writeln!(out, "\nmethods seen ({}):", methods.len());
    let _ = writeln!(out, "  {:<3}  {:<12}  {:<mwidth$}  {:>7}", "dir", "message", "method", "count");
    for ((dir, kind, method), n) in &methods {
        let _ = writeln!(out, "  {dir:<3}  {:<12}  {:<mwidth$}  {n:>7}", kind.name(), excerpt(method, MAX_NAME));
    }

    let _ = writeln!(out, "\ndrift by kind:");
    let _ = writeln!(out, "  {:<16}  {:>5}  {:>8}", "kind", "drift", "expected");
    for kind in Kind::ALL.into_iter().filter(|&k| k != Kind::Experimental) {
        let count = |expected: bool| {
            files.iter().flat_map(|(_, r)| &r.findings).filter(|f| f.kind == kind && f.expected == expected).count()
        };
        let _ = writeln!(out, "  {:<16}  {:>5}  {:>8}", kind.name(), count(false), count(true));
    }
    let _ = writeln!(out, "  {:<16}  {drift:>5}  {expected:>8}", "total");
    if experimental > 0 {
        let _ = writeln!(
            out,
            "\n{experimental} of codex's experimental API that this build's types leave out (no `experimental` \
             feature): reported apart, not drift"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diffs(original: Value, reencoded: Value) -> Diffs {
        Diffs::of(&original, &reencoded)
    }

    #[test]
    fn a_member_of_the_envelope_given_twice() {
        let repeated = |line: &str| repeated_envelope_member(line);
        assert_eq!(repeated(r#"{"id":1,"method":"m","params":{},"params":{}}"#).as_deref(), Some("params"));
        assert_eq!(repeated(r#"{"id":1,"\u0069d":2,"method":"m"}"#).as_deref(), Some("id"));
        assert_eq!(repeated(r#"{"id":1,"result":{},"result":{}}"#).as_deref(), Some("result"));
        // What codex reads: `jsonrpc` or an unknown member twice, a member twice inside params.
        for line in [
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}"#,
            r#"{"id":1,"method":"m","foo":1,"foo":2}"#,
            r#"{"id":1,"method":"m","params":{"a":1,"a":2}}"#,
            "not JSON",
            "[1, 1]",
        ] {
            assert_eq!(repeated(line), None, "{line}");
        }
        // Reported for a client's line only (codex is the reader modelled).
        let line = r#"{"id":1,"id":2,"method":"thread/list","params":{}}"#;
        let c2s = check(&[Entry::new(Dir::C2s, line)], Format::Transcript);
        assert!(
            matches!(&c2s.findings[..], [f] if f.kind == Kind::NotAMessage && f.method.as_deref() == Some("thread/list"))
        );
        assert_eq!(c2s.typed, 0);
        let s2c = check(&[Entry::new(Dir::S2c, line)], Format::Transcript);
        assert!(s2c.findings.iter().all(|f| f.kind != Kind::NotAMessage), "{:?}", s2c.findings);
    }

    #[test]
    fn compare_under_the_null_policy() {
        let d = diffs(
            json!({"jsonrpc": "2.0", "a": {"x": 1, "gone": [1], "nil": null}, "n": [1, 2.5], "f": 1, "s": "x"}),
            json!({"a": {"x": 1.0, "new": true, "also": null}, "n": [1, 2.5, 3], "f": 2, "s": "x"}),
        );
        assert_eq!(d.lost, [(JsonPath::root().key("a").key("gone"), json!([1]))]);
        let changed: Vec<String> = d.changed.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(changed, ["a.new", "f", "n"]);
        assert_eq!(d.changed[2].1, "2 elements re-encoded as 3");
        let gaps: Vec<(String, bool)> = d.null_gaps.iter().map(|(p, null)| (p.to_string(), *null)).collect();
        assert_eq!(gaps, [("a.nil".to_owned(), true), ("a.also".to_owned(), false)]);
        // `jsonrpc` is only dropped at the top.
        let d = diffs(json!({"p": {"jsonrpc": "2.0"}}), json!({"p": {}}));
        assert_eq!(d.lost.len(), 1);
    }

    // Written against a type of the vendored release (see `written_for_codex!`).
    codex_app_protocol::__test_support::written_for_codex! { "0.171.0",
    use codex_app_protocol::ThreadMetadataGitInfoUpdateParams;

    /// The exception of the null policy, as it would show if a decoder lost the difference
    /// between `null` and absent for an `Option<Option<T>>` member.
    #[test]
    fn option_option_members_keep_null_and_absent_apart() {
        let e = Entry { number: 7, dir: Dir::C2s, line: String::new(), bad: false };
        let run = |typed: ThreadMetadataGitInfoUpdateParams, original: Value, reencoded: Value| {
            let mut c = Checker::new(false);
            let t = Typed { original: &original, reencoded: &reencoded, root: &[Step::Key("params")] };
            c.check_typed(&e, Some("thread/metadata/update"), &typed, t);
            c.report.findings
        };
        let plain = ThreadMetadataGitInfoUpdateParams { branch: None, origin_url: None, sha: None };
        // An explicit null re-encoded as absent: drift for `branch`.
        let found = run(plain.clone(), json!({"params": {"branch": null}}), json!({"params": {}}));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].kind, found[0].path.as_ref().map(JsonPath::to_string)), (Kind::RoundTrip, Some("params.branch".to_owned())));
        assert!(found[0].detail.contains("`ThreadMetadataGitInfoUpdateParams.branch` is Option<Option<T>>"), "{}", found[0]);
        // Absent re-encoded as null: drift too.
        let found = run(plain.clone(), json!({"params": {}}), json!({"params": {"sha": null}}));
        assert_eq!(found.iter().map(|f| f.path.as_ref().map(JsonPath::to_string)).collect::<Vec<_>>(), [Some("params.sha".to_owned())]);
        // Kept apart: no drift.
        let kept = ThreadMetadataGitInfoUpdateParams { branch: Some(None), ..plain };
        assert_eq!(run(kept, json!({"params": {"branch": null}}), json!({"params": {"branch": null}})), []);
    }
    }

    #[test]
    fn added_and_changed_values_are_round_trip_drift() {
        let e = Entry { number: 1, dir: Dir::S2c, line: String::new(), bad: false };
        let mut c = Checker::new(false);
        let original = json!({"method": "x", "params": {"a": "b", "list": [1]}});
        let t = Typed {
            original: &original,
            reencoded: &json!({"method": "x", "params": {"a": "c", "list": [1], "added": 0}}),
            root: &[],
        };
        c.check_typed(&e, Some("x"), &(), t);
        let found: Vec<(Kind, Option<String>)> =
            c.report.findings.iter().map(|f| (f.kind, f.path.as_ref().map(JsonPath::to_string))).collect();
        assert_eq!(
            found,
            [(Kind::RoundTrip, Some("params.a".to_owned())), (Kind::RoundTrip, Some("params.added".to_owned()))]
        );
        assert_eq!(c.report.findings[0].detail, r#""b" re-encoded as "c""#);
    }
}
