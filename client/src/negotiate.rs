//! What the client sends, against the server's codex release.
//!
//! An older codex silently ignores a params member it does not know (and answers as if it had
//! not been sent: `thread/list` with `includedThreadIds` lists every thread), and refuses an
//! enum value or method it does not know. So before sending, the client checks the method and
//! the params against the server's release ([`codex_app_protocol::availability`]): a method
//! the release lacks fails locally, nothing sent ([`ClientError::Unavailable`]); params that
//! use members, values or arms the release lacks are refused by default
//! ([`ClientError::UnknownToServer`]), or stripped with a `tracing` warning, or sent anyway
//! ([`Unknown`], [`ClientBuilder::unknown_to_server`](crate::ClientBuilder::unknown_to_server)).
//!
//! A server newer than the crate is accepted (what it added is kept as `Unrecognized` and
//! unknown members), and so is a server whose version cannot be read from `userAgent`: then
//! nothing is checked (the client says so once, as a warning).

use codex_app_protocol::availability::{self, Check, Release, Unknown as Item};
use codex_app_protocol::path::{JsonPath, Step};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use std::sync::{Arc, PoisonError, RwLock};

use codex_app_protocol::InitializeResponse;

use crate::client::VersionPolicy;
use crate::error::{ClientError, DecodeReport, VersionCheck};

/// What to do with params that use what the server's release does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unknown {
    /// Fail with [`ClientError::UnknownToServer`], nothing sent (the default): the server
    /// would silently drop such a member and answer something else than was asked.
    #[default]
    Refuse,
    /// Leave them out (each a `tracing` warning) and send the rest: a member is removed, an
    /// enum value or union arm is removed with the member (or array item) that holds it.
    Strip,
    /// Send them as they are.
    Send,
}

/// The server's release as the handshake read it.
#[derive(Debug)]
pub(crate) struct Server {
    /// `None`: nothing to check (the release could not be read, or it is at least as new as
    /// the crate).
    check: Option<Check>,
}

impl Server {
    pub(crate) fn new(release: Option<Release>) -> Server {
        // A release at least as new as the crate lacks nothing it knows: nothing to check.
        let check = release.map(|r| Check::new(&r)).filter(|c| !c.lacks_nothing());
        Server { check }
    }

    /// Checks `method` and its params before sending, by `policy`, and encodes the params to
    /// send (as they are, or stripped). Params whose shape the check cannot read are sent as
    /// they are: the server says what it makes of them.
    pub(crate) fn encode<P: Serialize + ?Sized>(
        server: Option<&Server>,
        method: &str,
        params: &P,
        policy: Unknown,
    ) -> Result<Box<RawValue>, ClientError> {
        let cannot = |e: serde_json::Error| ClientError::Refused(format!("cannot encode `{method}`: {e}"));
        let Some(check) = server.and_then(|s| s.check.as_ref()) else {
            return serde_json::value::to_raw_value(params).map_err(cannot);
        };
        let release = check.release();
        if let Some(a) = availability::method(method) {
            if !a.in_release(release) {
                return Err(ClientError::Unavailable {
                    method: method.to_owned(),
                    availability: a,
                    server: release.to_string(),
                });
            }
        }
        let items = match policy {
            Unknown::Send => Vec::new(),
            _ => check.params(method, params).unwrap_or_default(),
        };
        if items.is_empty() {
            return serde_json::value::to_raw_value(params).map_err(cannot);
        }
        if policy == Unknown::Refuse {
            return Err(ClientError::UnknownToServer { method: method.to_owned(), server: release.to_string(), items });
        }
        let mut value = serde_json::to_value(params).map_err(cannot)?;
        strip(release, method, &mut value, &items);
        serde_json::value::to_raw_value(&value).map_err(cannot)
    }

    /// Checks an answer to the server's request `method` before sending: `Err` (the text of an
    /// error answer) when it uses what the server's release lacks and the policy refuses it,
    /// since the server would ignore such a member or refuse such a value. Stripped or sent as
    /// the policy says. Text the check cannot read is sent as it is.
    pub(crate) fn check_answer(
        &self,
        method: &str,
        result: Box<RawValue>,
        policy: Unknown,
    ) -> Result<Box<RawValue>, String> {
        let Some(check) = &self.check else { return Ok(result) };
        if policy == Unknown::Send {
            return Ok(result);
        }
        let release = check.release();
        let items = match check.result(method, &*result) {
            Ok(items) if !items.is_empty() => items,
            _ => return Ok(result),
        };
        if policy == Unknown::Refuse {
            let list = items.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
            tracing::warn!(method, server = %release, "the answer uses what codex {release} lacks: {list}; answered with an error");
            return Err(format!("the client's answer to `{method}` uses what codex {release} does not have: {list}"));
        }
        let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else { return Ok(result) };
        strip(release, method, &mut value, &items);
        Ok(serde_json::value::to_raw_value(&value).unwrap_or(result))
    }
}

/// What a handshake read from the server: its `initialize` result, its release against the
/// supported range, and what to check messages against. Every handshake (a reconnect's
/// included) makes one; the connection's [`Current`] holds the one of its connection.
#[derive(Debug)]
pub(crate) struct Session {
    /// The `initialize` result as it came.
    pub initialize: Value,
    /// That result as the crate's type, `None` when it does not decode (a release below the
    /// range lacks members the type requires).
    pub response: Option<InitializeResponse>,
    pub version: VersionCheck,
    pub server: Server,
}

