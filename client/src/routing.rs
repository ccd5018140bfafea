//! Turn routing: which [`TurnHandle`](crate::TurnHandle) gets a server line.
//!
//! One type, [`TurnRouter`], owned by the connection task, holds every rule:
//!
//! - a notification goes to the turn its `threadId` and `turnId` (or `turn.id`) name, when a
//!   handle for that turn exists;
//! - the server may send a turn's first notifications before its `turn/start` response (it
//!   starts the turn, then answers): while a `turn/start` is in flight on a thread, what comes
//!   for unknown turns of that thread is kept (at most [`EARLY_MAX`] events) and handed to the
//!   turn's handle when the response names it;
//! - a line that did not decode but names a thread and a turn goes to that turn as
//!   [`Event::Undecodable`]; when it is the turn's `turn/completed`, the turn ends with the
//!   decode error, so no handle waits for a completion that arrived but could not be typed;
//! - `thread/closed` ends the turns of its thread that have not completed;
//! - the end of the connection ends every turn.
//!
//! The router is the one owner of a turn's end: after `turn/completed` it ends the turn's
//! stream once every item that started in the turn has completed, or when the late grace
//! period has passed ([`TurnRouter::next_deadline`], [`TurnRouter::expire`], driven by the
//! connection's loop); it ends a failed turn with its error. The handle only reads.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use codex_app_protocol::ServerNotification;

use crate::error::{ClientError, DecodeReport};
use crate::events::{Event, TurnEnd, TurnQueue};
use crate::wire::{self, Lifecycle};

/// At most this many events of a thread are held before its `turn/start` response.
pub(crate) const EARLY_MAX: usize = 256;

/// The method that ends a turn.
const TURN_COMPLETED: &str = "turn/completed";
/// The method that ends a thread's turns.
const THREAD_CLOSED: &str = "thread/closed";

/// What happens to a turn.
#[derive(Debug, Clone)]
enum TurnEvent {
    /// An event for its stream.
    Event { event: Event, lifecycle: Lifecycle, item: Option<String> },
    /// The turn ends with this error.
    End(ClientError),
}

/// What a [`TurnRouter`] holds.
pub(crate) struct RouterStats {
    pub routed: usize,
    pub starting: usize,
    pub early: usize,
    pub queued: usize,
}

/// A thread with `turn/start` requests in flight.
#[derive(Debug, Default)]
struct Starting {
    in_flight: usize,
    /// (turn id, what came for it), oldest first.
    early: VecDeque<(String, TurnEvent)>,
    /// The thread was detached while the `turn/start` was in flight: the turn ends with this.
    detached: Option<ClientError>,
}

/// A routed turn: its handle's queue and what decides its end.
#[derive(Debug)]
struct Route {
    queue: Arc<TurnQueue>,
    /// Items started and not yet completed.
    open_items: HashSet<String>,
    /// The items that completed (a reconciliation after a reconnect adds only the others).
    completed_items: HashSet<String>,
    /// When `turn/completed` arrived.
    completed_at: Option<Instant>,
    /// A resume's answer reported the turn interrupted without an end (no `completedAt`): its
    /// `turn/completed` as reported, and when. codex reports a turn it accepted but has not
    /// begun so; the turn ends as reported after the late grace period unless an event of it
    /// comes first (see [`TurnRouter::reconcile`]).
    reported_unended: Option<(Instant, serde_json::Value)>,
}

/// Routes server lines to turn handles; see the [module docs](self).
#[derive(Debug)]
pub(crate) struct TurnRouter {
    /// thread id -> turn id -> the turn's route (until its end).
    turns: HashMap<String, HashMap<String, Route>>,
    starting: HashMap<String, Starting>,
    turn_buffer: usize,
    late_grace: Duration,
}

impl TurnRouter {
    pub(crate) fn new(turn_buffer: usize, late_grace: Duration) -> Self {
        TurnRouter { turns: HashMap::new(), starting: HashMap::new(), turn_buffer, late_grace }
    }

    /// A `turn/start` on `thread` was sent.
    pub(crate) fn expect(&mut self, thread: &str) {
        self.starting.entry(thread.to_owned()).or_default().in_flight += 1;
    }

