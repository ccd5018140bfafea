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

use codex_app_protocol::availability::{self, Release, Support, Unknown as Item};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::ClientError;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Server {
    /// `None`: nothing to check (the release could not be read, or it is at least as new as
    /// the crate).
    release: Option<Release>,
}

impl Server {
    pub(crate) fn new(release: Option<Release>) -> Server {
        let older =
            release.filter(|r| r.support() != Support::Newer && r.to_string() != codex_app_protocol::CODEX_VERSION);
        Server { release: older }
    }

    /// Checks `method` and its params (encoded) before sending; returns the params to send.
    pub(crate) fn check(
        &self,
        method: &str,
        params: Box<RawValue>,
        policy: Unknown,
    ) -> Result<Box<RawValue>, ClientError> {
        let Some(release) = &self.release else { return Ok(params) };
        if let Some(a) = availability::method(method) {
            if !a.in_release(release) {
                return Err(ClientError::Unavailable {
                    method: method.to_owned(),
                    availability: a,
                    server: release.to_string(),
                });
            }
        }
        Self::filter(release, method, params, policy, availability::unknown_in_text).map_err(|items| {
            ClientError::UnknownToServer { method: method.to_owned(), server: release.to_string(), items }
        })
    }

    /// Checks an answer to the server's request `method` before sending: `Err` (the text of an
    /// error answer) when it uses what the server's release lacks and the policy refuses it,
    /// since the server would ignore such a member or refuse such a value. Stripped or sent as
    /// the policy says.
    pub(crate) fn check_answer(
        &self,
        method: &str,
        result: Box<RawValue>,
        policy: Unknown,
    ) -> Result<Box<RawValue>, String> {
        let Some(release) = &self.release else { return Ok(result) };
        Self::filter(release, method, result, policy, availability::unknown_in_result).map_err(|items| {
            let list = items.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
            tracing::warn!(method, server = %release, "the answer uses what codex {release} lacks: {list}; answered with an error");
            format!("the client's answer to `{method}` uses what codex {release} does not have: {list}")
        })
    }

    /// What `find` reports in `text` that `release` lacks, by `policy`: the text to send (as it
    /// is, or stripped, each a warning), or, to refuse, what was found. Text that `find` cannot
    /// read is sent as it is: the server says what it makes of it.
    fn filter(
        release: &Release,
        method: &str,
        text: Box<RawValue>,
        policy: Unknown,
        find: fn(&Release, &str, &str) -> Result<Vec<Item>, serde_json::Error>,
    ) -> Result<Box<RawValue>, Vec<Item>> {
        if policy == Unknown::Send {
            return Ok(text);
        }
        // One pass over the text; a `Value` only to strip what was found.
        let items = match find(release, method, text.get()) {
            Ok(items) if !items.is_empty() => items,
            _ => return Ok(text),
        };
        if policy == Unknown::Refuse {
            return Err(items);
        }
        for item in &items {
            tracing::warn!(method, path = %item.path, item = %item.item, server = %release, "left out: {item}");
        }
        let Ok(mut value) = serde_json::from_str::<Value>(text.get()) else { return Ok(text) };
        strip(&mut value, &items);
        Ok(serde_json::value::to_raw_value(&value).unwrap_or(text))
    }
}

/// The server's release and the policy, as the connection's handler tasks read them: set once
/// the handshake has read the release.
pub(crate) type Shared = std::sync::Arc<std::sync::OnceLock<(Server, Unknown)>>;

/// Removes what each item's path names (the member that holds a value, or the array item).
fn strip(value: &mut Value, items: &[Item]) {
    // The longest paths first, so a removal never shifts a path still to come (array indices
    // of one array are removed from the last).
    let mut paths: Vec<&str> = items.iter().map(|i| i.path.as_str()).collect();
    paths.sort_by(|a, b| b.len().cmp(&a.len()).then(b.cmp(a)));
    paths.dedup();
    for path in paths {
        let steps = steps(path.strip_prefix("params").or_else(|| path.strip_prefix("result")).unwrap_or(path));
        remove(value, &steps);
    }
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `.a.b[0]["c d"]` as steps (the syntax of `codex_app_protocol::roundtrip::push_key`).
fn steps(path: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(c) = rest.chars().next() {
        match c {
            '.' => {
                let end = rest[1..].find(['.', '[']).map_or(rest.len(), |i| i + 1);
                out.push(Step::Key(rest[1..end].to_owned()));
                rest = &rest[end..];
            }
            '[' if rest[1..].starts_with('"') => {
                // A JSON string, then `]`.
                let mut stream = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
                match stream.next() {
                    Some(Ok(key)) => {
                        let used = 1 + stream.byte_offset();
                        out.push(Step::Key(key));
                        rest = rest[used..].strip_prefix(']').unwrap_or(&rest[used..]);
                    }
                    _ => return out,
                }
            }
            '[' => {
                let Some(end) = rest.find(']') else { return out };
                if let Ok(i) = rest[1..end].parse() {
                    out.push(Step::Index(i));
                }
                rest = &rest[end + 1..];
            }
            _ => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                out.push(Step::Key(rest[..end].to_owned()));
                rest = &rest[end..];
            }
        }
    }
    out
}

fn remove(value: &mut Value, steps: &[Step]) {
    let Some((last, parents)) = steps.split_last() else { return };
    let mut at = value;
    for step in parents {
        let next = match (step, at) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k),
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
            map.remove(k);
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
    fn paths_read_back_as_steps() {
        assert_eq!(
            steps(".a[2][\"b.c\"].d"),
            vec![Step::Key("a".into()), Step::Index(2), Step::Key("b.c".into()), Step::Key("d".into())]
        );
        let mut v = serde_json::json!({"a": [1, {"x": 1, "y": 2}], "b": 3});
        remove(&mut v, &steps(".a[1].x"));
        remove(&mut v, &steps(".b"));
        assert_eq!(v, serde_json::json!({"a": [1, {"y": 2}]}));
    }
}
