//! The streams a consumer reads: every notification ([`Notifications`]) and one turn's
//! ([`crate::TurnHandle`]), both bounded.
//!
//! # Lag policy
//!
//! The connection task never waits for a consumer: a response to a request is delivered
//! however far behind a notification reader is. Each stream holds a bounded number of
//! notifications (set on [`crate::ClientBuilder`]); when a reader falls further behind, the
//! oldest notifications it has not read are dropped and the next read returns
//! [`Event::Lagged`] with how many were dropped, then goes on with the oldest one kept.
//! Memory therefore stays bounded by the buffer sizes whatever the consumer does (a
//! [`Notifications`] reader also holds the batch it took with its last read: at most as many
//! again).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use codex_app_protocol::jsonrpc::ErrorObject;
use codex_app_protocol::{RawJson, RequestId, ServerNotification};

use crate::error::{ClientError, DecodeReport};

/// The notification of a completed item.
const ITEM_COMPLETED: &str = "item/completed";
/// The notification of a completed turn.
const TURN_COMPLETED: &str = "turn/completed";

/// One item of a notification stream.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A notification from the server.
    Notification(Arc<ServerNotification>),
    /// A server line that did not decode. The client goes on with the next line; a request
    /// of the server that did not decode was answered with an error. A turn's stream also
    /// gets the undecodable notifications that name its thread and turn.
    Undecodable(Arc<DecodeReport>),
    /// A response (a result or an error) that answers no pending request: a late answer to a
    /// request that timed out or whose future was dropped, or an id the client never sent.
    Orphan(Arc<Orphan>),
    /// This reader fell behind and this many events were dropped (oldest first).
    Lagged(u64),
    /// The connection dropped and the client connected again (after this many attempts),
    /// did the handshake and resumed its threads (their events flow again; what the server
    /// sent while no connection was there is not replayed)
    /// ([`ClientBuilder::reconnect`](crate::ClientBuilder::reconnect)).
    Reconnected(u32),
    /// After a reconnect the server refused to resume this thread (`thread/resume` answered
    /// `message`): its open turns ended with
    /// [`ClientError::ThreadDetached`], and new turns on
    /// it fail until it is resumed ([`Client::thread_resume`](crate::Client::thread_resume)).
    /// (A thread without turns that the server cannot resume is not detached: it is resumed
    /// after its next turn starts.)
    ThreadDetached {
        /// The thread.
        thread_id: String,
        /// The server's message.
        message: String,
    },
    /// A reconnect's handshake found another codex release than the connection before (codex
    /// was updated and restarted, say): from now on what the client sends is checked against
    /// the new release ([`Client::version_check`](crate::Client::version_check) has it), and
    /// the version policy was run again. Comes before the [`Reconnected`](Self::Reconnected)
    /// of that reconnect.
    ReleaseChanged(Arc<ReleaseChange>),
}

/// The server's release before and after a reconnect; see [`Event::ReleaseChanged`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReleaseChange {
    /// The release before, as its handshake read it.
    pub previous: crate::VersionCheck,
    /// The release now.
    pub current: crate::VersionCheck,
}

/// A response without a pending request; see [`Event::Orphan`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Orphan {
    /// Its id (`None`: an error response with `"id": null`).
    pub id: Option<RequestId>,
    /// The 1-based number of the server line (counted over the connection).
    pub line_number: u64,
    /// `Ok(result)` for a result, `Err(error)` for an error response.
    pub answer: Result<RawJson, ErrorObject>,
    /// The request it answers, when the client sent one with this id and stopped waiting.
    pub late: Option<LateAnswer>,
}

impl Orphan {
    /// Whether it is an error response.
    pub fn is_error(&self) -> bool {
        self.answer.is_err()
    }
}

/// The request a late answer is for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LateAnswer {
    /// The request's method.
    pub method: String,
    /// Why the client had stopped waiting.
    pub abandoned: Abandoned,
}

