//! The server's codex release and what the client does about it, in one place: the release
//! read from `initialize`'s `userAgent` at every handshake ([`VersionCheck`], against the range
//! of releases the crate supports), a release outside that range admitted or refused
//! ([`VersionPolicy`]), and what the client sends checked against the release
//! ([`UnknownItemPolicy`]).
//!
//! An older codex silently ignores a params member it does not know (and answers as if it had
//! not been sent: `thread/list` with `includedThreadIds` lists every thread), and refuses an
//! enum value or method it does not know. So before sending, the client checks the method and
//! the params against the server's release ([`codex_app_protocol::availability`]): a method
//! the release lacks fails locally, nothing sent ([`ClientError::Unavailable`]); params that
//! use members, values or arms the release lacks are refused by default
//! ([`ClientError::UnknownToServer`]), or stripped with a `tracing` warning, or sent anyway
//! ([`UnknownItemPolicy`],
//! [`ClientBuilder::unknown_to_server`](crate::ClientBuilder::unknown_to_server)).
//!
//! A server newer than the crate is accepted (what it added is kept as `Unrecognized` and
//! unknown members), and so is a server whose version cannot be read from `userAgent`: then
//! nothing is checked (the client says so once, as a warning).

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use codex_app_protocol::availability::{self, Check, Release, Support, Unknown, FLOOR};
use codex_app_protocol::path::{JsonPath, Step};
use codex_app_protocol::{InitializeResponse, CODEX_VERSION};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{ClientError, DecodeReport};

/// The server's codex release (read from `initialize`'s `userAgent`) against the range of
/// releases the crate was generated for ([`codex_app_protocol::availability`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCheck {
    /// The newest release of the range (the one the crate was generated from).
    pub expected: &'static str,
    /// The version in the server's `userAgent`, when one could be read.
    pub server: Option<String>,
    /// That version as a release, when it is one (semver, pre-releases included).
    pub release: Option<Release>,
    /// The whole `userAgent`.
    pub user_agent: String,
}

impl VersionCheck {
    /// Reads the version from a `userAgent` without knowing the client's name: the first
    /// word after a `/` that is a release number (`<client name>/<codex version> (...)`).
    /// When the name is known, [`for_client`](Self::for_client) reads any name.
    pub fn new(user_agent: &str) -> Self {
        Self::from_version(user_agent, guess_version(user_agent))
    }

    /// Reads the version from a `userAgent` that codex wrote for the client named
    /// `client_name` (`clientInfo.name` of `initialize`): codex writes
    /// `<clientInfo.name>/<codex version> (<os>; <arch>) ...` with the name as it was sent
    /// (spaces, slashes and non-ASCII included), so the version is what follows the name and
    /// `/`, up to the first space. When the `userAgent` does not start with the name, the
    /// version is read as [`new`](Self::new) reads it.
    pub fn for_client(client_name: &str, user_agent: &str) -> Self {
        let after_name = user_agent
            .strip_prefix(client_name)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(|rest| rest.split(char::is_whitespace).next().unwrap_or_default())
            .filter(|v| !v.is_empty());
        match after_name {
            Some(version) => Self::from_version(user_agent, Some(version.to_owned())),
            None => Self::new(user_agent),
        }
    }

    fn from_version(user_agent: &str, server: Option<String>) -> Self {
        let release = server.as_deref().and_then(Release::parse);
        VersionCheck { expected: CODEX_VERSION, server, release, user_agent: user_agent.to_owned() }
    }

    /// Where the server's release is against the supported range; `None` when the version
    /// could not be read (the server is "unknown").
    pub fn support(&self) -> Option<Support> {
        self.release.as_ref().map(|r| r.support())
    }

    /// Whether the server's release is in the supported range.
    pub fn matches(&self) -> bool {
        self.support() == Some(Support::InRange)
    }
}

impl fmt::Display for VersionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range = format!("codex {FLOOR} to {}", self.expected);
        match (&self.server, self.support()) {
            (Some(v), Some(Support::InRange)) => write!(f, "the server runs codex {v}, which this application supports ({range})"),
            (Some(v), Some(Support::Older)) => write!(
                f,
                "the server runs codex {v}, older than this application supports ({range}): some of its messages may not be understood; update codex to {FLOOR} or later"
            ),
            (Some(v), Some(Support::Newer)) => write!(
                f,
                "the server runs codex {v}, newer than this application knows ({range}): what codex added since {} is passed over",
                self.expected
            ),
            (server, _) => write!(
                f,
                "cannot read a codex release from the server's userAgent {:?}{}: the server is unknown, and requests are sent without checking them against its release (this application supports {range})",
                self.user_agent,
                server.as_deref().map(|v| format!(" (version {v:?})")).unwrap_or_default()
            ),
        }
    }
}

