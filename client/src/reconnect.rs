//! What a connection that reconnects keeps of its threads ([`Threads`]) and the requests it
//! sends itself ([`Internal`]).
//!
//! After a reconnect every subscribed thread is resumed (`thread/resume`). The answer decides
//! what becomes of it:
//!
//! - resumed: its turns are reconciled with the answer (a turn the answer reports finished
//!   ends its handle with that status, one reported `interrupted` without an end only if no
//!   event of it follows; see [`TurnRouter::reconcile`](crate::routing::TurnRouter::reconcile));
//! - refused while the server has no turn of it (codex 0.171.0 answers "no rollout found" for
//!   a thread without turns: nothing of it was written, and the server still knows it): nothing
//!   was lost, so it stays usable, [`Subscription::Unresumed`]; its next `turn/start` is
//!   followed by a `thread/resume`, whose answer reconciles that turn. While that first turn
//!   runs, codex 0.171.0 may refuse again ("list_turns is not supported yet"): the resume is
//!   then sent once more when the server reports the thread no longer active
//!   (`thread/status/changed`, which reaches every connection), and its answer ends the turn;
//! - refused otherwise: the thread is detached: its open turns end with
//!   [`ClientError::ThreadDetached`](crate::ClientError::ThreadDetached), the streams get
//!   [`Event::ThreadDetached`](crate::Event::ThreadDetached), and new turns on it fail at once
//!   until the caller resumes it.

use std::collections::HashMap;

/// A request the connection sent itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Internal {
    /// The `initialize` of a reconnect.
    Initialize,
    /// `thread/resume` of this thread.
    Resume(String),
}

impl Internal {
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Internal::Initialize => "initialize",
            Internal::Resume(_) => "thread/resume",
        }
    }
}

/// A subscribed thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subscription {
    /// Resumed after a reconnect. `turns`: the server has turns of it.
    Attached { turns: bool },
    /// The server could not resume it while it had no turns; resumed after its next turn
    /// starts.
    Unresumed,
    /// Its first turn started after it was `Unresumed`: a `thread/resume` is in flight
    /// (`retried`: the second).
    Resuming { retried: bool },
    /// That resume was refused while the turn ran: resumed again once the thread is no
    /// longer active.
    Retry,
}

/// What the server's refusal to resume a thread means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Nothing of the thread was lost: it stays usable ([`Subscription::Unresumed`]).
    Unresumed,
    /// Resumed again when the thread is no longer active ([`Subscription::Retry`]).
    Retry,
    /// The thread is detached.
    Detached,
}

/// The threads a connection is subscribed to (started, resumed, forked, unarchived; until
/// `thread/closed` or a refused resume).
#[derive(Debug, Default)]
pub(crate) struct Threads {
    threads: HashMap<String, Subscription>,
}

impl Threads {
    /// An answer subscribed the connection to `thread`; `turns`: the answer listed turns.
    pub(crate) fn subscribed(&mut self, thread: String, turns: bool) {
        let entry = self.threads.entry(thread).or_insert(Subscription::Attached { turns });
        if let Subscription::Attached { turns: had } = entry {
            *had |= turns;
        } else {
            *entry = Subscription::Attached { turns };
        }
    }

    pub(crate) fn closed(&mut self, thread: &str) {
        self.threads.remove(thread);
    }

    /// A turn started on `thread`; `true`: the thread must be resumed now (it was not after
    /// the last reconnect).
    pub(crate) fn turn_started(&mut self, thread: &str) -> bool {
        match self.threads.get_mut(thread) {
            Some(Subscription::Attached { turns }) => {
                *turns = true;
                false
            }
            Some(state @ Subscription::Unresumed) => {
                *state = Subscription::Resuming { retried: false };
                true
            }
            Some(Subscription::Resuming { .. } | Subscription::Retry) | None => false,
        }
    }

    /// The server refused to resume `thread`; `open`: the client has turns of it in flight.
    pub(crate) fn refused(&mut self, thread: &str, open: bool) -> Refusal {
        match self.threads.get_mut(thread) {
            Some(state @ Subscription::Attached { turns: false }) if !open => {
                *state = Subscription::Unresumed;
                Refusal::Unresumed
            }
            Some(Subscription::Unresumed) if !open => Refusal::Unresumed,
            Some(state @ Subscription::Resuming { retried: false }) => {
                *state = Subscription::Retry;
                Refusal::Retry
            }
            _ => {
                self.threads.remove(thread);
                Refusal::Detached
            }
        }
    }

    /// The server reports `thread` no longer active (`thread/status/changed`); `true`: it must
    /// be resumed now (a refused resume waits for this).
    pub(crate) fn inactive(&mut self, thread: &str) -> bool {
        match self.threads.get_mut(thread) {
            Some(state @ Subscription::Retry) => {
                *state = Subscription::Resuming { retried: true };
                true
            }
            _ => false,
        }
    }

    /// Whether a resume of `thread` waits for the thread to become inactive.
    pub(crate) fn waits_for_inactive(&self, thread: &str) -> bool {
        self.threads.get(thread) == Some(&Subscription::Retry)
    }

    /// The threads to resume after a reconnect, in a stable order.
    pub(crate) fn to_resume(&self) -> Vec<String> {
        let mut threads: Vec<String> = self.threads.keys().cloned().collect();
        threads.sort();
        threads
    }

    pub(crate) fn len(&self) -> usize {
        self.threads.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_without_turns_survives_a_refused_resume_and_is_resumed_after_its_next_turn() {
        let mut threads = Threads::default();
        threads.subscribed("fresh".into(), false);
        threads.subscribed("used".into(), true);
        assert_eq!(threads.to_resume(), ["fresh", "used"]);
        assert_eq!(threads.refused("fresh", false), Refusal::Unresumed);
        assert_eq!(threads.refused("used", false), Refusal::Detached);
        assert_eq!(threads.to_resume(), ["fresh"]);
        assert!(threads.turn_started("fresh"));
        assert!(!threads.turn_started("fresh"));
        // Refused while its first turn runs: resumed again once it is inactive, once.
        assert!(!threads.inactive("fresh"));
        assert_eq!(threads.refused("fresh", true), Refusal::Retry);
        assert!(threads.waits_for_inactive("fresh"));
        assert!(threads.inactive("fresh"));
        assert!(!threads.inactive("fresh"));
        assert_eq!(threads.refused("fresh", true), Refusal::Detached);
        assert_eq!(threads.len(), 0);
    }

    #[test]
    fn a_refusal_while_a_turn_is_open_detaches_even_a_thread_without_turns_before() {
        let mut threads = Threads::default();
        threads.subscribed("t".into(), false);
        assert_eq!(threads.refused("t", true), Refusal::Detached);
    }
}