    /// The `turn/start` on `thread` was answered with `turn`: its handle's queue, with what
    /// came for it before.
    pub(crate) fn started(&mut self, thread: &str, turn: &str) -> Arc<TurnQueue> {
        let queue = Arc::new(TurnQueue::new(self.turn_buffer));
        let detached = self.starting.get(thread).and_then(|s| s.detached.clone());
        let early = self.finish_start(thread);
        let route = Route {
            queue: queue.clone(),
            open_items: HashSet::new(),
            completed_items: HashSet::new(),
            completed_at: None,
            reported_unended: None,
        };
        self.turns.entry(thread.to_owned()).or_default().insert(turn.to_owned(), route);
        if let Some(error) = detached {
            self.deliver(thread, turn, TurnEvent::End(error));
        }
        for (_, event) in early.into_iter().filter(|(t, _)| t == turn) {
            self.deliver(thread, turn, event);
        }
        queue
    }

    /// The `turn/start` on `thread` failed or was abandoned.
    pub(crate) fn not_started(&mut self, thread: &str) {
        self.finish_start(thread);
    }

    /// One `turn/start` on `thread` is over; returns the early events (all of them when it
    /// was the last in flight; none otherwise, as they may still be another's).
    fn finish_start(&mut self, thread: &str) -> VecDeque<(String, TurnEvent)> {
        let Some(starting) = self.starting.get_mut(thread) else { return VecDeque::new() };
        starting.in_flight = starting.in_flight.saturating_sub(1);
        if starting.in_flight == 0 {
            return self.starting.remove(thread).map(|s| s.early).unwrap_or_default();
        }
        // Others are in flight: hand out a copy of what is held, keep it for them.
        starting.early.clone()
    }

    /// Routes a notification to its turn (and ends a thread's turns at `thread/closed`).
    pub(crate) fn notification(&mut self, notification: &Arc<ServerNotification>) {
        let key = wire::route_key(notification);
        if notification.method() == THREAD_CLOSED {
            if let Some(thread) = &key.thread {
                self.thread_closed(thread);
            }
            return;
        }
        let (Some(thread), Some(turn)) = (&key.thread, &key.turn) else { return };
        if let Some(retrying) = wire::retrying(notification) {
            tracing::warn!(
                thread = &**thread,
                turn = &**turn,
                details = retrying.details.as_deref(),
                "codex retries and the turn waits: {}",
                retrying.message
            );
        }
        let event = TurnEvent::Event {
            event: Event::Notification(notification.clone()),
            lifecycle: wire::lifecycle(notification),
            item: key.item.as_deref().map(str::to_owned),
        };
        self.deliver(thread, turn, event);
    }

    /// Routes a server line that did not decode to the turn it names, if any; a
    /// `turn/completed` that did not decode ends its turn with the decode error.
    pub(crate) fn undecodable(&mut self, line: &str, report: &Arc<DecodeReport>) {
        let Some(raw) = wire::raw_route(line) else { return };
        if raw.method.as_deref() == Some(THREAD_CLOSED) {
            if let Some(thread) = &raw.key.thread {
                self.thread_closed(thread);
            }
            return;
        }
        let (Some(thread), Some(turn)) = (&raw.key.thread, &raw.key.turn) else { return };
        let event =
            TurnEvent::Event { event: Event::Undecodable(report.clone()), lifecycle: Lifecycle::Other, item: None };
        self.deliver(thread, turn, event);
        if raw.method.as_deref() == Some(TURN_COMPLETED) {
            self.deliver(thread, turn, TurnEvent::End(ClientError::Decode((**report).clone())));
        }
    }

    fn deliver(&mut self, thread: &str, turn: &str, event: TurnEvent) {
        if let Some(route) = self.turns.get_mut(thread).and_then(|turns| turns.get_mut(turn)) {
            if let Some(end) = apply(route, event, self.late_grace) {
                route.queue.end(end);
                self.forget(thread, turn);
            }
            return;
        }
        if let Some(starting) = self.starting.get_mut(thread) {
            if starting.early.len() < EARLY_MAX {
                starting.early.push_back((turn.to_owned(), event));
            } else {
                tracing::warn!(
                    thread,
                    turn,
                    "more than {EARLY_MAX} events before the `turn/start` response: dropped from the turn's stream"
                );
            }
        }
    }

