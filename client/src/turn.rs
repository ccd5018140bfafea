//! [`TurnHandle`]: one turn's notifications, interrupt and steer.

use std::pin::Pin;
use std::task::{Context, Poll};

use codex_app_protocol::path::JsonPath;
use codex_app_protocol::*;

use crate::client::Client;
use crate::connection::TurnRoute;
use crate::error::{ClientError, DecodeReport, TurnDeadline};
use crate::events::{Event, Next, Retrying};
use crate::thread::{AtDeadline, RunOptions, RunResult};
use crate::wire;

/// How long a deadline's `turn/interrupt` is waited for.
const INTERRUPT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A turn started with [`Client::start_turn`].
///
/// Its stream ([`next`](Self::next)) carries only the notifications whose `threadId` and
/// `turnId` (or `turn.id`) are this turn's, so concurrent turns on one connection never mix;
/// every notification also goes to [`Client::notifications`]. The stream is bounded (see the
/// lag policy in [`crate::events`]).
///
/// **After `turn/completed`.** The server can send a turn's last
/// `item/commandExecution/outputDelta` and the command's `item/completed` after
/// `turn/completed` (a command that outlived its `yield_time_ms`). The handle keeps
/// delivering the turn's notifications after `turn/completed` until every item that started
/// in the turn has completed, or until the late grace period has passed (5 s by default,
/// [`crate::ClientBuilder::late_grace`]); then the stream ends (the connection decides it, so
/// the end comes whether or not the handle is being read). So a loop over
/// [`next`](Self::next) sees the late output and ends by itself, and [`wait`](Self::wait)
/// returns as soon as `turn/completed` arrives. Anything for the turn after the stream ended
/// goes only to the global stream.
///
/// **Nothing hangs.** The stream ends, and [`wait`](Self::wait) returns an error that says
/// why, when the turn's `turn/completed` arrives but does not decode
/// ([`ClientError::Decode`]; the thread and turn are read from the raw line, and the line is
/// also on the stream as [`Event::Undecodable`]), when the turn's thread is closed
/// ([`ClientError::ThreadClosed`]) and when the connection ends (its
/// [`ClientError::ServerExited`] or [`ClientError::Closed`]); `wait` also returns
/// [`ClientError::TurnFailed`] when the server reports the turn failed. Other lines that name
/// the turn and do not decode are on its stream as [`Event::Undecodable`].
#[derive(Debug)]
pub struct TurnHandle {
    client: Client,
    thread_id: String,
    turn_id: String,
    response: TurnStartResponse,
    /// The turn's queue and its place in the router (released when the handle is dropped).
    route: TurnRoute,
    completed: Option<Turn>,
    span: tracing::Span,
    ended: bool,
    /// What codex last reported while retrying, until the turn goes on.
    waiting_for: Option<Retrying>,
    /// The method of the last notification read.
    last_event: Option<String>,
}

impl TurnHandle {
    pub(crate) fn new(
        client: Client,
        thread_id: String,
        turn_id: String,
        response: TurnStartResponse,
        route: TurnRoute,
    ) -> Self {
        let span = tracing::info_span!("turn", thread = %thread_id, turn = %turn_id);
        TurnHandle {
            client,
            thread_id,
            turn_id,
            response,
            route,
            completed: None,
            span,
            ended: false,
            waiting_for: None,
            last_event: None,
        }
    }

    /// The thread of the turn.
    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// The turn's id.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The `turn/start` response.
    pub fn start_response(&self) -> &TurnStartResponse {
        &self.response
    }

    /// The turn as `turn/completed` reported it, once it has been read from the stream.
    pub fn completed(&self) -> Option<&Turn> {
        self.completed.as_ref()
    }

    /// What the turn waits for, as codex last reported it while retrying (the model provider
    /// cannot be reached, say): the last [`Retrying`] read from the stream, until another
    /// event of the turn is read. `None` while the turn goes on (or before anything was read).
    pub fn waiting_for(&self) -> Option<&Retrying> {
        self.waiting_for.as_ref()
    }

    /// The method of the last notification read from the stream.
    pub fn last_event(&self) -> Option<&str> {
        self.last_event.as_deref()
    }

    /// Reads the turn to its end, as [`ThreadHandle::run`](crate::ThreadHandle::run) does,
    /// with `options`: a deadline, what happens when it passes, a callback for each event.
    /// For a turn started with typed params:
    /// `thread.turn_with(params).await?.run(RunOptions::new().deadline(d)).await`.
    ///
    /// Cancel safe in the sense of [`ThreadHandle::run`](crate::ThreadHandle::run).
    pub async fn run(self, options: RunOptions) -> Result<RunResult, ClientError> {
        crate::thread::run_turn(self, options).await
    }

