//! What a decode learns about its error beside the error itself.
//!
//! serde_json's errors carry a message and a position, nothing else, and every decoder is
//! generic over the error type, so facts the caller decides on travel here instead, from where
//! the error is raised to where it is reported, never through the message's text:
//!
//! - that a union's tag was given twice with different values, and which tag
//!   ([`note_duplicate`], set by the tagged decoder; [`decode_raw`](super::decode_raw) then
//!   decodes the text again with that tag's earlier occurrences blanked), and
//! - the path inside a value decoded from buffered text (a union's), with the message without
//!   its position ([`Nested`], set by [`nested_error`](super::nested_error), extended by each
//!   enclosing buffered decode, joined to the outer path by `decode_raw`).
//!
//! One per thread: a decode runs on one thread, and an error goes straight up the decoders
//! that are running (none of them tries something else after an error), so what is here when
//! an error arrives was written by the decode that raised it. The record is cleared where a
//! decode starts ([`reset`] by `decode_raw`, [`clear_nested`] by each buffered decode), so
//! what an abandoned decode left (the one-pass line decode, a caller's own `serde_json` call)
//! is never read.

use std::cell::RefCell;

/// The path inside a value decoded from buffered text where its error happened.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Nested {
    /// `thread.turns[0].id`, relative to the buffered value.
    pub(super) path: crate::path::JsonPath,
    /// The error's message, without the path or a position.
    pub(super) message: String,
}

struct Trail {
    duplicate: Option<&'static str>,
    nested: Option<Nested>,
}

impl Trail {
    /// Nothing noted: what the thread starts with and what `reset` puts back.
    const EMPTY: Trail = Trail { duplicate: None, nested: None };
}

thread_local! {
    // Initialized as a constant: every `decode_raw` resets it, and a lazily initialized one
    // would check its state first.
    static TRAIL: RefCell<Trail> = const { RefCell::new(Trail::EMPTY) };
}

/// Forgets everything (a decode of a whole text starts).
pub(super) fn reset() {
    TRAIL.with(|t| *t.borrow_mut() = Trail::EMPTY);
}

/// A member was given twice with different values where the one-pass decode cannot take the
/// last one (a union's tag, after the arm was chosen).
pub(super) fn note_duplicate(tag: &'static str) {
    TRAIL.with(|t| t.borrow_mut().duplicate = Some(tag));
}

/// The tag [`note_duplicate`] was called with since the last [`reset`]; clears it.
pub(super) fn take_duplicate() -> Option<&'static str> {
    TRAIL.with(|t| t.borrow_mut().duplicate.take())
}

/// The error being raised came from a buffered decode, at `nested.path` inside it.
pub(super) fn set_nested(nested: Nested) {
    TRAIL.with(|t| t.borrow_mut().nested = Some(nested));
}

/// The [`Nested`] record of the error being handled, if it came from a buffered decode.
pub(super) fn take_nested() -> Option<Nested> {
    TRAIL.with(|t| t.borrow_mut().nested.take())
}

/// A buffered decode starts: a record left by an earlier, abandoned one is not its own.
pub(super) fn clear_nested() {
    TRAIL.with(|t| t.borrow_mut().nested = None);
}
