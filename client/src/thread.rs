//! Thread handles: start, resume or fork a thread, then `run` a prompt to its final answer or
//! stream a `turn`; `read`, `set_name`, `compact`, archive.
//!
//! ```no_run
//! # async fn run(client: codex_app_client::Client) -> Result<(), codex_app_client::ClientError> {
//! let thread = client.thread_start(Default::default()).await?;
//! let answer = thread.run("What is 2 + 2?").await?;
//! println!("{}", answer.final_response);
//! # Ok(()) }
//! ```
//!
//! The methods that differ between codex releases (`thread/fork`, `thread/read`,
//! `thread/name/set`, `thread/compact/start`, `thread/unarchive`, the input of a turn) are
//! written as the wire's JSON and their results decoded into the release's types, so the handles
//! build against the crate generated from any release; a server without the method answers an
//! error.

use codex_app_protocol::*;
use serde_json::{json, Value};

use crate::client::Client;
use crate::error::{ClientError, DecodeReport};
use crate::turn::TurnHandle;

/// What a turn is asked: text (`&str`, `String`) or the typed input items.
#[derive(Debug, Clone)]
pub struct Input(Vec<Value>);

impl Input {
    /// The input as the wire's `input` array.
    fn into_json(self) -> Value {
        Value::Array(self.0)
    }
}

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input(vec![json!({"type": "text", "text": text})])
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input::from(text.as_str())
    }
}

impl From<UserInput> for Input {
    fn from(item: UserInput) -> Self {
        Input::from(vec![item])
    }
}

impl From<Vec<UserInput>> for Input {
    fn from(items: Vec<UserInput>) -> Self {
        Input(items.iter().map(|item| serde_json::to_value(item).unwrap_or(Value::Null)).collect())
    }
}

/// A thread of the server; cheap to clone. Made by [`Client::thread_start`],
/// [`Client::thread_resume`] and [`Client::thread_fork`].
#[derive(Debug, Clone)]
pub struct ThreadHandle {
    client: Client,
    thread: Thread,
    id: String,
}

/// What [`ThreadHandle::run`] returns: the turn, its final answer, every item it completed and
/// its token usage.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The text of the turn's last agent message (empty when it has none).
    pub final_response: String,
    /// The items the turn completed, in order (`item/completed`).
    pub items: Vec<ThreadItem>,
    /// The thread's token usage after the turn (`thread/tokenUsage/updated`, as JSON: its type
    /// differs between releases), when the server reported it.
    pub usage: Option<Value>,
    /// The turn as `turn/completed` reported it.
    pub turn: Turn,
}

impl ThreadHandle {
    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The thread as the server last described it (at start, resume or fork, or [`read`](Self::read)).
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// The client the thread runs on.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Whether the connection receives the thread's events: `false` once the server refused
    /// to resume it after a reconnect ([`Event::ThreadDetached`](crate::Event::ThreadDetached));
    /// then [`detached`](Self::detached) has the server's message, and new turns fail at once
    /// with [`ClientError::ThreadDetached`] until it is resumed
    /// ([`Client::thread_resume`]).
    pub fn is_attached(&self) -> bool {
        self.detached().is_none()
    }

    /// Why the server did not resume the thread after a reconnect, if it did not (see
    /// [`is_attached`](Self::is_attached)).
    pub fn detached(&self) -> Option<String> {
        self.client.inner.status.detached(&self.id)
    }

    /// Starts a turn with `input`; the handle streams its events.
    ///
    /// Cancel safe, as [`Client::start_turn`].
    pub async fn turn(&self, input: impl Into<Input>) -> Result<TurnHandle, ClientError> {
        self.turn_with(input, json!({})).await
    }

