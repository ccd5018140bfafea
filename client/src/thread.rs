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
//! Options are the generated params types: [`ThreadHandle::turn_with`] and
//! [`run_with`](ThreadHandle::run_with) take a `TurnStartParams`, [`Client::thread_resume_with`]
//! a `ThreadResumeParams`, [`Client::thread_fork_with`] a `ThreadForkParams`.
//!
//! ```no_run
//! # async fn run(thread: codex_app_client::ThreadHandle) -> Result<(), codex_app_client::ClientError> {
//! use codex_app_client::protocol::*;
//! let params = TurnStartParams { model: Some("o3".into()), ..thread.turn_params("Plan the refactor") };
//! let answer = thread.run_with(params).await?;
//! # Ok(()) }
//! ```
//!
//! The handles send the release's typed params, built with `new` from their required members;
//! the threads of the results are read by member name (`thread.id`) and decoded into the
//! release's `Thread`.

use codex_app_protocol::path::Step;
use codex_app_protocol::roundtrip::reencode;
use codex_app_protocol::*;
use serde_json::{json, Value};

use std::time::Duration;

use crate::client::Client;
use crate::error::{ClientError, DecodeReport};
use crate::events::Event;
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
        Input(items.iter().map(|item| reencode(item).unwrap_or(Value::Null)).collect())
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
#[non_exhaustive]
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
    /// to resume it after a reconnect ([`Event::ThreadDetached`]);
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

    /// [`ClientError::ThreadDetached`] when the server refused to resume the thread after a
    /// reconnect (see [`is_attached`](Self::is_attached)).
    fn check_attached(&self) -> Result<(), ClientError> {
        match self.detached() {
            Some(message) => Err(ClientError::ThreadDetached { thread_id: self.id.clone(), message }),
            None => Ok(()),
        }
    }

    /// Starts a turn with `input`; the handle streams its events.
    ///
    /// Cancel safe, as [`Client::start_turn`].
    pub async fn turn(&self, input: impl Into<Input>) -> Result<TurnHandle, ClientError> {
        self.check_attached()?;
        let params = json!({"threadId": self.id, "input": input.into().into_json()});
        self.client.start_turn_with(self.id.clone(), &params).await
    }

    /// The `turn/start` params of a turn of this thread with `input` and every option absent,
    /// to fill in with struct update syntax:
    /// `TurnStartParams { model: Some("o3".into()), ..thread.turn_params("...") }`.
    /// An input item that does not fit this release's `UserInput` is left out (the inputs the
    /// crate makes, text and the `UserInput`s, always fit).
    pub fn turn_params(&self, input: impl Into<Input>) -> TurnStartParams {
        let items = input.into().0.into_iter().filter_map(|item| serde_json::from_value(item).ok()).collect();
        TurnStartParams::new(items, self.id.clone())
    }

    /// Starts a turn with typed `turn/start` params (the model, effort, sandbox, output
    /// schema...; see [`turn_params`](Self::turn_params)). `params.thread_id` must be this
    /// thread's id, or empty for this thread; another thread's is refused before sending.
    ///
    /// Cancel safe, as [`Client::start_turn`].
    pub async fn turn_with(&self, mut params: TurnStartParams) -> Result<TurnHandle, ClientError> {
        if params.thread_id.is_empty() {
            params.thread_id = self.id.clone();
        }
        if params.thread_id != self.id {
            return Err(ClientError::Refused(format!(
                "the `turn/start` params name thread {}, not this handle's thread {}",
                params.thread_id, self.id
            )));
        }
        self.check_attached()?;
        self.client.start_turn(params).await
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
    ///
    /// **Waiting.** `run` has no deadline: a turn whose model cannot be reached stays open
    /// while codex retries (its reports are `tracing` warnings, see [`Retrying`](crate::Retrying)). Give one
    /// with [`run_with_options`](Self::run_with_options).
    pub async fn run(&self, input: impl Into<Input>) -> Result<RunResult, ClientError> {
        self.run_with_options(input, RunOptions::default()).await
    }

    /// [`run`](Self::run) with typed `turn/start` params (see [`turn_with`](Self::turn_with)).
    pub async fn run_with(&self, params: TurnStartParams) -> Result<RunResult, ClientError> {
        let turn = self.turn_with(params).await?;
        run_turn(turn, RunOptions::default()).await
    }

    /// [`run`](Self::run) with [`RunOptions`]: a deadline for the turn's end (when it passes
    /// the turn is interrupted, or left running, and the error,
    /// [`ClientError::TurnDeadline`], says what the turn was waiting for), and a callback
    /// that sees each event of the turn (to show what codex reports while it retries, say).
    ///
    /// ```no_run
    /// # async fn run(thread: codex_app_client::ThreadHandle) -> Result<(), codex_app_client::ClientError> {
    /// use std::time::Duration;
    /// use codex_app_client::RunOptions;
    /// let options = RunOptions::new().deadline(Duration::from_secs(120)).on_event(|event| {
    ///     if let Some(retrying) = event.retrying() {
    ///         eprintln!("waiting: {retrying}");
    ///     }
    /// });
    /// let answer = thread.run_with_options("What is 2 + 2?", options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn run_with_options(
        &self,
        input: impl Into<Input>,
        options: RunOptions,
    ) -> Result<RunResult, ClientError> {
        let turn = self.turn(input).await?;
        run_turn(turn, options).await
    }
}