/// Why the client stopped waiting for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Abandoned {
    /// The request timed out ([`crate::ClientBuilder::request_timeout`]) after this long.
    TimedOut(std::time::Duration),
    /// The request's future was dropped.
    Dropped,
}

impl Event {
    /// The notification, if this is one.
    pub fn notification(&self) -> Option<&ServerNotification> {
        match self {
            Event::Notification(n) => Some(n),
            _ => None,
        }
    }

    /// What codex reports while it retries, if this event is such a report: an `error`
    /// notification with `willRetry: true` (see [`Retrying`]).
    pub fn retrying(&self) -> Option<Retrying> {
        self.notification().and_then(crate::wire::retrying)
    }
}

/// What codex reports while it retries for a turn: an `error` notification with
/// `willRetry: true`, read from [`Event::retrying`].
///
/// Offline, or when the model provider fails, codex keeps the turn open and tries again,
/// reporting each attempt (codex 0.171.0: "Reconnecting... 2/5", then "Reconnecting...
/// waiting for network"); the turn neither fails nor goes on until the provider answers. The
/// notification is on the turn's stream (and on [`Notifications`]) like any other, each one
/// is logged as a `tracing` warning, [`TurnHandle::waiting_for`](crate::TurnHandle::waiting_for)
/// keeps the last one until the turn goes on, and a
/// [`RunOptions::deadline`](crate::RunOptions::deadline) that passes names it in its error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retrying {
    /// The thread of the turn.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// What codex says (`error.message`), e.g. "Reconnecting... 2/5".
    pub message: String,
    /// `error.additionalDetails`: the error behind the retry, when codex gives it.
    pub details: Option<String>,
    /// `error.codexErrorInfo` as JSON (its type differs between releases), when codex gives it.
    pub error_info: Option<serde_json::Value>,
}

impl std::fmt::Display for Retrying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match &self.details {
            Some(details) => write!(f, " ({details})"),
            None => Ok(()),
        }
    }
}

/// Every notification of the connection, from the moment of [`crate::Client::notifications`]
/// on (see the [module docs](self) for the lag policy). Ends when the connection closes.
///
/// Each stream has its own queue, filled by the connection task; a read takes everything
/// queued at once (so a reader that keeps up costs one lock and at most one wake-up per batch
/// of lines, not per notification) and a notification is freed as soon as every stream has
/// read it.
#[derive(Debug)]
pub struct Notifications {
    queue: Option<Arc<EventQueue>>,
    /// What the last read took from the queue, oldest first.
    taken: VecDeque<Event>,
}

impl Notifications {
    pub(crate) fn new(queue: Option<Arc<EventQueue>>) -> Self {
        Notifications { queue, taken: VecDeque::new() }
    }

    /// The next event, or `None` once the connection has closed and everything before was
    /// read. (`Notifications` is also a [`futures_util::Stream`] of the same events.)
    ///
    /// Cancel safe: an event is taken from the stream only when `next` returns it.
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        loop {
            if let Some(event) = self.taken.pop_front() {
                return Poll::Ready(Some(event));
            }
            let Some(queue) = self.queue.clone() else { return Poll::Ready(None) };
            match self.take(&queue, Some(cx.waker())) {
                Take::Event(event) => return Poll::Ready(Some(event)),
                Take::Taken => continue,
                Take::Closed => {
                    self.queue = None;
                    return Poll::Ready(None);
                }
                Take::Empty => return Poll::Pending,
            }
        }
    }

    /// The next event if one is ready, without waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        if let Some(event) = self.taken.pop_front() {
            return Some(event);
        }
        let queue = self.queue.clone()?;
        match self.take(&queue, None) {
            Take::Event(event) => Some(event),
            Take::Taken => self.taken.pop_front(),
            Take::Closed | Take::Empty => None,
        }
    }

    /// Takes what is queued (`self.taken` is empty); with nothing queued, `waker` is woken
    /// at the next push (registered under the queue's lock, so no push is missed).
    fn take(&mut self, queue: &EventQueue, waker: Option<&Waker>) -> Take {
        let mut state = queue.lock();
        let dropped = std::mem::take(&mut state.dropped);
        if !state.items.is_empty() {
            std::mem::swap(&mut state.items, &mut self.taken);
        }
        if dropped > 0 {
            return Take::Event(Event::Lagged(dropped));
        }
        match (self.taken.is_empty(), state.closed) {
            (false, _) => Take::Taken,
            (true, true) => Take::Closed,
            (true, false) => {
                if let Some(waker) = waker {
                    register(&mut state.waker, waker);
                }
                Take::Empty
            }
        }
    }
}

