//! What a server line means ([`Connection::line`]): an answer to a pending request or to
//! the connection's own, a notification, a server request (answered on a task of the
//! handler set), or a line that does not decode; and the notification streams its events go
//! to ([`Streams`]).

use std::sync::Arc;

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::{
    ClientResponse, Message, RawJson, RequestId, ServerNotification, ServerRequest, TypedServerMessage,
};
use futures_util::FutureExt;

use super::state::{State, Step};
use super::{Answer, Connection, ConnectionStats, TurnRoute};
use crate::error::ClientError;
use crate::events::{Abandoned, Event, EventQueue, LateAnswer, Orphan};
use crate::handler::panic_message;
use crate::reconnect::{Internal, Refusal};
use crate::tap::{Direction, Tap};
use crate::wire;

/// The methods whose answer subscribes the connection to a thread (`result.thread.id`).
const SUBSCRIBING: [&str; 4] = ["thread/start", "thread/resume", "thread/fork", "thread/unarchive"];

/// The [`Notifications`](crate::Notifications) streams, and the events of the batch of lines
/// being read, delivered to them at its end.
pub(super) struct Streams {
    subscribers: Vec<Arc<EventQueue>>,
    outbox: Vec<Event>,
}

impl Streams {
    pub(super) fn new(subscribers: Vec<Arc<EventQueue>>) -> Self {
        Streams { subscribers, outbox: Vec::new() }
    }

    pub(super) fn subscribe(&mut self, queue: Arc<EventQueue>) {
        self.subscribers.push(queue);
    }

    /// Queues an event for every stream; they get the events of a batch together at its end.
    pub(super) fn publish(&mut self, event: Event) {
        if !self.subscribers.is_empty() {
            self.outbox.push(event);
        }
    }

    /// Forgets the streams that were dropped: a queue only this list holds.
    fn retain_read(&mut self) {
        self.subscribers.retain(|queue| Arc::strong_count(queue) > 1);
    }

    /// Delivers the queued events to every stream still read (one lock and one wake-up per
    /// stream and batch).
    fn deliver(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        self.retain_read();
        if let Some((last, others)) = self.subscribers.split_last() {
            for queue in others {
                queue.push_all(self.outbox.iter().cloned());
            }
            last.push_all(self.outbox.drain(..));
        }
        self.outbox.clear();
    }

    /// The connection ended: every stream ends after what it holds.
    pub(super) fn close(&mut self) {
        self.deliver();
        for queue in self.subscribers.drain(..) {
            queue.close();
        }
    }
}

impl Connection {
    /// The lines of one read, then their events delivered.
    pub(super) fn read_batch(&mut self) {
        let mut batch = std::mem::take(&mut self.batch);
        for line in batch.drain(..) {
            self.line_number += 1;
            self.line(line);
        }
        self.batch = batch;
        self.deliver();
    }

    pub(super) fn deliver(&mut self) {
        self.streams.deliver();
    }

    pub(super) fn stats(&mut self) -> ConnectionStats {
        self.streams.retain_read();
        let router = self.router.stats();
        ConnectionStats {
            pending_requests: self.requests.pending.len(),
            remembered_abandoned: self.requests.abandoned.len(),
            routed_turns: router.routed,
            turn_starts: router.starting,
            early_events: router.early,
            streams: self.streams.subscribers.len(),
            queued_events: self.streams.subscribers.iter().map(|q| q.queued()).sum(),
            queued_turn_events: router.queued,
            queued_lines: self.state.link_mut().map_or(0, |l| l.outgoing.len()),
            server_requests: self.handlers.len(),
            internal_requests: self.requests.internal.len(),
            subscribed_threads: self.threads.len(),
            tap_dropped: self.tap.as_ref().map_or(0, Tap::dropped),
        }
    }

    /// A method this crate does not know (a server newer than the crate): said once per method
    /// through `tracing`, the first few hundred; the message itself goes on as `Unrecognized`.
    fn unknown_method(&mut self, method: &str) {
        if self.unknown_methods.len() < 256 && self.unknown_methods.insert(method.to_owned()) {
            tracing::info!(
                method,
                crate_release = codex_app_protocol::CODEX_VERSION,
                "the server sent `{method}`, which this crate (codex {} and older) does not know; passed on as unrecognized",
                codex_app_protocol::CODEX_VERSION
            );
        }
    }

