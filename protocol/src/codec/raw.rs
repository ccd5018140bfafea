//! `params`, `result` and envelope members kept raw, decoded from their text, with the path
//! of an error recovered from the text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde_json::value::RawValue;

use super::paths::{error_offset, path_at};
use super::reader::{Reader, Result as ReadResult};
use super::trail;
use super::Decode;
use crate::path::JsonPath;

/// Why `params` (or a `result`, or an envelope member) did not decode.
#[derive(Debug)]
pub struct ParamsError {
    /// Where in the value decoding failed (`thread.turns[0].items`; the root at the top).
    pub path: JsonPath,
    pub source: serde_json::Error,
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.source)
        } else {
            write!(f, "at `{}`: {}", self.path, self.source)
        }
    }
}

impl std::error::Error for ParamsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Decodes raw text (absent reads as `null`) with `T`'s `Deserialize`, for a caller that has
/// only that bound (`Response::decode`; [`decode_raw`] reads the crate's types); the path of an
/// error inside a type of the crate, which buffers its value, is joined to where that value is.
pub fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, ParamsError> {
    let text = raw.map_or("null", RawValue::get);
    trail::clear_nested();
    serde_json::from_str(text).map_err(|source| params_error(text, source))
}

/// Reads raw text (absent reads as `null`) with `decode`, which reads one whole value; an
/// error gets the path of where it happened, and the position in the text.
pub fn decode_raw<T>(
    raw: Option<&RawValue>,
    decode: impl FnOnce(&mut Reader<'_>) -> ReadResult<T>,
) -> Result<T, ParamsError> {
    let text = raw.map_or("null", RawValue::get);
    let mut reader = Reader::new(text);
    match decode(&mut reader) {
        Ok(value) => {
            // The text is one JSON value (a `RawValue`'s), and every decoder reads a value
            // whole, so nothing is left after it: asserted in debug builds, where every test
            // runs it. (A check in release builds would hold the value across a call, which
            // compiles the drop code of every message type into this function.)
            debug_assert!(reader.end().is_ok(), "a decoder returned before the end of its value: {text}");
            Ok(value)
        }
        Err(source) => Err(read_error(text, reader.offset(), source)),
    }
}

/// The [`ParamsError`] of `source`, raised at byte `at` of `text`.
#[cold]
#[inline(never)]
pub fn read_error(text: &str, at: usize, source: serde_json::Error) -> ParamsError {
    ParamsError { path: path_at(text, at), source: de::Error::custom(with_position(text, at, &source)) }
}

/// The message of `source` with the line and column of byte `at` of `text`, as serde_json
/// writes them.
pub(super) fn with_position(text: &str, at: usize, source: &serde_json::Error) -> String {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = 1 + before.iter().filter(|b| **b == b'\n').count();
    let column = before.len() - before.iter().rposition(|b| *b == b'\n').map_or(0, |n| n + 1);
    format!("{source} at line {line} column {column}")
}

/// The [`ParamsError`] of an error at the position of `source` in `text`, with the path of a value
/// decoded from buffered text ([`nested_error_at`](super::nested_error_at)) appended.
fn params_error(text: &str, source: serde_json::Error) -> ParamsError {
    let here = path_at(text, error_offset(text, &source));
    match trail::take_nested() {
        None => ParamsError { path: here, source },
        Some(inner) => ParamsError { path: here.join(&inner.path), source: de::Error::custom(inner.message) },
    }
}

/// An optional envelope member (`emittedAtMs`) from the message's other members.
pub fn member<T: Decode>(extra: &[(Cow<'_, str>, &RawValue)], name: &str) -> Result<Option<T>, ParamsError> {
    match extra.iter().rev().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, raw)) => decode_raw(Some(raw), Option::<T>::decode).map_err(|mut e| {
            e.path = JsonPath::root().key(name).join(&e.path);
            e
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;
    use crate::wire_macros::{wire_struct, wire_tagged, wire_untagged};

    // The shape of `FunctionCallOutputBody` (0.171.0), written here so that the tests compile
    // against the crate generated from any release: an untagged union whose array arm holds a
    // tagged union, whose arm holds a struct.
    wire_struct! {
        #[derive(Debug, Clone, PartialEq)]
        pub struct TextItem {
            pub text: String = "text" (required),
        }
    }
    wire_tagged! {
        #[derive(Debug, Clone, PartialEq)]
        pub enum ContentItem (tag = "type") {
            InputText(TextItem) = "input_text",
        }
    }
    wire_untagged! {
        #[derive(Debug, Clone, PartialEq)]
        pub enum FunctionCallOutputBody {
            String(String) = 0 if codec::Match::Types(&[codec::JsonType::String]),
            Array(Vec<ContentItem>) = 1 if codec::Match::Types(&[codec::JsonType::Array]),
        }
    }

    fn decode(text: &str) -> Result<FunctionCallOutputBody, ParamsError> {
        let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
        decode_raw(Some(&raw), <FunctionCallOutputBody as codec::Decode>::decode)
    }

    /// The path inside a union's value (an untagged union's array arm, and in it a tagged
    /// union whose tag comes last) is whole, and the message does not say it again.
    #[test]
    fn nested_paths_are_joined_without_reading_the_message() {
        for (text, path) in [
            (r#"[{"type":"input_text","text":"x"},{"type":"input_text","text":7}]"#, "[1].text"),
            (r#"[{"text":7,"type":"input_text"}]"#, "[0].text"),
        ] {
            let e = decode(text).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
            let message = e.source.to_string();
            assert!(message.starts_with("invalid type: integer `7`, expected a string"), "{text}: {message}");
            assert!(!message.contains("in `"), "{text}: {message}");
            // A plain `serde_json` call (the type's `Deserialize`, through its text) says the
            // path in its message.
            let plain = serde_json::from_str::<FunctionCallOutputBody>(text).unwrap_err().to_string();
            assert!(plain.starts_with(&format!("in `{path}`: invalid type")), "{text}: {plain}");
        }
    }

    /// A decoder that returns before the end of its value (none does: a `RawValue` is one
    /// value, and serde_json checks that an object or array ends where its visitor stopped) is
    /// caught by the debug builds' assertion, which every test's decode runs.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a decoder returned before the end of its value: [1]")]
    fn a_decoder_that_stops_early_fails_the_debug_assertion() {
        let raw: Box<RawValue> = serde_json::from_str("[1]").unwrap();
        let _ = decode_raw(Some(&raw), |_| Ok(()));
    }

    /// What an abandoned decode left behind (a plain `serde_json` call, whose trail nobody
    /// reads) is not taken by the next error: neither by a buffered decode's nor by
    /// `decode_raw`'s.
    #[test]
    fn an_abandoned_record_is_not_reused() {
        let stale = r#"[{"type":"input_text","text":7}]"#;
        let _ = serde_json::from_str::<FunctionCallOutputBody>(stale).unwrap_err();
        let plain =
            serde_json::from_str::<FunctionCallOutputBody>(r#"[{"type":"input_text"}]"#).unwrap_err().to_string();
        assert!(plain.contains("missing field `text`") && !plain.contains("[0].text"), "{plain}");
        let _ = serde_json::from_str::<FunctionCallOutputBody>(stale).unwrap_err();
        let e = decode("7").unwrap_err();
        assert_eq!(e.path, "", "{e}");
        assert!(e.source.to_string().starts_with("no variant of"), "{e}");
    }
}