    /// Starts a turn with `input` and other `turn/start` params given as JSON (`{"model":
    /// "o3"}`, wire member names).
    ///
    /// Cancel safe, as [`Client::start_turn`].
    pub async fn turn_with(&self, input: impl Into<Input>, params: Value) -> Result<TurnHandle, ClientError> {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ClientError::Refused(format!(
                    "the params of `turn/start` must be a JSON object, not {other}"
                )))
            }
        };
        if let Some(message) = self.detached() {
            return Err(ClientError::ThreadDetached { thread_id: self.id.clone(), message });
        }
        params.insert("threadId".into(), self.id.clone().into());
        params.insert("input".into(), input.into().into_json());
        self.client.start_turn_with(self.id.clone(), &Value::Object(params)).await
    }

    /// Runs one turn to its end: its final answer, completed items and token usage. A failed
    /// turn is [`ClientError::TurnFailed`]. Approvals go to the client's handler.
    ///
    /// **Lag.** The turn's end is never lost (see [`TurnHandle::wait`]). Deltas dropped
    /// because this task fell more than [`turn_buffer`](crate::ClientBuilder::turn_buffer)
    /// events behind cost nothing (the items are read from `item/completed`), and a dropped
    /// `thread/tokenUsage/updated` leaves `usage` as the last one read; but when a completed
    /// item itself was dropped, `run` returns [`ClientError::ItemsLost`] (with the completed
    /// turn) rather than a list that silently misses it.
    ///
    /// Cancel safe in the sense that dropping the future at any point releases the turn's
    /// routing and buffers at once (the turn goes on at the server; interrupt it with a
    /// [`turn`](Self::turn) handle to stop it).
    pub async fn run(&self, input: impl Into<Input>) -> Result<RunResult, ClientError> {
        let mut turn = self.turn(input).await?;
        let mut items = Vec::new();
        let mut usage = None;
        while let Some(event) = turn.next().await {
            let Some(notification) = event.notification() else { continue };
            match notification.method() {
                "item/completed" => {
                    let params = wire_json(notification)?;
                    items.push(decode::<ThreadItem>(
                        "item/completed",
                        "params.item",
                        params["params"]["item"].clone(),
                    )?);
                }
                "thread/tokenUsage/updated" => usage = wire_json(notification)?["params"].get("tokenUsage").cloned(),
                _ => {}
            }
        }
        let completed = turn.wait().await?;
        let lost = turn.lost_items();
        if lost > 0 {
            let (turn_id, turn) = (turn.turn_id().to_owned(), serde_json::to_value(&completed).unwrap_or_default());
            return Err(ClientError::ItemsLost { thread_id: self.id.clone(), turn_id, lost, turn });
        }
        let turn = completed;
        let final_response = items
            .iter()
            .rev()
            .filter_map(|item| serde_json::to_value(item).ok())
            .find(|item| item["type"] == "agentMessage")
            .and_then(|item| item["text"].as_str().map(str::to_owned))
            .unwrap_or_default();
        Ok(RunResult { final_response, items, usage, turn })
    }

    /// `thread/read`: the thread, with its turns when `include_turns`. The handle keeps it.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on. The handle keeps the thread it had.
    pub async fn read(&mut self, include_turns: bool) -> Result<&Thread, ClientError> {
        let result =
            self.client.request_raw("thread/read", json!({"threadId": self.id, "includeTurns": include_turns})).await?;
        self.thread = decode::<Thread>("thread/read", "result.thread", result["thread"].clone())?;
        Ok(&self.thread)
    }

    /// `thread/name/set`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn set_name(&self, name: &str) -> Result<(), ClientError> {
        self.client.request_raw("thread/name/set", json!({"threadId": self.id, "name": name})).await.map(drop)
    }

    /// `thread/compact/start`: the server compacts the thread's history (its progress comes as
    /// notifications).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn compact(&self) -> Result<(), ClientError> {
        self.client.request_raw("thread/compact/start", json!({"threadId": self.id})).await.map(drop)
    }

    /// `thread/archive`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn archive(&self) -> Result<(), ClientError> {
        self.client.thread_archive(&self.id).await
    }
}

impl Client {
    /// `thread/start`, returning the thread's handle.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_start(&self, params: ThreadStartParams) -> Result<ThreadHandle, ClientError> {
        let response = self.request::<request::ThreadStart>(params).await?;
        let result = serde_json::to_value(&response).map_err(|e| decode_error("thread/start", "result", e.to_string()));
        self.thread_handle("thread/start", result)
    }

    /// `thread/resume` of the thread `id` (a stored thread, or a running one: the client then
    /// gets its events again).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_resume(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        self.thread_resume_with(json!({"threadId": id})).await
    }

    /// `thread/resume` with params given as JSON (wire member names).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_resume_with(&self, params: Value) -> Result<ThreadHandle, ClientError> {
        let result = self.request_raw("thread/resume", params).await;
        self.thread_handle("thread/resume", result)
    }

    /// `thread/fork` of the thread `id`: a new thread with its history.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_fork(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        let result = self.request_raw("thread/fork", json!({"threadId": id})).await;
        self.thread_handle("thread/fork", result)
    }

    /// `thread/list`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_list(&self, params: ThreadListParams) -> Result<ThreadListResponse, ClientError> {
        self.request::<request::ThreadList>(params).await
    }

    /// `thread/archive` of the thread `id`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_archive(&self, id: &str) -> Result<(), ClientError> {
        self.request_raw("thread/archive", json!({"threadId": id})).await.map(drop)
    }

    /// `thread/unarchive` of the thread `id`, returning its handle.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`](crate::Event::Orphan)); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_unarchive(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        let result = self.request_raw("thread/unarchive", json!({"threadId": id})).await;
        self.thread_handle("thread/unarchive", result)
    }

    /// The handle of the thread in a result's `thread` member.
    fn thread_handle(&self, method: &str, result: Result<Value, ClientError>) -> Result<ThreadHandle, ClientError> {
        let result = result?;
        let thread = decode::<Thread>(method, "result.thread", result["thread"].clone())?;
        let id = result["thread"]["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| decode_error(method, "result.thread.id", "no thread id".into()))?;
        Ok(ThreadHandle { client: self.clone(), thread, id })
    }
}

/// A notification as its wire JSON.
fn wire_json(notification: &ServerNotification) -> Result<Value, ClientError> {
    serde_json::to_value(notification).map_err(|e| decode_error(notification.method(), "params", e.to_string()))
}

/// Decodes `value` (at `path` of a `method` message) into the release's type.
fn decode<T: serde::de::DeserializeOwned>(method: &str, path: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| decode_error(method, path, e.to_string()))
}

fn decode_error(method: &str, path: &str, message: String) -> ClientError {
    ClientError::Decode(DecodeReport {
        line_number: None,
        method: Some(method.to_owned()),
        path: Some(path.to_owned()),
        message,
        line: String::new(),
    })
}