    /// One server line.
    fn line(&mut self, line: String) {
        if let Some(tap) = &self.tap {
            tap.record(Direction::S2c, &line);
        }
        let pending = &self.requests.pending;
        let decoded = wire::decode_server_line(&line, self.line_number, |id| pending.get(id).and_then(|p| p.typed));
        if let (Some(_), Ok(message)) = (&self.reconnect, &decoded) {
            self.follow_subscriptions(message);
        }
        match decoded {
            Ok(Message::Notification(notification)) => {
                if let ServerNotification::Unrecognized { method, .. } = &notification {
                    self.unknown_method(method);
                }
                let notification = Arc::new(notification);
                self.router.notification(&notification);
                self.streams.publish(Event::Notification(notification));
            }
            Ok(Message::Request(request)) => self.server_request(request),
            Ok(Message::Response(response)) if self.requests.internal.contains_key(&response.id) => {
                match self.requests.internal.remove(&response.id) {
                    Some(Internal::Resume(thread)) => self.resumed(thread, raw_result(response.result)),
                    Some(Internal::Initialize) => self.initialize_answered(Ok(raw_result(response.result))),
                    None => {}
                }
            }
            Ok(Message::Response(response)) => match self.requests.pending.remove(&response.id) {
                Some(pending) => {
                    // A `turn/start`: the turn's queue, with what came for it before.
                    let mut started = None;
                    if let Some(thread) = &pending.turn_thread {
                        let turn = match &response.result {
                            ClientResponse::TurnStart(answer) => wire::turn_id(&answer.turn),
                            _ => None,
                        };
                        match turn {
                            Some(turn) => started = Some((self.router.started(thread, &turn), thread.clone(), turn)),
                            None => self.router.not_started(thread),
                        }
                    }
                    let turn = started.as_ref().map(|(queue, thread, turn)| TurnRoute {
                        queue: queue.clone(),
                        thread: thread.clone(),
                        turn: turn.clone(),
                        commands: self.own_commands.clone(),
                        released: false,
                    });
                    let answer = Answer { result: response.result, turn };
                    if let Err(Ok(answer)) = pending.reply.send(Ok(answer)) {
                        // The caller stopped waiting just now (its `Abandon` is on its way).
                        if let Some((_, thread, turn)) = &started {
                            self.router.forget(thread, turn);
                        }
                        let late = LateAnswer { method: pending.method, abandoned: Abandoned::Dropped };
                        let answer = Ok(raw_result(answer.result));
                        self.orphan(Orphan {
                            id: Some(response.id),
                            line_number: self.line_number,
                            answer,
                            late: Some(late),
                        });
                    }
                }
                None => {
                    let late = self.requests.abandoned.remove(&response.id);
                    let answer = Ok(raw_result(response.result));
                    self.orphan(Orphan { id: Some(response.id), line_number: self.line_number, answer, late });
                }
            },
            Ok(Message::Error(error))
                if error.id.as_ref().is_some_and(|id| self.requests.internal.contains_key(id)) =>
            {
                let internal = error.id.as_ref().and_then(|id| self.requests.internal.remove(id));
                tracing::warn!(
                    method = internal.as_ref().map(Internal::method),
                    code = error.error.code,
                    message = error.error.message,
                    "refused after reconnecting"
                );
                match internal {
                    Some(Internal::Initialize) => self.initialize_answered(Err(error.error)),
                    Some(Internal::Resume(thread)) => self.resume_refused(thread, error.error.message),
                    None => {}
                }
            }
            Ok(Message::Error(error)) => match error.id.as_ref().and_then(|id| self.requests.pending.remove(id)) {
                Some(pending) => {
                    if let Some(thread) = &pending.turn_thread {
                        self.router.not_started(thread);
                    }
                    let _ = pending.reply.send(Err(ClientError::from_server(error.error)));
                }
                None => {
                    let late = error.id.as_ref().and_then(|id| self.requests.abandoned.remove(id));
                    self.orphan(Orphan { id: error.id, line_number: self.line_number, answer: Err(error.error), late });
                }
            },
            Err(undecodable) => self.undecodable(&line, *undecodable),
        }
    }

