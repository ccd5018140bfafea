//! [`RetryPolicy`]: what the client does when the server answers "Server overloaded; retry
//! later." (`-32001`).
//!
//! codex answers `-32001` when its request queue is full and expects the client to send the
//! request again later, backing off. The client does that by itself: each request refused
//! this way is sent again (with a new id) after an exponentially growing delay with random
//! jitter, up to the policy's number of retries; then the caller gets the error
//! ([`ClientError::Server`](crate::ClientError::Server), whose
//! [`is_retryable`](crate::ClientError::is_retryable) is true).

use std::time::Duration;

/// How a request refused with "Server overloaded" is retried; set with
/// [`ClientBuilder::retry`](crate::ClientBuilder::retry).
///
/// The delay before retry `n` (0-based) is drawn uniformly from `[d/2, d]` where
/// `d = min(initial_delay * 2^n, max_delay)` ("equal jitter": every client waits at least half
/// the backoff, and clients that were refused together do not come back together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial_delay: Duration,
    max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 4 retries, from 100 ms, at most 2 s apart: about 1.5 s at most in all.
    fn default() -> Self {
        RetryPolicy { max_retries: 4, initial_delay: Duration::from_millis(100), max_delay: Duration::from_secs(2) }
    }
}

impl RetryPolicy {
    /// No retries: the first "Server overloaded" answer is the caller's.
    pub fn none() -> Self {
        RetryPolicy { max_retries: 0, ..Self::default() }
    }

    /// At most this many retries (the request is sent at most `n + 1` times).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The backoff before the first retry (default 100 ms); it doubles with each retry.
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// The longest backoff (default 2 s).
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The delay before retry `retry` (0-based), or `None` when the policy allows no more.
    pub fn delay(&self, retry: u32) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        let backoff = self.initial_delay.saturating_mul(factor).min(self.max_delay);
        let half = backoff / 2;
        let jitter = fastrand::u64(0..=u64::try_from((backoff - half).as_nanos()).unwrap_or(u64::MAX));
        Some(half + Duration::from_nanos(jitter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_exponentially_within_their_jitter_and_stop_at_the_limit() {
        let policy = RetryPolicy::default();
        for _ in 0..200 {
            for (retry, full) in [(0, 100), (1, 200), (2, 400), (3, 800)] {
                let d = policy.delay(retry).expect("allowed");
                assert!(
                    d >= Duration::from_millis(full / 2) && d <= Duration::from_millis(full),
                    "retry {retry}: {d:?}"
                );
            }
            assert_eq!(policy.delay(4), None);
        }
        let capped = RetryPolicy::default().max_retries(40).max_delay(Duration::from_millis(300));
        assert!(capped.delay(39).unwrap() <= Duration::from_millis(300));
        assert_eq!(RetryPolicy::none().delay(0), None);
    }

    #[test]
    fn jitter_spreads_the_delays() {
        let policy = RetryPolicy::default();
        let delays: std::collections::HashSet<Duration> = (0..50).map(|_| policy.delay(2).unwrap()).collect();
        assert!(delays.len() > 40, "{} distinct delays of 50", delays.len());
    }
}
