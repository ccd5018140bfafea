//! The peer crate `codex-codes`, decoding the same lines the way its docs and its clients do:
//! `serde_json::from_str::<JsonRpcMessage>(line)`, then `Notification::from_envelope` /
//! `ServerRequest::from_envelope` for notifications and server requests, and
//! `serde_json::from_value::<XResponse>(result)` for a response (what its
//! `SyncClient::request` does with the response type of the method).

use std::hint::black_box;

use codex_codes::{JsonRpcMessage, Notification, ServerRequest};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The version `xtask/Cargo.toml` resolves (`cargo tree -p xtask --features peer`).
pub const VERSION: &str = "0.166";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Decoded into its own type.
    Typed,
    /// Decoded, but kept as JSON (an `Unknown` method, or a response method without a type here).
    Untyped,
    /// The peer's types reject the line.
    Failed,
}

/// Decodes one line; false when the peer rejects it.
pub fn decode(line: &str, method: Option<&str>) -> bool {
    outcome(line, method) != Outcome::Failed
}

fn outcome(line: &str, method: Option<&str>) -> Outcome {
    let message = match serde_json::from_str::<JsonRpcMessage>(line) {
        Ok(m) => m,
        Err(e) => {
            black_box(e);
            return Outcome::Failed;
        }
    };
    match message {
        JsonRpcMessage::Notification(n) => match Notification::from_envelope(&n.method, n.params) {
            Ok(n) if n.is_unknown() => kept(n, Outcome::Untyped),
            Ok(n) => kept(n, Outcome::Typed),
            Err(e) => kept(e, Outcome::Failed),
        },
        JsonRpcMessage::Request(r) => match ServerRequest::from_envelope(&r.method, r.params) {
            Ok(r) if r.is_unknown() => kept(r, Outcome::Untyped),
            Ok(r) => kept(r, Outcome::Typed),
            Err(e) => kept(e, Outcome::Failed),
        },
        JsonRpcMessage::Response(r) => response(method.unwrap_or_default(), r.result),
        JsonRpcMessage::Error(e) => kept(e, Outcome::Typed),
    }
}

fn kept<T>(value: T, outcome: Outcome) -> Outcome {
    black_box(value);
    outcome
}

/// The response types of the methods whose responses the fixtures hold.
fn response(method: &str, result: Value) -> Outcome {
    use codex_codes::*;
    fn typed<T: DeserializeOwned>(result: Value) -> Outcome {
        match serde_json::from_value::<T>(result) {
            Ok(t) => kept(t, Outcome::Typed),
            Err(e) => kept(e, Outcome::Failed),
        }
    }
    match method {
        "initialize" => typed::<InitializeResponse>(result),
        "config/read" => typed::<ConfigReadResponse>(result),
        "model/list" => typed::<ModelListResponse>(result),
        "thread/archive" => typed::<ThreadArchiveResponse>(result),
        "thread/list" => typed::<ThreadListResponse>(result),
        "thread/name/set" => typed::<ThreadSetNameResponse>(result),
        "thread/read" => typed::<ThreadReadResponse>(result),
        "thread/start" => typed::<ThreadStartResponse>(result),
        "turn/interrupt" => typed::<TurnInterruptResponse>(result),
        "turn/start" => typed::<TurnStartResponse>(result),
        _ => kept(result, Outcome::Untyped),
    }
}

/// How the peer fares on each distinct line, with the methods it rejects or keeps untyped.
pub fn check<'a>(lines: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> String {
    let (mut typed, mut untyped, mut failed) = (0, 0, 0);
    let mut failed_methods = std::collections::BTreeSet::new();
    let mut untyped_methods = std::collections::BTreeSet::new();
    for (line, method) in lines {
        let name = method
            .map(str::to_owned)
            .or_else(|| serde_json::from_str::<Value>(line).ok()?.get("method")?.as_str().map(str::to_owned));
        let name = name.unwrap_or_else(|| "(error response)".into());
        match outcome(line, method) {
            Outcome::Typed => typed += 1,
            Outcome::Untyped => {
                untyped += 1;
                untyped_methods.insert(name);
            }
            Outcome::Failed => {
                failed += 1;
                failed_methods.insert(name);
            }
        }
    }
    let list = |s: std::collections::BTreeSet<String>| s.into_iter().collect::<Vec<_>>().join(", ");
    format!(
        "{typed} typed, {untyped} kept as JSON [{}], {failed} rejected [{}]",
        list(untyped_methods),
        list(failed_methods)
    )
}
