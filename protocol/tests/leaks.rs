//! No decoded value is leaked when a deserializer fails after the visitor returned it: the
//! struct and tagged union decoders (`codec::deserialize_struct`, `deserialize_tagged`) hand
//! the deserializer no value of the type (their visitor writes it into a holder of theirs),
//! so whatever a deserializer does after the visitor, the value is dropped. Counted by the
//! binary's allocator (`counting.rs`), per thread.
//!
//! Written against the types of the vendored codex release (see `pinned_to_codex!`).

codex_app_protocol::__test_support::pinned_to_codex! { "0.171.0",

use codex_app_protocol::{AgentMessageDeltaNotification, ThreadItem};
use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::counting;

/// A deserializer that runs the visitor on JSON text (with serde_json's) and then fails,
/// dropping what the visitor gave back, as one that finds something wrong after a value does
/// (a checksum, a length that does not match, an end that is missing).
struct FailsAfterVisitor<'de>(&'de str);

impl<'de> Deserializer<'de> for FailsAfterVisitor<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let value = serde_json::Deserializer::from_str(self.0).deserialize_any(visitor)?;
        drop(value);
        Err(de::Error::custom("failed after the visitor"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// The bytes and blocks a decode of `text` through [`FailsAfterVisitor`] left allocated, after
/// its error was dropped.
fn left_by_failed_decode<'de, T: Deserialize<'de> + std::fmt::Debug>(text: &'de str) -> (isize, isize) {
    let before = counting::in_use();
    let result = T::deserialize(FailsAfterVisitor(text));
    let error = result.expect_err("the deserializer fails");
    assert_eq!(error.to_string(), "failed after the visitor");
    drop(error);
    let after = counting::in_use();
    (after.0 - before.0, after.1 - before.1)
}

#[test]
fn a_deserializer_failing_after_the_visitor_leaks_nothing() {
    let delta = r#"{"delta":"some text of the delta","itemId":"item-1","threadId":"thread-1","turnId":"turn-1"}"#;
    // The decode itself, through serde_json, allocates (the struct's strings).
    let before = counting::in_use();
    let decoded = serde_json::from_str::<AgentMessageDeltaNotification>(delta).unwrap();
    assert!(counting::in_use().0 > before.0, "the decoded struct holds heap data");
    drop(decoded);
    assert_eq!(counting::in_use(), before);

    let cases = [
        ("struct", left_by_failed_decode::<AgentMessageDeltaNotification>(delta)),
        (
            "tagged union, tag first",
            left_by_failed_decode::<ThreadItem>(r#"{"type":"agentMessage","id":"item-1","text":"some text"}"#),
        ),
        (
            "tagged union, tag last (buffered)",
            left_by_failed_decode::<ThreadItem>(r#"{"id":"item-1","text":"some text","type":"agentMessage"}"#),
        ),
    ];
    let leaks: Vec<_> = cases.into_iter().filter(|(_, left)| *left != (0, 0)).collect();
    assert!(leaks.is_empty(), "(bytes, blocks) left allocated after the error: {leaks:?}");
}

}