    /// The answer to a handshake's `initialize`: kept by the handshake, which goes on once
    /// the lines of the read are handled.
    fn initialize_answered(&mut self, answer: Result<RawJson, ErrorObject>) {
        match &mut self.state {
            State::Handshaking { step: Step::Initialize(slot @ None), .. } => *slot = Some(answer),
            _ => tracing::warn!("an answer to `initialize` that no handshake waits for; left out"),
        }
    }

    /// What a connection that reconnects keeps of each message it reads (see
    /// [`crate::reconnect`]): the threads an answer subscribed it to, the resume of a thread
    /// that the last reconnect could not resume once a turn of it starts, and the
    /// notifications that change a subscription.
    fn follow_subscriptions(&mut self, message: &TypedServerMessage) {
        match message {
            Message::Notification(notification) => self.subscription_event(notification),
            Message::Response(response) => {
                let Some(pending) = self.requests.pending.get(&response.id) else { return };
                if SUBSCRIBING.contains(&pending.method.as_str()) {
                    if let Some((thread, turns)) = wire::result_thread(&response.result) {
                        self.status.attach(&thread);
                        self.threads.subscribed(thread, turns);
                    }
                }
                let started = match &response.result {
                    ClientResponse::TurnStart(answer) => wire::turn_id(&answer.turn).is_some(),
                    _ => false,
                };
                if let Some(thread) = started.then(|| pending.turn_thread.clone()).flatten() {
                    if self.threads.turn_started(&thread) {
                        // Not resumed after the last reconnect (it had no turns): now it can be.
                        self.resume(thread);
                    }
                }
            }
            _ => {}
        }
    }

    /// A notification that changes a subscription: `thread/closed` ends it; the thread of a
    /// refused resume that waits for its turn to end is resumed when it is inactive.
    fn subscription_event(&mut self, notification: &ServerNotification) {
        let Some(thread) = notification.thread_id() else { return };
        if notification.method() == "thread/closed" {
            self.threads.closed(thread);
        } else if notification.method() == "thread/status/changed"
            && self.threads.waits_for_inactive(thread)
            && !wire::thread_active(notification)
            && self.threads.inactive(thread)
        {
            self.resume(thread.to_owned());
        }
    }

    /// Sends `thread/resume` of `thread` as the connection's own request.
    fn resume(&mut self, thread: String) {
        let id = self.requests.next_resume_id();
        self.send(resume_line(&id, &thread));
        self.requests.internal.insert(id, Internal::Resume(thread));
    }

    /// The server resumed `thread`: its turns are reconciled with the answer.
    fn resumed(&mut self, thread: String, result: RawJson) {
        let result = result.to_value().unwrap_or_default();
        let turns = result.pointer("/thread/turns").cloned().unwrap_or_default();
        tracing::debug!(thread, "resumed");
        self.router.reconcile(&thread, &turns);
        let listed = turns.as_array().is_some_and(|t| !t.is_empty());
        self.threads.subscribed(thread, listed);
    }

    /// The server refused to resume `thread` (see [`crate::reconnect`]).
    fn resume_refused(&mut self, thread: String, message: String) {
        match self.threads.refused(&thread, self.router.has_turns(&thread)) {
            Refusal::Unresumed => {
                tracing::info!(
                    thread,
                    message,
                    "the server cannot resume a thread without turns; it is resumed after its next turn starts"
                );
            }
            Refusal::Retry => {
                tracing::info!(
                    thread,
                    message,
                    "the server cannot resume the thread while its first turn runs; resumed when it ends"
                );
            }
            Refusal::Detached => {
                tracing::warn!(thread, message, "the server did not resume the thread: it is detached");
                self.status.detach(&thread, &message);
                self.router.detach(
                    &thread,
                    ClientError::ThreadDetached { thread_id: thread.clone(), message: message.clone() },
                );
                self.streams.publish(Event::ThreadDetached { thread_id: thread, message });
            }
        }
    }