/// The version in a `userAgent` of an unknown client name: the first word after a `/` that is
/// a release number; else the last `/`-part of the first word (which may be no release).
fn guess_version(user_agent: &str) -> Option<String> {
    let word_after = |i: usize| user_agent[i + 1..].split(char::is_whitespace).next().unwrap_or_default();
    let release = user_agent.match_indices('/').map(|(i, _)| word_after(i)).find(|word| Release::parse(word).is_some());
    release
        .or_else(|| user_agent.split_whitespace().next().and_then(|first| first.rsplit_once('/')).map(|(_, v)| v))
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// What to do when the server's codex release is outside the range the crate supports
/// ([`FLOOR`] to [`CODEX_VERSION`]), or cannot be read. Within the range every release is
/// supported: each request is checked against the server's release before it is sent
/// ([`ClientBuilder::unknown_to_server`](crate::ClientBuilder::unknown_to_server)).
///
/// The release is read from `initialize`'s `userAgent` before anything else of the answer has
/// to decode, at every handshake: the first and each reconnect's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionPolicy {
    /// Log a warning (a `tracing` event that names the supported range) and go on (the
    /// default): an older release's messages may not decode (below the range, not even its
    /// `initialize` result:
    /// [`Client::initialize_response`](crate::Client::initialize_response) is `None` then and
    /// [`Client::initialize_result`](crate::Client::initialize_result) has it as JSON); a
    /// newer release's additions are passed over; an unknown release is sent requests without
    /// the check. [`Client::version_check`](crate::Client::version_check) has the details
    /// either way.
    #[default]
    Warn,
    /// Fail the connection with [`ClientError::VersionMismatch`] (whose message names the
    /// supported range) when the release is outside the range or cannot be read. After a
    /// reconnect to such a release, that attempt fails like a refused handshake and the
    /// client tries again as its reconnect policy allows.
    Error,
    /// Go on silently.
    Ignore,
}

/// What to do with a message whose params (or a handler's answer) use members, enum values or
/// union arms the server's release does not have (each an [`availability::Unknown`] item):
/// [`ClientBuilder::unknown_to_server`](crate::ClientBuilder::unknown_to_server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownItemPolicy {
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
        policy: UnknownItemPolicy,
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
        // Encoded once, as it is sent; the check reads that text (as it does an answer's).
        let encoded = serde_json::value::to_raw_value(params).map_err(cannot)?;
        let items = match policy {
            UnknownItemPolicy::Send => Vec::new(),
            _ => check.params_raw(method, &encoded).unwrap_or_default(),
        };
        if items.is_empty() {
            return Ok(encoded);
        }
        if policy == UnknownItemPolicy::Refuse {
            return Err(ClientError::UnknownToServer { method: method.to_owned(), server: release.to_string(), items });
        }
        let mut value: Value = serde_json::from_str(encoded.get()).map_err(cannot)?;
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
        policy: UnknownItemPolicy,
    ) -> Result<Box<RawValue>, String> {
        let Some(check) = &self.check else { return Ok(result) };
        if policy == UnknownItemPolicy::Send {
            return Ok(result);
        }
        let release = check.release();
        let items = match check.result_raw(method, &result) {
            Ok(items) if !items.is_empty() => items,
            _ => return Ok(result),
        };
        if policy == UnknownItemPolicy::Refuse {
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
    pub unknown: UnknownItemPolicy,
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
fn strip(release: &Release, method: &str, value: &mut Value, items: &[Unknown]) {
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

    #[test]
    fn version_after_any_client_name() {
        let agent =
            |name: &str, version: &str| format!("{name}/{version} (Debian 12.0.0; x86_64) xterm ({name}; 0.0.0)");
        for name in ["My App", "a/b/c", "Äpp ünïcode 名前", "x/1.2.3 (y)", "trailing/", "", " lead", "v/0.1.0 z"] {
            for version in ["0.171.0", "0.100.0", "0.128.0-alpha.1"] {
                let check = VersionCheck::for_client(name, &agent(name, version));
                assert_eq!(check.server.as_deref(), Some(version), "{name:?}");
                assert_eq!(check.release.as_ref().map(ToString::to_string).as_deref(), Some(version), "{name:?}");
            }
        }
        // The name the real codex 0.100.0 echoed for `My Äpp/x`.
        let check =
            VersionCheck::for_client("My Äpp/x", "My Äpp/x/0.100.0 (Debian 12.0.0; x86_64) xterm (My Äpp/x; 1.0)");
        assert_eq!(check.server.as_deref(), Some("0.100.0"));
        // Without the name: the first release number after a `/`.
        assert_eq!(VersionCheck::new(&agent("My App", "0.171.0")).server.as_deref(), Some("0.171.0"));
        assert_eq!(VersionCheck::new(&agent("a/b/c", "0.169.0")).server.as_deref(), Some("0.169.0"));
        // A userAgent that does not start with the name is read as without it.
        let other = VersionCheck::for_client("mine", &agent("theirs", "0.150.0"));
        assert_eq!(other.server.as_deref(), Some("0.150.0"));
        // A name followed by no version reads none.
        let none = VersionCheck::for_client("n", "n/ (x)");
        assert_eq!(none.release, None);
    }

    #[test]
    fn version_from_user_agent() {
        let check = VersionCheck::new("p/0.169.0 (Debian 12.0.0; x86_64) xterm (p; 0)");
        assert_eq!(check.server.as_deref(), Some("0.169.0"));
        let other = VersionCheck::new("codex-app-client/0.100.0 (x)");
        assert_eq!(other.server.as_deref(), Some("0.100.0"));
        assert!(!other.matches(), "0.100.0 is older than the supported range");
        assert!(other.to_string().contains("update codex to"), "{other}");
        let newest = VersionCheck::new(&format!("x/{} (y)", CODEX_VERSION));
        assert!(newest.matches());
        let newer = VersionCheck::new("x/99.0.0 (y)");
        assert!(!newer.matches() && newer.to_string().contains("newer"), "{newer}");
        let pre = VersionCheck::new("x/0.128.0-alpha.1 (y)");
        assert_eq!(pre.release.as_ref().map(|r| r.pre.as_str()), Some("alpha.1"));
        let unknown = VersionCheck::new("x/dev-build (y)");
        assert_eq!(unknown.support(), None);
        assert!(unknown.to_string().contains("unknown"), "{unknown}");
        assert_eq!(VersionCheck::new("garbage").server, None);
        assert_eq!(VersionCheck::new("").server, None);
    }
}
