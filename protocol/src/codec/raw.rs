//! `params`, `result` and envelope members kept raw, decoded from their text, with the path
//! of an error recovered from the text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde_json::value::RawValue;

use super::duplicates::blank_repeated_tag;
use super::paths::{error_offset, path_at};
use super::trail;
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

/// Decodes raw `params`; absent reads as `null`.
pub fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, ParamsError> {
    decode_raw(raw, |deserializer| T::deserialize(deserializer))
}

/// Runs `decode` on raw text (absent reads as `null`), which it reads as one whole value; an
/// error gets the path of where it happened.
///
/// `decode` is called with the same deserializer type as the one-pass decode of a whole line
/// (`&mut serde_json::Deserializer<StrRead>`), so both paths share one instantiation of every
/// type's deserializer.
pub fn decode_raw<T>(
    raw: Option<&RawValue>,
    decode: impl Fn(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> serde_json::Result<T>,
) -> Result<T, ParamsError> {
    let text = raw.map_or("null", RawValue::get);
    trail::reset();
    match run(text, &decode) {
        Ok(value) => Ok(value),
        Err(source) => retry_without_repeated_tags(text, source, &decode),
    }
}

/// `decode` on `text`.
///
/// The text is one JSON value (a `RawValue`'s, or that with a tag's earlier occurrences
/// blanked), and a decode that returns `Ok` has read one whole value (serde_json checks that an
/// object or array ends where its visitor stopped reading), so no text is left after it. That
/// is asserted in debug builds (every test's decode checks it) and not in release builds: a
/// check there would hold the value across a call, which compiles the drop code of every message
/// type (of every params type inside it) into this function, for a path no input takes.
#[inline]
fn run<T>(
    text: &str,
    decode: &impl Fn(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> serde_json::Result<T>,
) -> serde_json::Result<T> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = decode(&mut deserializer)?;
    debug_assert!(deserializer.end().is_ok(), "a decoder returned before the end of its value: {text}");
    Ok(value)
}

/// After `decode` failed on `text` with `source`: when the failure was a union's tag given
/// again with another value, which the one-pass decode cannot take (the arm was chosen),
/// decodes again with that tag's earlier occurrences blanked, once per tag name. The blanked
/// text has every other byte where it was, so its error is one of the text as sent. Out of the
/// way of the decode every line takes.
#[cold]
#[inline(never)]
fn retry_without_repeated_tags<T>(
    text: &str,
    mut source: serde_json::Error,
    decode: &impl Fn(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> serde_json::Result<T>,
) -> Result<T, ParamsError> {
    let mut blanked: Option<String> = None;
    let mut tags: Vec<&'static str> = Vec::new();
    while let Some(tag) = trail::take_duplicate().filter(|tag| !tags.contains(tag)) {
        tags.push(tag);
        let Some(next) = blank_repeated_tag(blanked.as_deref().unwrap_or(text), tag) else { break };
        trail::reset();
        match run(&next, decode) {
            Ok(value) => return Ok(value),
            Err(e) => source = e,
        }
        blanked = Some(next);
    }
    Err(params_error(blanked.as_deref().unwrap_or(text), source))
}

/// The [`ParamsError`] of an error at the position of `source` in `text`, with the path of a value
/// decoded from buffered text ([`nested_error`](super::nested_error)) appended.
fn params_error(text: &str, source: serde_json::Error) -> ParamsError {
    let here = path_at(text, error_offset(text, &source));
    match trail::take_nested() {
        None => ParamsError { path: here, source },
        Some(inner) => ParamsError { path: here.join(&inner.path), source: de::Error::custom(inner.message) },
    }
}

/// An optional envelope member (`emittedAtMs`) from the message's other members.
pub fn member<T: DeserializeOwned>(extra: &[(Cow<'_, str>, &RawValue)], name: &str) -> Result<Option<T>, ParamsError> {
    match extra.iter().rev().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, raw)) => params::<Option<T>>(Some(raw)).map_err(|mut e| {
            e.path = JsonPath::root().key(name).join(&e.path);
            e
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

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
        decode_raw(Some(&raw), |d| FunctionCallOutputBody::deserialize(d))
    }

    /// The path inside a union's buffered value (an untagged union's array arm, and in it a
    /// tagged union whose tag comes last, buffered again) reaches the error as data: the
    /// path is whole, the message has neither the path nor a position in buffered text.
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
            assert!(!message.contains("in `") && !message.contains("line"), "{text}: {message}");
            // A plain `serde_json` call says the path in its message.
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

    /// serde_json itself rejects a visitor that stops before an object's or array's end, so
    /// a decoder built of visitors cannot stop early.
    #[test]
    fn serde_json_rejects_a_visitor_that_stops_early() {
        struct First;
        impl<'de> serde::de::Visitor<'de> for First {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("anything")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                seq.next_element::<serde::de::IgnoredAny>().map(|_| ())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>().map(|_| ())
            }
        }
        for text in ["[1,2]", r#"{"a":1,"b":2}"#] {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let e = serde::Deserializer::deserialize_any(&mut deserializer, First).unwrap_err();
            assert!(e.to_string().starts_with("trailing"), "{text}: {e}");
        }
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
