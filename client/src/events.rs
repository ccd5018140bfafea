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

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use codex_app_protocol::jsonrpc::ErrorResponse;
use codex_app_protocol::ServerNotification;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::error::DecodeReport;
use crate::wire::Lifecycle;

/// One item of a notification stream.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A notification from the server.
    Notification(Arc<ServerNotification>),
    /// A server line that did not decode. The client goes on with the next line; a request
    /// of the server that did not decode was answered with an error.
    Undecodable(Arc<DecodeReport>),
    /// An error response that answers no pending request (no id, or an unknown one).
    OrphanError(Arc<ErrorResponse>),
    /// This reader fell behind and this many notifications were dropped (oldest first).
    Lagged(u64),
}

impl Event {
    /// The notification, if this is one.
    pub fn notification(&self) -> Option<&ServerNotification> {
        match self {
            Event::Notification(n) => Some(n),
            _ => None,
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
    /// read.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.taken.pop_front() {
                return Some(event);
            }
            let queue = self.queue.clone()?;
            // Made before looking, so a push between the look and the wait is not missed.
            let notified = queue.notify.notified();
            match self.take(&queue) {
                Take::Event(event) => return Some(event),
                Take::Taken => continue,
                Take::Closed => {
                    self.queue = None;
                    return None;
                }
                Take::Empty => notified.await,
            }
        }
    }

    /// The next event if one is ready, without waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        if let Some(event) = self.taken.pop_front() {
            return Some(event);
        }
        let queue = self.queue.clone()?;
        match self.take(&queue) {
            Take::Event(event) => Some(event),
            Take::Taken => self.taken.pop_front(),
            Take::Closed | Take::Empty => None,
        }
    }

    /// Takes what is queued (`self.taken` is empty).
    fn take(&mut self, queue: &EventQueue) -> Take {
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
            (true, false) => Take::Empty,
        }
    }
}

enum Take {
    Event(Event),
    Taken,
    Closed,
    Empty,
}

/// Appends `item`, first dropping the oldest item (and counting it) when `items` is full.
fn push_bounded<T>(items: &mut VecDeque<T>, dropped: &mut u64, capacity: usize, item: T) {
    if items.len() >= capacity {
        items.pop_front();
        *dropped += 1;
    }
    items.push_back(item);
}

/// The bounded queue of one [`Notifications`] stream, filled by the connection task.
#[derive(Debug)]
pub(crate) struct EventQueue {
    state: Mutex<EventState>,
    notify: Notify,
    capacity: usize,
}

#[derive(Debug, Default)]
struct EventState {
    items: VecDeque<Event>,
    dropped: u64,
    closed: bool,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        EventQueue { state: Mutex::default(), notify: Notify::new(), capacity: capacity.max(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, EventState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues the events of one batch of lines, dropping the oldest ones when the queue is
    /// full, and wakes the reader once.
    pub(crate) fn push_all(&self, events: impl Iterator<Item = Event>) {
        {
            let mut guard = self.lock();
            let state = &mut *guard;
            for event in events {
                push_bounded(&mut state.items, &mut state.dropped, self.capacity, event);
            }
        }
        self.notify.notify_one();
    }

    /// The connection closed: the reader gets what is queued, then the end.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_one();
    }
}

/// The bounded queue of one turn's notifications, filled by the connection task.
#[derive(Debug)]
pub(crate) struct TurnQueue {
    state: Mutex<TurnState>,
    notify: Notify,
    capacity: usize,
    late_grace: Duration,
}

#[derive(Debug, Default)]
struct TurnState {
    items: VecDeque<Arc<ServerNotification>>,
    dropped: u64,
    /// Items started and not yet completed.
    open_items: HashSet<String>,
    /// When `turn/completed` arrived.
    completed_at: Option<Instant>,
    /// The connection closed.
    closed: bool,
}

/// What the turn's reader gets next.
pub(crate) enum Next {
    Event(Event),
    Wait(Option<Instant>),
    End,
}

impl TurnQueue {
    pub(crate) fn new(capacity: usize, late_grace: Duration) -> Self {
        TurnQueue { state: Mutex::new(TurnState::default()), notify: Notify::new(), capacity: capacity.max(1), late_grace }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a notification of the turn (`item`: its `params.item.id`).
    pub(crate) fn push(&self, notification: Arc<ServerNotification>, lifecycle: Lifecycle, item: Option<&str>) {
        let mut guard = self.lock();
        let state = &mut *guard;
        match (lifecycle, item) {
            (Lifecycle::ItemStarted, Some(id)) => {
                state.open_items.insert(id.to_owned());
            }
            (Lifecycle::ItemCompleted, Some(id)) => {
                state.open_items.remove(id);
            }
            (Lifecycle::TurnCompleted, _) => state.completed_at = Some(Instant::now()),
            _ => {}
        }
        push_bounded(&mut state.items, &mut state.dropped, self.capacity, notification);
        drop(guard);
        self.notify.notify_one();
    }

    /// The connection closed: the reader gets what is queued, then the end.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.notify.notify_one();
    }

    /// Whether the turn is over for routing purposes (see [`crate::TurnHandle`]).
    pub(crate) fn finished(&self) -> bool {
        let state = self.lock();
        self.ended(&state)
    }

    fn ended(&self, state: &TurnState) -> bool {
        match state.completed_at {
            _ if state.closed => true,
            Some(at) => state.open_items.is_empty() || at.elapsed() >= self.late_grace,
            None => false,
        }
    }

    pub(crate) fn poll_next(&self) -> Next {
        let mut state = self.lock();
        if state.dropped > 0 {
            let n = std::mem::take(&mut state.dropped);
            return Next::Event(Event::Lagged(n));
        }
        if let Some(item) = state.items.pop_front() {
            return Next::Event(Event::Notification(item));
        }
        if self.ended(&state) {
            return Next::End;
        }
        Next::Wait(state.completed_at.map(|at| at + self.late_grace))
    }

    pub(crate) async fn next(&self) -> Option<Event> {
        loop {
            match self.poll_next() {
                Next::Event(event) => return Some(event),
                Next::End => return None,
                Next::Wait(None) => self.notify.notified().await,
                Next::Wait(Some(deadline)) => {
                    let _ = tokio::time::timeout_at(deadline, self.notify.notified()).await;
                }
            }
        }
    }
}
