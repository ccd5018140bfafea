//! What a decode learns about its error beside the error itself: the path inside a type's
//! buffered value.
//!
//! A generated type's `Deserialize` buffers its value's text and reads it with the crate's
//! [`Reader`](super::Reader) ([`deserialize_via_text`](super::deserialize_via_text)); the
//! deserializer's error type is generic there, so the path inside the value and the message
//! travel here, never through the message's text: [`nested_error_at`](super::nested_error_at)
//! sets them and [`params`](super::params) joins them to the path of the value.
//!
//! One per thread: a decode runs on one thread, and an error goes straight up, so what is here
//! when an error arrives was written by the decode that raised it. `params` clears the record
//! before it decodes, so what an abandoned decode (a caller's own `serde_json` call) left is
//! never read.

use std::cell::RefCell;

/// The path inside a buffered value where its error happened, and the message.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Nested {
    pub(super) path: crate::path::JsonPath,
    pub(super) message: String,
}

thread_local! {
    static NESTED: RefCell<Option<Nested>> = const { RefCell::new(None) };
}

pub(super) fn set_nested(nested: Nested) {
    NESTED.with(|t| *t.borrow_mut() = Some(nested));
}

pub(super) fn take_nested() -> Option<Nested> {
    NESTED.with(|t| t.borrow_mut().take())
}

pub(super) fn clear_nested() {
    NESTED.with(|t| *t.borrow_mut() = None);
}
