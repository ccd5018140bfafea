//! What the fuzz targets share: the round-trip property of a decoded line, the availability
//! walks' agreement on its text and its `Value`, and the method names of the vendored bundle
//! (to type responses by a pending request's method).

use std::sync::OnceLock;

use codex_app_protocol::availability::Check;
use codex_app_protocol::jsonrpc::{FromParts, FromResult, Parts};
use codex_app_protocol::path::JsonPath;
use codex_app_protocol::roundtrip::{self, Difference};
use codex_app_protocol::{Message, RequestId};
use serde::Serialize;
use serde_json::Value;

/// The vendored experimental bundle (every method of both surfaces).
const BUNDLE: &str = include_str!("../../vendor-schemas/experimental/codex_app_server_protocol.schemas.json");

/// The methods of one of the bundle's method unions (`ClientRequest`, `ServerRequest`).
pub fn methods(union: &str) -> &'static [String] {
    static CELL: OnceLock<Value> = OnceLock::new();
    static CLIENT: OnceLock<Vec<String>> = OnceLock::new();
    static SERVER: OnceLock<Vec<String>> = OnceLock::new();
    let bundle = CELL.get_or_init(|| serde_json::from_str(BUNDLE).expect("the vendored bundle is JSON"));
    let cell = if union == "ClientRequest" { &CLIENT } else { &SERVER };
    cell.get_or_init(|| {
        let arms = bundle["definitions"][union]["oneOf"].as_array().cloned().unwrap_or_default();
        arms.iter().filter_map(|a| a["properties"]["method"]["enum"][0].as_str().map(str::to_owned)).collect()
    })
}

/// The method a fuzzed line's response answers: picked from `methods` by the id, so a line
/// and its re-encoding (same id) are typed alike.
pub fn method_for(methods: &'static [String], id: &RequestId) -> Option<&'static str> {
    let n = match id {
        RequestId::Integer(n) => n.unsigned_abs() as usize,
        RequestId::String(s) => s.bytes().map(usize::from).sum(),
    };
    // Some ids answer no known request: the result stays `Unrecognized`.
    (n % (methods.len() + 1) < methods.len()).then(|| methods[n % (methods.len() + 1)].as_str())
}

/// The stack the decode targets run on: 512 KiB, a quarter of the 2 MiB of a Rust or tokio
/// thread, so that decode code whose stack grows with the input overflows here first (the
/// `deep_variants` nest up to 5,100 levels: deep enough to overflow it through any recursion
/// of a few hundred bytes a level, shallow enough for thousands of inputs a minute even in the
/// instrumented, unoptimized smoke build). Not the 256 KiB of the protocol crate's own test:
/// the smoke run's build is unoptimized, its dependencies too, and its frames are far larger:
/// it needs more than 256 KiB for a short line, before any nesting (512 KiB suffices for
/// every regression input and its variants).
pub const SMALL_STACK: usize = 512 * 1024;

/// Runs `f` on a thread with a [`SMALL_STACK`]; its panic is the caller's (libFuzzer reports
/// it), a stack overflow aborts the run (a finding too).
pub fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).expect("a thread starts");
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