    fn thread_closed(&mut self, thread: &str) {
        self.end_thread(thread, ClientError::ThreadClosed { thread_id: thread.to_owned() });
    }

    /// The server did not resume `thread` after a reconnect: its turns end with `error`,
    /// and so does a turn whose `turn/start` is in flight.
    pub(crate) fn detach(&mut self, thread: &str, error: ClientError) {
        self.end_thread(thread, error.clone());
        if let Some(starting) = self.starting.get_mut(thread) {
            starting.detached = Some(error);
        }
    }

    /// Ends the open turns of `thread` (and those that came before their `turn/start`
    /// response) with `error`.
    fn end_thread(&mut self, thread: &str, error: ClientError) {
        for route in self.turns.remove(thread).into_iter().flat_map(HashMap::into_values) {
            // A turn that completed and waits for its late output is not failed.
            let end = if route.completed_at.is_some() { TurnEnd::Completed } else { TurnEnd::Failed(error.clone()) };
            route.queue.end(end);
        }
        if let Some(starting) = self.starting.get_mut(thread) {
            let turns: Vec<String> = starting.early.iter().map(|(t, _)| t.clone()).collect();
            for turn in turns {
                starting.early.push_back((turn, TurnEvent::End(error.clone())));
            }
        }
    }

    /// Whether the client has turns of `thread` routed or starting.
    pub(crate) fn has_turns(&self, thread: &str) -> bool {
        self.turns.get(thread).is_some_and(|turns| turns.values().any(|r| r.completed_at.is_none()))
            || self.starting.contains_key(thread)
    }

