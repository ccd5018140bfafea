//! The one-pass decode (`Message::from_line_with`) against the two-step decode (`Parts`, then
//! `from_envelope_with`) on every line of every fixture, both directions: in the member order
//! codex wrote, and with the envelope's members reversed (an order the one-pass decode hands
//! to the two-step path). Each must give the same message, or the same error.

use std::collections::HashMap;
use std::fmt::Debug;

use crate::rewrite::Members;
use crate::support::fixtures_for_test;
use codex_app_protocol::jsonrpc::{FromParts, FromResult, Parts};
use codex_app_protocol::{
    ClientNotification, ClientRequest, ClientResponse, Message, RequestId, ServerNotification, ServerRequest,
    ServerResponse, TypedResponse,
};
use codex_app_traffic::transcript::{self, Dir, Entry};
use codex_app_traffic::Format;

/// The line with its top-level members in reverse order.
fn reversed(line: &str) -> Option<String> {
    let Members(members) = serde_json::from_str(line).ok()?;
    let body: Vec<String> =
        members.iter().rev().map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), v.get())).collect();
    Some(format!("{{{}}}", body.join(",")))
}

/// Decodes `line` both ways; they must agree, and a response to a request of the transcript
/// must be typed by that request's method (`typed` says whether it is).
fn same_decode<Req, Notif, R>(
    line: &str,
    requests: &HashMap<RequestId, String>,
    typed: fn(&R) -> bool,
) -> Result<(), String>
where
    Req: FromParts + PartialEq + Debug,
    Notif: FromParts + PartialEq + Debug,
    TypedResponse<R>: FromResult + PartialEq + Debug,
{
    let method_of = |id: &RequestId| requests.get(id);
    let one = Message::<Req, Notif, TypedResponse<R>>::from_line_with(line, method_of);
    let two = Parts::parse(line).map_err(|e| e.to_string()).and_then(|parts| {
        Message::<Req, Notif, TypedResponse<R>>::from_envelope_with(parts, method_of).map_err(|e| e.to_string())
    });
    match (&one, &two) {
        (Ok(Message::Response(r)), Ok(_)) if requests.contains_key(&r.id) && !typed(&r.result) => {
            Err(format!("{line}\n  response not typed by its request's method"))
        }
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Err(a), Err(b)) if a.to_string().ends_with(b.as_str()) => Ok(()),
        _ => Err(format!("{line}\n  one pass: {one:?}\n  two step: {two:?}")),
    }
}

/// `id -> method` of the requests sent in `dir`.
fn requests(entries: &[Entry], dir: Dir) -> HashMap<RequestId, String> {
    entries
        .iter()
        .filter(|e| e.dir == dir)
        .filter_map(|e| Parts::parse(&e.line).ok().and_then(|p| Some((p.id?, p.method?.into_owned()))))
        .collect()
}

#[test]
fn one_pass_and_two_step_decode_agree_on_every_fixture_line() {
    let Some(paths) = fixtures_for_test("one_pass_and_two_step_decode_agree_on_every_fixture_line") else { return };
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in &paths {
        let entries = transcript::read_file(path, Format::Transcript).unwrap();
        let client_requests = requests(&entries, Dir::C2s);
        let server_requests = requests(&entries, Dir::S2c);
        for e in &entries {
            for line in [Some(e.line.clone()), reversed(&e.line)].iter().flatten() {
                let result = match e.dir {
                    Dir::S2c => {
                        same_decode::<ServerRequest, ServerNotification, ClientResponse>(line, &client_requests, |r| {
                            !matches!(r, ClientResponse::Unrecognized(_))
                        })
                    }
                    Dir::C2s => {
                        same_decode::<ClientRequest, ClientNotification, ServerResponse>(line, &server_requests, |r| {
                            !matches!(r, ServerResponse::Unrecognized(_))
                        })
                    }
                };
                if let Err(e) = result {
                    failures.push(format!("{}: {e}", path.display()));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 400, "only {checked} lines checked");
    assert!(failures.is_empty(), "{} of {checked} lines differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn reversed_keeps_every_member() {
    let line = r#"{"method":"m","params":{"a":[1,{"b":null}]},"emittedAtMs":1}"#;
    assert_eq!(reversed(line).unwrap(), r#"{"emittedAtMs":1,"params":{"a":[1,{"b":null}]},"method":"m"}"#);
}
