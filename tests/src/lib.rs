//! Shared helpers for the recorded-traffic tests.