    /// When the first turn that waits for its late output, or for events after a resume's
    /// answer reported it interrupted without an end, ends (its late grace period is over), if
    /// one does.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let routes = self.turns.values().flat_map(HashMap::values);
        let waiting = routes.filter_map(|r| r.completed_at.or(r.reported_unended.as_ref().map(|(at, _)| *at)));
        waiting.min().map(|at| at + self.late_grace)
    }

    /// Ends the turns whose late grace period is over at `now`: as completed, or as the
    /// resume's answer reported them.
    pub(crate) fn expire(&mut self, now: Instant) {
        let grace = self.late_grace;
        let mut reported = Vec::new();
        for (thread, turns) in &mut self.turns {
            turns.retain(|turn, route| {
                if route.completed_at.is_some_and(|at| at + grace <= now) {
                    route.queue.end(TurnEnd::Completed);
                    return false;
                }
                if route.reported_unended.as_ref().is_some_and(|(at, _)| *at + grace <= now) {
                    if let Some((_, reported_turn)) = route.reported_unended.take() {
                        tracing::info!(thread, turn, "no event of a turn reported interrupted came: it ends so");
                        reported.push(turn_completed(thread, reported_turn));
                    }
                }
                true
            });
        }
        self.turns.retain(|_, turns| !turns.is_empty());
        for line in reported {
            self.replay(line);
        }
    }

    /// The answer to a `thread/resume` after a reconnect lists the thread's `turns` (JSON), each
    /// with the items it completed: a routed turn gets those its stream did not have, as
    /// `item/completed`, as the server would have sent them (the server sent them to no
    /// connection: they completed while the client was away, or, for a thread resumed after
    /// its turn started, before the resume subscribed the connection). A turn the answer
    /// reports finished (any status but `inProgress`) then gets its `turn/completed`, so its
    /// handle ends with that status; a turn still in progress goes on with the events that
    /// follow (an `item/completed` of an item it already has is not delivered twice).
    ///
    /// One report is not taken at its word: a turn `interrupted` without `completedAt`. codex
    /// 0.171.0 reports so a turn it accepted and has not begun yet (a resume answered between
    /// `turn/start` and `turn/started`), as well as a turn whose server went away before it
    /// ended. The first goes on with its events, the second never sends one: the turn ends as
    /// reported once the late grace period passes without an event of it.
    pub(crate) fn reconcile(&mut self, thread: &str, turns: &serde_json::Value) {
        let Some(routed) = self.turns.get(thread) else { return };
        let (mut lines, mut unended) = (Vec::new(), Vec::new());
        for turn in turns.as_array().into_iter().flatten() {
            let Some(id) = wire::turn_id(turn) else { continue };
            let Some(route) = routed.get(&id) else { continue };
            let status = turn.get("status").and_then(|s| s.as_str()).unwrap_or("inProgress");
            if route.completed_at.is_some() {
                continue;
            }
            for item in turn.get("items").and_then(|i| i.as_array()).into_iter().flatten() {
                let item_id = item.get("id").and_then(|i| i.as_str()).unwrap_or_default();
                if !route.completed_items.contains(item_id) {
                    let params =
                        serde_json::json!({"item": item, "threadId": thread, "turnId": id, "completedAtMs": 0});
                    lines.push(serde_json::json!({"method": "item/completed", "params": params}));
                }
            }
            let ended = turn.get("completedAt").is_some_and(|at| !at.is_null());
            match status {
                "inProgress" => {}
                "interrupted" if !ended => unended.push((id, turn.clone())),
                _ => {
                    tracing::info!(thread, turn = id, status, "a turn ended while the connection was down");
                    lines.push(turn_completed(thread, turn.clone()));
                }
            }
        }
        for line in lines {
            self.replay(line);
        }
        // After the answer's own items, which are no sign of life.
        for (id, turn) in unended {
            if let Some(route) = self.turns.get_mut(thread).and_then(|turns| turns.get_mut(&id)) {
                tracing::debug!(thread, turn = id, "a resume's answer reports the turn interrupted without an end");
                route.reported_unended = Some((Instant::now(), turn));
            }
        }
    }

    /// Routes a notification the client makes from what the server answered.
    fn replay(&mut self, line: serde_json::Value) {
        match wire::decode_server_line(&line.to_string(), 0, |_| None::<&str>) {
            Ok(codex_app_protocol::Message::Notification(n)) => self.notification(&Arc::new(n)),
            Ok(_) => {}
            // The answer's turn does not decode as the release's notification: the turn ends
            // with the decode error, as an undecodable `turn/completed` does.
            Err(undecodable) => {
                let report = Arc::new(undecodable.report);
                self.undecodable(&line.to_string(), &report);
            }
        }
    }

    /// The handle of the turn is gone or its stream ended.
    pub(crate) fn forget(&mut self, thread: &str, turn: &str) {
        if let Some(turns) = self.turns.get_mut(thread) {
            turns.remove(turn);
            if turns.is_empty() {
                self.turns.remove(thread);
            }
        }
    }

    /// The connection ended: every turn ends.
    pub(crate) fn close(&mut self) {
        for route in self.turns.drain().flat_map(|(_, turns)| turns.into_values()) {
            route.queue.end(TurnEnd::Closed);
        }
        self.starting.clear();
    }

    /// How many turns have a handle (for tests).
    #[cfg(test)]
    fn routed(&self) -> usize {
        self.turns.values().map(HashMap::len).sum()
    }

    /// What the router holds ([`crate::ConnectionStats`]).
    pub(crate) fn stats(&self) -> RouterStats {
        let routes = self.turns.values().flat_map(HashMap::values);
        RouterStats {
            routed: self.turns.values().map(HashMap::len).sum(),
            starting: self.starting.len(),
            early: self.starting.values().map(|s| s.early.len()).sum(),
            queued: routes.map(|r| r.queue.queued()).sum(),
        }
    }
}

/// `turn/completed` of `turn` (JSON) on `thread`.
fn turn_completed(thread: &str, turn: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"method": TURN_COMPLETED, "params": {"threadId": thread, "turn": turn}})
}