/// How a turn is run to its end ([`ThreadHandle::run_with_options`], [`TurnHandle::run`]):
/// by a deadline or not, and what is done with each event. The default: no deadline, nothing.
#[derive(Default)]
#[non_exhaustive]
pub struct RunOptions {
    deadline: Option<Duration>,
    at_deadline: AtDeadline,
    on_event: Option<OnEvent>,
}

/// The callback of [`RunOptions::on_event`].
type OnEvent = Box<dyn FnMut(&Event) + Send>;

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("deadline", &self.deadline)
            .field("at_deadline", &self.at_deadline)
            .field("on_event", &self.on_event.as_ref().map(|_| "FnMut(&Event)"))
            .finish()
    }
}

impl RunOptions {
    /// No deadline, no callback.
    pub fn new() -> Self {
        RunOptions::default()
    }

    /// The turn must end within `deadline`, counted from when its events are first read
    /// (after the `turn/start` answer, which has the request timeout). When it passes, the
    /// turn is interrupted (see [`at_deadline`](Self::at_deadline)) and the run fails with
    /// [`ClientError::TurnDeadline`], which names what the turn was waiting for: what codex
    /// last reported while retrying ([`Retrying`](crate::Retrying)), else the turn's last event.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// What is done with the turn when the deadline passes ([`AtDeadline::Interrupt`] by
    /// default).
    pub fn at_deadline(mut self, at: AtDeadline) -> Self {
        self.at_deadline = at;
        self
    }

    /// Called with each event of the turn, as it is read (before the run looks at it):
    /// deltas to print as they come, [`Event::retrying`] to show what the turn waits for.
    pub fn on_event(mut self, on_event: impl FnMut(&Event) + Send + 'static) -> Self {
        self.on_event = Some(Box::new(on_event));
        self
    }
}

/// What happens to a turn whose [`RunOptions::deadline`] passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AtDeadline {
    /// `turn/interrupt` is sent (waited for up to 5 s); the server ends the turn as
    /// interrupted. The default.
    #[default]
    Interrupt,
    /// The turn is left running at the server; the client stops reading it (its handle is
    /// dropped: later events of the turn go only to [`Client::notifications`]).
    Leave,
}