impl futures_util::Stream for Notifications {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().poll_event(cx)
    }
}

/// Keeps `waker` to be woken (replacing an older one unless it wakes the same task).
fn register(slot: &mut Option<Waker>, waker: &Waker) {
    match slot {
        Some(old) if old.will_wake(waker) => {}
        _ => *slot = Some(waker.clone()),
    }
}

enum Take {
    Event(Event),
    Taken,
    Closed,
    Empty,
}

/// Appends `item`, first dropping the oldest item (and counting it) when `items` is full;
/// returns the dropped item.
fn push_bounded<T>(items: &mut VecDeque<T>, dropped: &mut u64, capacity: usize, item: T) -> Option<T> {
    let mut oldest = None;
    if items.len() >= capacity {
        oldest = items.pop_front();
        *dropped += 1;
        if *dropped == 1 {
            tracing::warn!(
                capacity,
                "a stream's reader fell behind: its oldest events are dropped (it reads `Event::Lagged` next)"
            );
        }
    }
    items.push_back(item);
    oldest
}

/// Which events a stream takes (a stream that waits for one kind of event takes only those,
/// so the events it does not want can never push the one it waits for out of its buffer).
pub(crate) type Filter = Box<dyn Fn(&Event) -> bool + Send + Sync>;

/// The bounded queue of one [`Notifications`] stream, filled by the connection task.
pub(crate) struct EventQueue {
    state: Mutex<EventState>,
    capacity: usize,
    filter: Option<Filter>,
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue").field("capacity", &self.capacity).finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct EventState {
    items: VecDeque<Event>,
    dropped: u64,
    closed: bool,
    /// The reader waiting for the next push.
    waker: Option<Waker>,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        EventQueue { state: Mutex::default(), capacity: capacity.max(1), filter: None }
    }

    /// A queue that takes only the events `filter` accepts.
    pub(crate) fn filtered(capacity: usize, filter: Filter) -> Self {
        EventQueue { state: Mutex::default(), capacity: capacity.max(1), filter: Some(filter) }
    }

    /// How many events wait to be read.
    pub(crate) fn queued(&self) -> usize {
        self.lock().items.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, EventState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues the events of one batch of lines, dropping the oldest ones when the queue is
    /// full, and wakes the reader once.
    pub(crate) fn push_all(&self, events: impl Iterator<Item = Event>) {
        let waker = {
            let mut guard = self.lock();
            let state = &mut *guard;
            let before = state.items.len() + state.dropped as usize;
            for event in events {
                if self.filter.as_ref().is_none_or(|accepts| accepts(&event)) {
                    push_bounded(&mut state.items, &mut state.dropped, self.capacity, event);
                }
            }
            if state.items.len() + state.dropped as usize == before {
                return; // nothing for this stream: its reader is not woken
            }
            state.waker.take()
        };
        wake(waker);
    }

    /// The connection closed: the reader gets what is queued, then the end.
    pub(crate) fn close(&self) {
        let waker = {
            let mut state = self.lock();
            state.closed = true;
            state.waker.take()
        };
        wake(waker);
    }
}

fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// The bounded queue of one turn's notifications, filled by the connection task. When the
/// turn ends is decided by the connection's router alone ([`TurnQueue::end`]); the handle only
/// reads.
#[derive(Debug)]
pub(crate) struct TurnQueue {
    state: Mutex<TurnState>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct TurnState {
    items: VecDeque<Event>,
    dropped: u64,
    /// How the turn ended, once the router decided it did.
    ended: Option<TurnEnd>,
    /// The `turn/completed` notification, kept even when a full stream drops it.
    completion: Option<Arc<ServerNotification>>,
    /// A full stream dropped `turn/completed` (it is in `completion`).
    completion_dropped: bool,
    /// How many `item/completed` notifications a full stream dropped.
    lost_items: u64,
    /// The reader waiting for the next event.
    waker: Option<Waker>,
}

/// How a turn's stream ended.
#[derive(Debug, Clone)]
pub(crate) enum TurnEnd {
    /// After `turn/completed` (and the late output the router waited for).
    Completed,
    /// Without a `turn/completed` that could be read, and why.
    Failed(ClientError),
    /// The connection closed.
    Closed,
}

/// What the turn's reader gets next.
pub(crate) enum Next {
    Event(Event),
    Wait,
    End,
}

impl TurnQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        TurnQueue { state: Mutex::new(TurnState::default()), capacity: capacity.max(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an event of the turn; `completion`: it is the turn's `turn/completed`.
    pub(crate) fn push(&self, event: Event, completion: bool) {
        let waker = {
            let mut guard = self.lock();
            let state = &mut *guard;
            if completion {
                if let Event::Notification(n) = &event {
                    state.completion = Some(n.clone());
                }
            }
            let dropped = push_bounded(&mut state.items, &mut state.dropped, self.capacity, event);
            if let Some(Event::Notification(n)) = dropped {
                match n.method() {
                    ITEM_COMPLETED => state.lost_items += 1,
                    TURN_COMPLETED => state.completion_dropped = true,
                    _ => {}
                }
            }
            state.waker.take()
        };
        wake(waker);
    }

    /// The router decided the turn ended: the reader gets what is queued, then the end (and
    /// [`crate::TurnHandle::wait`] the error of a failed end). The first end counts.
    pub(crate) fn end(&self, end: TurnEnd) {
        let waker = {
            let mut state = self.lock();
            state.ended.get_or_insert(end);
            state.waker.take()
        };
        wake(waker);
    }

    /// Why the turn ended without `turn/completed`, if it did.
    pub(crate) fn failure(&self) -> Option<ClientError> {
        match &self.lock().ended {
            Some(TurnEnd::Failed(error)) => Some(error.clone()),
            _ => None,
        }
    }

    /// The turn's `turn/completed`, once it came (even if the stream dropped it).
    pub(crate) fn completion(&self) -> Option<Arc<ServerNotification>> {
        self.lock().completion.clone()
    }

    /// Whether the turn's `turn/completed` came and its full stream dropped it.
    pub(crate) fn completion_dropped(&self) -> bool {
        self.lock().completion_dropped
    }

    /// How many `item/completed` notifications of the turn its full stream dropped.
    pub(crate) fn lost_items(&self) -> u64 {
        self.lock().lost_items
    }

    /// How many events wait to be read.
    pub(crate) fn queued(&self) -> usize {
        self.lock().items.len()
    }

    /// Whether the stream has ended (see [`crate::TurnHandle`]).
    pub(crate) fn finished(&self) -> bool {
        self.lock().ended.is_some()
    }

    /// The next event, the end, or nothing yet (`waker`, when given, is woken at the next
    /// push or at the end; registered under the queue's lock, so none is missed).
    pub(crate) fn poll_next(&self, waker: Option<&Waker>) -> Next {
        let mut state = self.lock();
        if state.dropped > 0 {
            let n = std::mem::take(&mut state.dropped);
            return Next::Event(Event::Lagged(n));
        }
        if let Some(item) = state.items.pop_front() {
            return Next::Event(item);
        }
        if state.ended.is_some() {
            return Next::End;
        }
        if let Some(waker) = waker {
            register(&mut state.waker, waker);
        }
        Next::Wait
    }
}