/// Applies an event to a routed turn; returns how the turn ends, when it does now: after
/// `turn/completed` once no item is open, at once for an error.
fn apply(route: &mut Route, event: TurnEvent, late_grace: Duration) -> Option<TurnEnd> {
    match event {
        TurnEvent::Event { event, lifecycle, item } => {
            // The turn is alive: what a resume's answer reported of it is past.
            route.reported_unended = None;
            match (lifecycle, item) {
                (Lifecycle::ItemStarted, Some(id)) => {
                    route.open_items.insert(id);
                }
                (Lifecycle::ItemCompleted, Some(id)) => {
                    route.open_items.remove(&id);
                    if !route.completed_items.insert(id) {
                        // Already delivered (from a resume's answer): once is enough.
                        return None;
                    }
                }
                (Lifecycle::TurnCompleted, _) => route.completed_at = Some(Instant::now()),
                _ => {}
            }
            let completion = matches!(lifecycle, Lifecycle::TurnCompleted);
            route.queue.push(event, completion);
            match route.completed_at {
                Some(at) if route.open_items.is_empty() || at.elapsed() >= late_grace => Some(TurnEnd::Completed),
                _ => None,
            }
        }
        TurnEvent::End(_) if route.completed_at.is_some() => Some(TurnEnd::Completed),
        TurnEvent::End(error) => Some(TurnEnd::Failed(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Next;
    use codex_app_protocol::roundtrip::reencode;
    use codex_app_protocol::Message;

    fn notification(line: &str) -> Arc<ServerNotification> {
        match wire::decode_server_line(line, 1, |_| None::<&str>).ok().expect("decodes") {
            Message::Notification(n) => Arc::new(n),
            other => panic!("not a notification: {other:?}"),
        }
    }

    fn delta(thread: &str, turn: &str, text: &str) -> Arc<ServerNotification> {
        notification(&format!(
            r#"{{"method":"item/agentMessage/delta","params":{{"threadId":"{thread}","turnId":"{turn}","itemId":"m","delta":"{text}"}}}}"#
        ))
    }

    fn completed(thread: &str, turn: &str) -> Arc<ServerNotification> {
        notification(&format!(
            r#"{{"method":"turn/completed","params":{{"threadId":"{thread}","turn":{{"id":"{turn}","items":[],"status":"completed"}}}}}}"#
        ))
    }

    /// The report of a line that did not decode, where only its being one matters.
    fn bad_line() -> Arc<DecodeReport> {
        let error = codex_app_protocol::ServerMessage::from_line("{").unwrap_err();
        Arc::new(DecodeReport::of_line(1, "{", &error))
    }

    fn router() -> TurnRouter {
        TurnRouter::new(16, Duration::from_secs(5))
    }

    /// The events queued for a turn, and whether its stream ended.
    fn drain(queue: &TurnQueue) -> (Vec<String>, bool) {
        let mut seen = Vec::new();
        loop {
            match queue.poll_next(None) {
                Next::Event(Event::Notification(n)) => {
                    let value = reencode(&*n).unwrap();
                    seen.push(value["params"]["delta"].as_str().map_or_else(|| n.method().to_owned(), str::to_owned));
                }
                Next::Event(Event::Undecodable(_)) => seen.push("undecodable".into()),
                Next::Event(other) => seen.push(format!("{other:?}")),
                Next::Wait => return (seen, false),
                Next::End => return (seen, true),
            }
        }
    }

    #[test]
    fn a_notification_reaches_only_its_turn() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        r.expect("t");
        let b = r.started("t", "b");
        r.notification(&delta("t", "a", "for a"));
        r.notification(&delta("t", "b", "for b"));
        r.notification(&delta("t", "c", "for nobody"));
        r.notification(&delta("other", "a", "other thread"));
        assert_eq!(drain(&a), (vec!["for a".into()], false));
        assert_eq!(drain(&b), (vec!["for b".into()], false));
    }

    #[test]
    fn notifications_before_the_response_reach_the_turn_in_order() {
        let mut r = router();
        r.expect("t");
        r.expect("t");
        r.notification(&delta("t", "a", "1"));
        r.notification(&delta("t", "b", "x"));
        r.notification(&delta("t", "a", "2"));
        let a = r.started("t", "a");
        r.notification(&delta("t", "a", "3"));
        // The other `turn/start` still in flight gets its early events too.
        let b = r.started("t", "b");
        assert_eq!(drain(&a), (vec!["1".into(), "2".into(), "3".into()], false));
        assert_eq!(drain(&b), (vec!["x".into()], false));
        // Nothing is held once no `turn/start` is in flight.
        r.notification(&delta("t", "z", "late"));
        assert!(r.starting.is_empty());
    }

    #[test]
    fn early_events_are_bounded_and_dropped_when_the_start_fails() {
        let mut r = router();
        r.expect("t");
        for n in 0..EARLY_MAX + 10 {
            r.notification(&delta("t", "a", &n.to_string()));
        }
        assert_eq!(r.starting["t"].early.len(), EARLY_MAX);
        r.not_started("t");
        assert!(r.starting.is_empty());
    }

    #[test]
    fn a_turn_completed_that_does_not_decode_ends_its_turn_with_the_error() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        let line = r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"a","items":"not a list","status":"completed"}}}"#;
        let report =
            Arc::new(DecodeReport::of_line(7, line, &codex_app_protocol::ServerMessage::from_line(line).unwrap_err()));
        assert_eq!(report.path.as_ref().map(ToString::to_string).as_deref(), Some("params.turn.items"));
        r.undecodable(line, &report);
        assert_eq!(drain(&a), (vec!["undecodable".into()], true));
        assert!(matches!(a.failure(), Some(ClientError::Decode(r)) if r.line_number == Some(7)));
    }

    #[test]
    fn an_undecodable_turn_completed_before_the_response_still_ends_the_turn() {
        let mut r = router();
        r.expect("t");
        let line = r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"a","status":7}}}"#;
        let report = bad_line();
        r.undecodable(line, &report);
        let a = r.started("t", "a");
        assert_eq!(drain(&a), (vec!["undecodable".into()], true));
    }

    #[test]
    fn an_undecodable_line_of_another_kind_is_delivered_without_ending_the_turn() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        let line = r#"{"method":"item/agentMessage/delta","params":{"threadId":"t","turnId":"a","delta":5}}"#;
        let report = bad_line();
        r.undecodable(line, &report);
        r.undecodable("not json", &report);
        assert_eq!(drain(&a), (vec!["undecodable".into()], false));
    }

    #[test]
    fn thread_closed_ends_the_open_turns_of_the_thread() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        r.expect("u");
        let other = r.started("u", "b");
        r.notification(&notification(r#"{"method":"thread/closed","params":{"threadId":"t"}}"#));
        assert!(drain(&a).1);
        assert!(matches!(a.failure(), Some(ClientError::ThreadClosed { thread_id }) if thread_id == "t"));
        assert!(!drain(&other).1);
    }

    #[test]
    fn a_completed_turn_is_not_failed_by_a_later_close_of_its_thread() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        r.notification(&completed("t", "a"));
        r.notification(&notification(r#"{"method":"thread/closed","params":{"threadId":"t"}}"#));
        assert_eq!(drain(&a), (vec!["turn/completed".into()], true));
        assert!(a.failure().is_none());
    }

    fn item(method: &str, thread: &str, turn: &str, id: &str) -> Arc<ServerNotification> {
        notification(&format!(
            r#"{{"method":"{method}","params":{{"threadId":"{thread}","turnId":"{turn}","startedAtMs":0,"completedAtMs":0,"item":{{"type":"agentMessage","moderation":null,"id":"{id}","text":"","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":0,"completedAtMs":0}}}}}}"#
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn the_router_alone_ends_a_turn_after_its_late_output_or_its_grace_period() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        r.expect("t");
        let b = r.started("t", "b");
        for turn in ["a", "b"] {
            r.notification(&item("item/started", "t", turn, "i"));
            r.notification(&completed("t", turn));
        }
        assert_eq!(r.next_deadline(), Some(Instant::now() + Duration::from_secs(5)));
        // `a`'s item completes: it ends at once, and is no longer routed.
        r.notification(&item("item/completed", "t", "a", "i"));
        assert_eq!(drain(&a), (vec!["item/started".into(), "turn/completed".into(), "item/completed".into()], true));
        assert_eq!(r.routed(), 1);
        // `b`'s never does: it ends when the grace period is over.
        r.expire(Instant::now() + Duration::from_secs(4));
        assert!(!drain(&b).1);
        tokio::time::advance(Duration::from_secs(5)).await;
        r.expire(Instant::now());
        assert!(drain(&b).1);
        assert!(b.failure().is_none());
        assert_eq!((r.routed(), r.next_deadline()), (0, None));
    }

    #[test]
    fn forget_and_close() {
        let mut r = router();
        r.expect("t");
        let a = r.started("t", "a");
        r.expect("t");
        let b = r.started("t", "b");
        r.forget("t", "a");
        assert_eq!(r.routed(), 1);
        r.notification(&delta("t", "a", "gone"));
        assert_eq!(drain(&a), (vec![], false));
        r.close();
        assert_eq!(r.routed(), 0);
        assert!(drain(&b).1);
    }
}