impl Session {
    /// Reads an `initialize` result for the client `client_name`: the release first (from
    /// `userAgent`, before anything has to decode), then the typed response. A result that
    /// does not decode fails only when the release is one the crate supports; outside the
    /// range (or unknown) it is kept raw and the version policy decides.
    pub(crate) fn read(client_name: &str, initialize: Value) -> Result<Session, ClientError> {
        let user_agent = initialize.get("userAgent").and_then(Value::as_str).unwrap_or_default();
        let version = VersionCheck::for_client(client_name, user_agent);
        let response = match serde_json::from_value::<InitializeResponse>(initialize.clone()) {
            Ok(response) => Some(response),
            Err(e) if version.matches() => {
                return Err(ClientError::Decode(DecodeReport::result("initialize", &e)));
            }
            Err(e) => {
                tracing::warn!(error = %e, server = version.server.as_deref(), "the `initialize` result of a release outside the supported range does not decode; kept as JSON");
                None
            }
        };
        let server = Server::new(version.release.clone());
        Ok(Session { initialize, response, version, server })
    }

    /// Whether `policy` lets the client go on with this server: `Warn` says why not (a
    /// `tracing` warning that names the supported range) and goes on, `Error` fails with
    /// [`ClientError::VersionMismatch`].
    pub(crate) fn admit(&self, policy: VersionPolicy) -> Result<(), ClientError> {
        let check = &self.version;
        if check.matches() {
            return Ok(());
        }
        match policy {
            VersionPolicy::Warn => {
                tracing::warn!(supported_up_to = check.expected, server = check.server.as_deref(), "{check}");
                Ok(())
            }
            VersionPolicy::Error => Err(ClientError::VersionMismatch(check.clone())),
            VersionPolicy::Ignore => Ok(()),
        }
    }
}

/// What the connection needs to read a handshake and check its answers: the session it swaps
/// at each handshake, and the client's policies.
pub(crate) struct Negotiation {
    pub current: Arc<Current>,
    pub version_policy: VersionPolicy,
    pub unknown: Unknown,
}

/// The session of the connection, shared by the handles (which check what they send against
/// it) and the connection (which checks its answers against it, and swaps it at every
/// handshake). Read as an `Arc`: nothing is copied per message.
#[derive(Debug, Default)]
pub(crate) struct Current(RwLock<Option<Arc<Session>>>);

impl Current {
    pub(crate) fn get(&self) -> Option<Arc<Session>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Makes `session` the current one; returns the one before.
    pub(crate) fn replace(&self, session: Arc<Session>) -> Option<Arc<Session>> {
        self.0.write().unwrap_or_else(PoisonError::into_inner).replace(session)
    }
}

/// Removes what each item's path names (the member that holds a value, or the array item),
/// each a warning.
fn strip(release: &Release, method: &str, value: &mut Value, items: &[Item]) {
    for item in items {
        tracing::warn!(method, path = %item.path, item = %item.item, server = %release, "left out: {item}");
    }
    for path in removal_order(items.iter().map(|i| &i.path)) {
        // Below `params` or `result`, which `value` is.
        let steps: Vec<Step<'_>> = path.steps().skip(1).collect();
        remove(value, &steps);
    }
}

/// The longest paths first, so a removal never shifts a path still to come (array indices of
/// one array are removed from the last); each once.
fn removal_order<'p>(paths: impl Iterator<Item = &'p JsonPath>) -> Vec<&'p JsonPath> {
    let mut paths: Vec<&JsonPath> = paths.collect();
    paths.sort_by(|a, b| b.len().cmp(&a.len()).then(b.cmp(a)));
    paths.dedup();
    paths
}

fn remove(value: &mut Value, steps: &[Step<'_>]) {
    let Some((last, parents)) = steps.split_last() else { return };
    let mut at = value;
    for step in parents {
        let next = match (step, at) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(*k),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        match next {
            Some(v) => at = v,
            None => return,
        }
    }
    match (last, at) {
        (Step::Key(k), Value::Object(map)) => {
            map.remove(*k);
        }
        (Step::Index(i), Value::Array(items)) if *i < items.len() => {
            items.remove(*i);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_what_paths_name() {
        let mut v = serde_json::json!({"a": [1, {"x": 1, "y": 2}, 3, 4], "b": 3, "c d": {"e": 1}});
        let path = |steps: &[Step<'_>]| JsonPath::from_steps(steps);
        remove(&mut v, &[Step::Key("a"), Step::Index(1), Step::Key("x")]);
        remove(&mut v, &[Step::Key("b")]);
        remove(&mut v, &[Step::Key("c d"), Step::Key("e")]);
        assert_eq!(v, serde_json::json!({"a": [1, {"y": 2}, 3, 4], "c d": {}}));
        // Indices of one array go from the last, whatever order they came in.
        let a = |i| path(&[Step::Key("params"), Step::Key("a"), Step::Index(i)]);
        let paths = [a(2), path(&[Step::Key("params"), Step::Key("b")]), a(10), a(3), a(2)];
        let order: Vec<String> = removal_order(paths.iter()).iter().map(|p| p.to_string()).collect();
        assert_eq!(order, ["params.a[10]", "params.a[3]", "params.a[2]", "params.b"]);
    }
}