/// Lines derived from one fuzzed line in four that put a union tag given twice next to deep
/// nesting (issue 21: the duplicate-member fallback used to recurse over the text): after the first
/// and the last `"type":"..."` member, a second `"type"` with another value and an unknown
/// member nested up to 5,100 levels deep (arrays or objects, before or after the repeated
/// tag, the depth picked from the line); and `params` with a deep unknown member first. Every
/// variant must decode (or fail) without overflowing [`SMALL_STACK`], in linear time.
pub fn deep_variants(line: &str) -> Vec<String> {
    let hash = line.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    // One line in four (by its hash, so a finding reproduces): the variants cost far more than
    // the line, and the other lines keep the run's pace.
    if hash % 4 != 3 {
        return Vec::new();
    }
    let pick = hash >> 8;
    let depth = 100 + (pick % 5_000) as usize;
    let deep = if pick & (1 << 20) == 0 {
        format!("{}0{}", "[".repeat(depth), "]".repeat(depth))
    } else {
        format!("{}0{}", r#"{"a":0,"a":"#.repeat(depth), "}".repeat(depth))
    };
    let mut variants = Vec::new();
    let tags: Vec<usize> = line.match_indices(r#""type":""#).map(|(i, _)| i).collect();
    for at in [tags.first(), tags.last()].into_iter().flatten() {
        let value_start = at + r#""type":""#.len();
        let Some(len) = line[value_start..].find('"') else { continue };
        let end = value_start + len + 1;
        let other = if line[value_start..end - 1] == *"text" { "image" } else { "text" };
        let inserted = if pick & (1 << 21) == 0 {
            format!(r#","type":"{other}","zz":{deep}"#)
        } else {
            format!(r#","zz":{deep},"type":"{other}""#)
        };
        variants.push(format!("{}{inserted}{}", &line[..end], &line[end..]));
    }
    if let Some(at) = line.find(r#""params":{"#) {
        let open = at + r#""params":{"#.len();
        let comma = if line[open..].trim_start().starts_with('}') { "" } else { "," };
        variants.push(format!(r#"{}"zz":{deep}{comma}{}"#, &line[..open], &line[open..]));
    }
    variants
}

/// The properties every decodable line must have:
/// - the one-pass decode and the two-step decode (envelope, then members) agree;
/// - the decoded message re-encodes to a line that decodes to the same message;
/// - the re-encoding changes and adds nothing: every member it has is in the line with an
///   equal value (numbers by value), under the null rule (`null` equals absent). Members it
///   lacks are members the types do not know (the drift check's `unknown-field`), the
///   top-level `"jsonrpc"` and unknown envelope members (dropped by design).
pub fn check_line<Req, Notif, Res>(line: &str, method_of: impl Fn(&RequestId) -> Option<&'static str> + Copy)
where
    Req: FromParts + Serialize + PartialEq + std::fmt::Debug,
    Notif: FromParts + Serialize + PartialEq + std::fmt::Debug,
    Res: FromResult + Serialize + PartialEq + std::fmt::Debug,
{
    let one = Message::<Req, Notif, Res>::from_line_with(line, method_of);
    let two = Parts::parse(line).ok().map(|parts| Message::<Req, Notif, Res>::from_envelope_with(parts, method_of));
    match (&one, &two) {
        (Ok(a), Some(Ok(b))) => assert_eq!(a, b, "one-pass and two-step decodes differ: {line}"),
        (Err(_), None | Some(Err(_))) => {}
        _ => panic!("one-pass and two-step decodes disagree on {line}: {one:?} vs {two:?}"),
    }
    let Ok(message) = one else { return };
    let text = message.to_line();
    let again = Message::<Req, Notif, Res>::from_line_with(&text, method_of)
        .unwrap_or_else(|e| panic!("the re-encoding does not decode: {e}\nline: {line}\nre-encoded: {text}"));
    if message != again {
        // The one difference allowed, documented in the crate: a number held in a `Value` (an
        // "any" member, an unknown union arm) is an `f64`, and serde_json without its
        // `float_roundtrip` feature (which the crate does not turn on for its users) may read
        // a float's text back one unit in the last place off.
        let (a, b) = (roundtrip::reencode(&message).ok(), roundtrip::reencode(&again).ok());
        assert!(
            matches!((&a, &b), (Some(a), Some(b)) if roundtrip::differences(a, b).is_empty()),
            "decode(encode(m)) != m\nline: {line}\nre-encoded: {text}\n{message:?}\n{again:?}"
        );
    }
    let (Ok(original), Ok(reencoded)) = (serde_json::from_str::<Value>(line), serde_json::from_str::<Value>(&text))
    else {
        return;
    };
    // Members the re-encoding lacks are allowed (see above); nothing else.
    let changes: Vec<_> = roundtrip::differences(&original, &reencoded)
        .into_iter()
        .filter(|d| !matches!(d, Difference::Missing { .. } | Difference::NullOrAbsent { .. }))
        .collect();
    assert!(changes.is_empty(), "the re-encoding changes the line: {changes:?}\nline: {line}\nre-encoded: {text}");
}

/// The availability walks of a line's params (by its method) and result (by the method
/// `method_of` picks for its id): the check against the floor and against a release inside
/// the range, and the search for the experimental API. Each reads JSON text where it lies;
/// whatever `Value` the text parses to, its walks succeed and find nothing the walks of the
/// text do not (the text can hold more: a `Value` keeps the last of a key given twice), and
/// the text read in place (`Check::params_raw`) finds what it finds through `Serialize`.
pub fn check_availability(line: &str, method_of: impl Fn(&RequestId) -> Option<&'static str>) {
    let Ok(parts) = Parts::parse(line) else { return };
    let params = parts.method.as_deref().zip(parts.params).map(|(m, t)| (m, t, true));
    let result = parts.id.as_ref().and_then(&method_of).zip(parts.result).map(|(m, t)| (m, t, false));
    for (method, text, is_params) in params.into_iter().chain(result) {
        let Ok(value) = serde_json::from_str::<Value>(text.get()) else { continue };
        let in_value = walks(method, is_params, &value)
            .unwrap_or_else(|| panic!("a walk of the `Value` of {text} failed ({method})"));
        let in_text = walks(method, is_params, text)
            .unwrap_or_else(|| panic!("a walk of {text} failed, of its `Value` not ({method})"));
        // Text the caller has, read without a copy, as through `Serialize`.
        for (check, through_serialize) in checks().iter().zip(&in_text) {
            let raw = if is_params { check.params_raw(method, text) } else { check.result_raw(method, text) };
            let raw = raw.expect("the walk of the text did not fail");
            let raw: Vec<String> = raw.iter().map(|u| line_of(&u.path, &u.item, u.is_value)).collect();
            assert_eq!(&raw, through_serialize, "the raw walk of {text} ({method})");
        }
        for (in_text, in_value) in in_text.iter().zip(&in_value) {
            let missed: Vec<&String> = in_value.iter().filter(|f| !in_text.contains(f)).collect();
            assert!(missed.is_empty(), "the walk of {text} ({method}) missed {missed:?}, found in its `Value`");
        }
    }
}

/// What each walk finds in `json`, as `path item is_value` lines; `None` when one fails.
fn walks<P: Serialize + ?Sized>(method: &str, params: bool, json: &P) -> Option<Vec<Vec<String>>> {
    use codex_app_protocol::availability::experimental;
    let mut out = Vec::new();
    for check in checks() {
        let found = if params { check.params(method, json) } else { check.result(method, json) };
        out.push(found.ok()?.iter().map(|u| line_of(&u.path, &u.item, u.is_value)).collect());
    }
    let found = if params { experimental::in_params(method, json) } else { experimental::in_result(method, json) };
    out.push(found.ok()?.iter().map(|i| line_of(&i.path, &i.item, i.is_value)).collect());
    Some(out)
}

/// The checks against the floor and against a release inside the range, built once.
fn checks() -> &'static [Check; 2] {
    use codex_app_protocol::availability::{Release, FLOOR};
    static CHECKS: OnceLock<[Check; 2]> = OnceLock::new();
    CHECKS.get_or_init(|| {
        let release = |r: &str| Check::new(&Release::parse(r).expect("a release"));
        [release(FLOOR), release("0.150.0")]
    })
}

/// One thing a walk found, as `path item is_value`.
fn line_of(path: &JsonPath, item: &str, is_value: bool) -> String {
    format!("{path} {item} {is_value}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use codex_app_protocol::{
        ClientNotification, ClientRequest, ClientResponse, Response, ServerNotification, ServerRequest, ServerResponse,
        TypedResponse,
    };

    /// Inputs the long runs found, kept in `fuzz/regressions/`: each must pass `check_line` and
    /// `check_availability`.
    #[test]
    fn regressions() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/regressions");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let line = std::fs::read_to_string(&path).unwrap();
            let client = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("decode_client"));
            // As the targets run them: on a small stack, with their deep variants.
            on_small_stack(move || {
                for line in std::iter::once(line.clone()).chain(deep_variants(&line)) {
                    if client {
                        check_line::<ClientRequest, ClientNotification, Response>(&line, |_| None);
                        check_line::<ClientRequest, ClientNotification, TypedResponse<ServerResponse>>(&line, |id| {
                            method_for(methods("ServerRequest"), id)
                        });
                        check_availability(&line, |id| method_for(methods("ServerRequest"), id));
                    } else {
                        check_line::<ServerRequest, ServerNotification, Response>(&line, |_| None);
                        check_line::<ServerRequest, ServerNotification, TypedResponse<ClientResponse>>(&line, |id| {
                            method_for(methods("ClientRequest"), id)
                        });
                        check_availability(&line, |id| method_for(methods("ClientRequest"), id));
                    }
                }
            });
        }
    }
}