    fn undecodable(&mut self, line: &str, undecodable: wire::Undecodable) {
        let wire::Undecodable { report, response } = undecodable;
        tracing::warn!(
            line_number = report.line_number,
            method = report.method.as_deref(),
            path = report.path.as_ref().map(tracing::field::display),
            error = %report.message,
            "a server line did not decode"
        );
        // A response whose result does not fit the type of its request fails that request.
        if let Some(pending) = response.as_ref().and_then(|id| self.requests.pending.remove(id)) {
            if let Some(thread) = &pending.turn_thread {
                self.router.not_started(thread);
            }
            let _ = pending.reply.send(Err(ClientError::Decode(report)));
            return;
        }
        if response.is_none() {
            if let Some(id) = wire::undecodable_request(line) {
                let message = match &id {
                    Some(_) => format!("the client cannot decode this request: {}", report.message),
                    None => format!("the request's id is not a valid id: {}", report.message),
                };
                let code = if id.is_some() { ErrorObject::INVALID_PARAMS } else { ErrorObject::INVALID_REQUEST };
                self.send(wire::error_line(id, ErrorObject::new(code, message)));
            }
        }
        let report = Arc::new(report);
        self.router.undecodable(line, &report);
        self.streams.publish(Event::Undecodable(report));
    }

    /// Answers a server request on a task of the handler set; a panic becomes an internal
    /// error. While the client shuts down, new requests are refused at once.
    fn server_request(&mut self, request: ServerRequest) {
        let id = request.id().clone();
        let method = request.method().to_owned();
        if matches!(request, ServerRequest::Unrecognized { .. }) {
            self.unknown_method(&method);
        }
        if self.state.is_closing() {
            let error = ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                format!("the client is shutting down and does not answer `{method}`"),
            );
            self.send(wire::error_line(Some(id), error));
            return;
        }
        let handler = self.handler.clone();
        let session = self.negotiation.current.get();
        let policy = self.negotiation.unknown;
        self.handlers.spawn(async move {
            let outcome = std::panic::AssertUnwindSafe(handler.dispatch(request)).catch_unwind().await;
            match outcome {
                Ok(Ok(result)) => match session {
                    Some(session) => match session.server.check_answer(&method, result, policy) {
                        Ok(result) => wire::response_line(id, &result),
                        Err(why) => wire::error_line(Some(id), ErrorObject::new(ErrorObject::INTERNAL_ERROR, why)),
                    },
                    None => wire::response_line(id, &result),
                },
                Ok(Err(error)) => wire::error_line(Some(id), error),
                Err(panic) => {
                    let why = panic_message(&*panic);
                    tracing::error!(method, panic = %why, "the request handler panicked");
                    let error = ErrorObject::new(
                        ErrorObject::INTERNAL_ERROR,
                        format!("the client's handler for `{method}` failed: {why}"),
                    );
                    wire::error_line(Some(id), error)
                }
            }
        });
    }

    fn orphan(&mut self, orphan: Orphan) {
        match &orphan.late {
            Some(late) => tracing::warn!(
                id = ?orphan.id,
                line_number = orphan.line_number,
                method = late.method,
                abandoned = ?late.abandoned,
                error = orphan.is_error(),
                "a late answer: the client had stopped waiting for this request"
            ),
            None => tracing::warn!(
                id = ?orphan.id,
                line_number = orphan.line_number,
                error = orphan.is_error(),
                "a response with an id the client is not waiting for"
            ),
        }
        self.streams.publish(Event::Orphan(Arc::new(orphan)));
    }
}

/// `thread/resume` of `thread` with id `id`.
pub(super) fn resume_line(id: &RequestId, thread: &str) -> String {
    let params =
        serde_json::value::to_raw_value(&serde_json::json!({"threadId": thread})).expect("a Value always encodes");
    wire::request_line(id, "thread/resume", &params)
}

/// A result the connection did not type (no pending request named its method) as JSON.
fn raw_result(result: ClientResponse) -> RawJson {
    match result {
        ClientResponse::Unrecognized(raw) => raw,
        typed => match serde_json::value::to_raw_value(&typed) {
            Ok(raw) => RawJson::from(raw),
            Err(e) => RawJson::from(&serde_json::Value::String(format!("(the result did not encode: {e})"))),
        },
    }
}