/// Reads `turn` to its end with `options`: what [`ThreadHandle::run`] returns.
pub(crate) async fn run_turn(mut turn: TurnHandle, mut options: RunOptions) -> Result<RunResult, ClientError> {
    let deadline = options.deadline.map(|d| (d, tokio::time::Instant::now() + d));
    let mut items = Vec::new();
    let mut usage = None;
    loop {
        let next = match deadline {
            Some((after, at)) => match tokio::time::timeout_at(at, turn.next()).await {
                Ok(next) => next,
                Err(_) => return Err(turn.deadline_passed(after, options.at_deadline).await),
            },
            None => turn.next().await,
        };
        let Some(event) = next else { break };
        if let Some(on_event) = &mut options.on_event {
            on_event(&event);
        }
        let Some(notification) = event.notification() else { continue };
        match notification.method() {
            "item/completed" => {
                let params = wire_json(notification)?;
                items.push(decode::<ThreadItem>(
                    "item/completed",
                    &["params", "item"],
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
        let (thread_id, turn_id) = (turn.thread_id().to_owned(), turn.turn_id().to_owned());
        let turn = reencode(&completed).unwrap_or_default();
        return Err(ClientError::ItemsLost { thread_id, turn_id, lost, turn });
    }
    let turn = completed;
    let final_response = items
        .iter()
        .rev()
        .filter_map(|item| reencode(item).ok())
        .find(|item| item["type"] == "agentMessage")
        .and_then(|item| item["text"].as_str().map(str::to_owned))
        .unwrap_or_default();
    Ok(RunResult { final_response, items, usage, turn })
}

impl ThreadHandle {
    /// `thread/read`: the thread, with its turns when `include_turns`. The handle keeps it.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on. The handle keeps the thread it had.
    pub async fn read(&mut self, include_turns: bool) -> Result<&Thread, ClientError> {
        let params = ThreadReadParams { include_turns: Some(include_turns), ..ThreadReadParams::new(self.id.clone()) };
        let result = self.client.request_sent::<request::ThreadRead>(&params).await?;
        self.thread = decode::<Thread>("thread/read", &["result", "thread"], result["thread"].clone())?;
        Ok(&self.thread)
    }

    /// `thread/name/set`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn set_name(&self, name: &str) -> Result<(), ClientError> {
        let params = ThreadSetNameParams::new(name.to_owned(), self.id.clone());
        self.client.request_sent::<request::ThreadNameSet>(&params).await.map(drop)
    }

    /// `thread/compact/start`: the server compacts the thread's history (its progress comes as
    /// notifications).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn compact(&self) -> Result<(), ClientError> {
        let params = ThreadCompactStartParams::new(self.id.clone());
        self.client.request_sent::<request::ThreadCompactStart>(&params).await.map(drop)
    }

    /// `thread/archive`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn archive(&self) -> Result<(), ClientError> {
        self.client.thread_archive(&self.id).await
    }
}

impl Client {
    /// `thread/start`, returning the thread's handle.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_start(&self, params: ThreadStartParams) -> Result<ThreadHandle, ClientError> {
        let response = self.request::<request::ThreadStart>(params).await?;
        let result = reencode(&response).map_err(|e| decode_error("thread/start", &["result"], e.to_string()));
        self.thread_handle("thread/start", result)
    }

    /// `thread/resume` of the thread `id` (a stored thread, or a running one: the client then
    /// gets its events again).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_resume(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        let result = self.request_sent::<request::ThreadResume>(&ThreadResumeParams::new(id.to_owned())).await;
        self.thread_handle("thread/resume", result)
    }

    /// `thread/resume` with typed params (`ThreadResumeParams { model: Some(..),
    /// ..ThreadResumeParams::new(id) }`).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_resume_with(&self, params: ThreadResumeParams) -> Result<ThreadHandle, ClientError> {
        let result = self.request_sent::<request::ThreadResume>(&params).await;
        self.thread_handle("thread/resume", result)
    }

    /// `thread/fork` of the thread `id`: a new thread with its history.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_fork(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        self.thread_fork_with(ThreadForkParams::new(id.to_owned())).await
    }

    /// `thread/fork` with typed params: where to fork (`last_turn_id`), whether the fork is
    /// ephemeral, its model and sandbox...
    /// (`ThreadForkParams { ephemeral: Some(true), ..ThreadForkParams::new(id) }`).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_fork_with(&self, params: ThreadForkParams) -> Result<ThreadHandle, ClientError> {
        let result = self.request_sent::<request::ThreadFork>(&params).await;
        self.thread_handle("thread/fork", result)
    }

    /// `thread/list`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_list(&self, params: ThreadListParams) -> Result<ThreadListResponse, ClientError> {
        self.request::<request::ThreadList>(params).await
    }

    /// `thread/archive` of the thread `id`.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_archive(&self, id: &str) -> Result<(), ClientError> {
        self.request_sent::<request::ThreadArchive>(&ThreadArchiveParams::new(id.to_owned())).await.map(drop)
    }

    /// `thread/unarchive` of the thread `id`, returning its handle.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn thread_unarchive(&self, id: &str) -> Result<ThreadHandle, ClientError> {
        let result = self.request_sent::<request::ThreadUnarchive>(&ThreadUnarchiveParams::new(id.to_owned())).await;
        self.thread_handle("thread/unarchive", result)
    }

    /// The handle of the thread in a result's `thread` member: an answer without a thread
    /// id is [`ClientError::UnusableAnswer`], a thread that does not decode a decode error.
    fn thread_handle(&self, method: &str, result: Result<Value, ClientError>) -> Result<ThreadHandle, ClientError> {
        let result = result?;
        let id = result["thread"]["id"].as_str().map(str::to_owned).ok_or_else(|| ClientError::UnusableAnswer {
            method: method.to_owned(),
            why: "the answer has no thread id (`result.thread.id`)".into(),
        })?;
        let thread = decode::<Thread>(method, &["result", "thread"], result["thread"].clone())?;
        Ok(ThreadHandle { client: self.clone(), thread, id })
    }
}

/// A notification as its wire JSON.
fn wire_json(notification: &ServerNotification) -> Result<Value, ClientError> {
    reencode(notification).map_err(|e| decode_error(notification.method(), &["params"], e.to_string()))
}

/// Decodes `value` (at `path` of a `method` message) into the release's type.
fn decode<T: serde::de::DeserializeOwned>(method: &str, path: &[&str], value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| decode_error(method, path, e.to_string()))
}

/// `path`: the members from the message to the value.
fn decode_error(method: &str, path: &[&str], message: String) -> ClientError {
    let path = path.iter().map(|key| Step::Key(key)).collect();
    ClientError::Decode(DecodeReport::decoded(Some(method), Some(path), message))
}