    /// The error of a deadline that passed while the turn ran, after doing what `at` says.
    pub(crate) async fn deadline_passed(&self, deadline: std::time::Duration, at: AtDeadline) -> ClientError {
        let (mut interrupted, mut interrupt_error) = (false, None);
        if at == AtDeadline::Interrupt {
            match tokio::time::timeout(INTERRUPT_WAIT, self.interrupt()).await {
                Ok(Ok(_)) => interrupted = true,
                Ok(Err(e)) => interrupt_error = Some(e.to_string()),
                Err(_) => interrupt_error = Some(format!("no answer to `turn/interrupt` within {INTERRUPT_WAIT:?}")),
            }
        }
        let error = TurnDeadline {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn_id.clone(),
            deadline,
            retrying: self.waiting_for.clone(),
            last_event: self.last_event.clone(),
            at_deadline: at,
            interrupted,
            interrupt_error,
        };
        tracing::warn!(thread = %self.thread_id, turn = %self.turn_id, "{error}");
        ClientError::TurnDeadline(Box::new(error))
    }

    /// The next event of this turn: a notification, [`Event::Undecodable`] for a line that
    /// names the turn and did not decode, or [`Event::Lagged`]; `None` when the stream has
    /// ended (see the type docs). (`TurnHandle` is also a [`futures_util::Stream`] of the
    /// same events.)
    ///
    /// Cancel safe: an event is taken from the stream only when `next` returns it.
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let _entered = self.span.enter();
        match self.route.queue.poll_next(Some(cx.waker())) {
            Next::Event(event) => {
                match &event {
                    Event::Notification(n) => {
                        if let ServerNotification::TurnCompleted { params, .. } = &**n {
                            self.completed = Some(params.turn.clone());
                        }
                        // A retry is what the turn waits for until any other event of it comes.
                        self.waiting_for = wire::retrying(n);
                        self.last_event = Some(n.method().to_owned());
                    }
                    Event::Undecodable(report) => {
                        tracing::warn!(
                            line_number = report.line_number,
                            method = report.method.as_deref(),
                            "a line of the turn did not decode"
                        );
                    }
                    _ => {}
                }
                Poll::Ready(Some(event))
            }
            Next::End => {
                self.ended = true;
                self.route.release();
                Poll::Ready(None)
            }
            Next::Wait => Poll::Pending,
        }
    }

    /// Reads the stream until `turn/completed` and returns the completed turn, or the error
    /// that ended the turn (see the type docs): [`ClientError::TurnFailed`] when the server
    /// reports the turn failed. Late notifications stay readable with [`next`](Self::next).
    ///
    /// **Lag.** The completion is never lost: when the stream fell behind and dropped
    /// `turn/completed`, `wait` returns it as soon as it has come, and what the stream still
    /// holds (after [`Event::Lagged`]) stays readable with [`next`](Self::next).
    ///
    /// Cancel safe: the events it read before it was dropped are consumed, nothing else is
    /// lost (`turn/completed` is kept by the handle); call it again.
    pub async fn wait(&mut self) -> Result<Turn, ClientError> {
        while self.completed.is_none() && !self.route.queue.completion_dropped() {
            if self.next().await.is_none() {
                break;
            }
        }
        let completion = self.route.queue.completion();
        let dropped = completion.as_deref().and_then(|n| match n {
            ServerNotification::TurnCompleted { params, .. } => Some(params.turn.clone()),
            _ => None,
        });
        let turn = match self.completed.clone().or(dropped) {
            Some(turn) => turn,
            None => return Err(self.end_error()),
        };
        match wire::turn_failure(&self.thread_id, &turn) {
            Some(failure) => Err(ClientError::TurnFailed(Box::new(failure))),
            None => Ok(turn),
        }
    }

    /// Why the stream ended without a `turn/completed` read from it.
    fn end_error(&self) -> ClientError {
        if let Some(error) = self.route.queue.failure() {
            return error;
        }
        self.client.closed().unwrap_or(ClientError::Closed)
    }

    /// Whether the stream has ended (see the type docs).
    pub fn is_finished(&self) -> bool {
        self.route.queue.finished()
    }

    /// How many `item/completed` notifications of the turn its stream dropped (it fell
    /// behind by more than [`turn_buffer`](crate::ClientBuilder::turn_buffer)).
    pub fn lost_items(&self) -> u64 {
        self.route.queue.lost_items()
    }

    /// `turn/interrupt` for this turn.
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn interrupt(&self) -> Result<TurnInterruptResponse, ClientError> {
        let params = TurnInterruptParams::new(self.thread_id.clone(), self.turn_id.clone());
        self.client.request::<request::TurnInterrupt>(params).await
    }

    /// `turn/steer`: adds `input` to this turn while it runs. Returns the id of the turn that
    /// took the input (`turnId` of the response).
    ///
    /// Cancel safe: dropping the future forgets the request (its answer, when it comes, is an
    /// [`Event::Orphan`]); the connection holds nothing for it and goes
    /// on.
    pub async fn steer(&self, input: Vec<UserInput>) -> Result<String, ClientError> {
        let params = TurnSteerParams::new(self.turn_id.clone(), input, self.thread_id.clone());
        let result = self.client.request_sent::<request::TurnSteer>(&params).await?;
        result.get("turnId").and_then(|t| t.as_str()).map(str::to_owned).ok_or_else(|| {
            let message = format!("the result of `turn/steer` has no `turnId`: {result}");
            let path = JsonPath::root().key("result").key("turnId");
            ClientError::Decode(DecodeReport::decoded(Some("turn/steer"), Some(path), message))
        })
    }

    /// The client this turn runs on.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

impl futures_util::Stream for TurnHandle {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().poll_event(cx)
    }
}
