//! Error paths: where in a JSON text an error happened, and the path inside a value decoded
//! from buffered text.

use std::borrow::Cow;

use super::scan::{string_at, Scanner, Token};
use super::trail::{self, Nested};
use crate::path::JsonPath;

/// The byte offset in `text` of serde_json's error position (its line and column: the
/// column counts the bytes of the line before the position), so that multi-line and
/// pretty-printed text gets the same path as one line.
pub fn error_offset(text: &str, e: &serde_json::Error) -> usize {
    let line_start = match e.line() {
        0 | 1 => 0,
        line => text.bytes().enumerate().filter(|(_, b)| *b == b'\n').nth(line - 2).map_or(text.len(), |(i, _)| i + 1),
    };
    line_start + e.column()
}

/// The path (`thread.turns[0].id`, the root at the top) of the value that ends before byte
/// `end` of the JSON `text` ([`error_offset`] of an error), its keys unescaped.
///
/// serde_json reports a type error at the last byte of the offending value and a missing
/// member at the end of its object, so scanning the text up to there gives the path of what
/// did not fit. This needs no second, path-tracking decode (which would compile every
/// type's deserializer twice).
pub fn path_at(text: &str, end: usize) -> JsonPath {
    enum Frame<'a> {
        Object { key: Option<Cow<'a, str>> },
        Array { index: usize },
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    for token in Scanner::new(text).take_while(|t| t.start() < end) {
        match token {
            Token::Open { object: true, .. } => stack.push(Frame::Object { key: None }),
            Token::Open { object: false, .. } => stack.push(Frame::Array { index: 0 }),
            Token::Close { .. } => {
                stack.pop();
            }
            Token::Comma { .. } => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key }) => *key = None,
                None => {}
            },
            // A key is read as JSON reads it (the path names the member as its type knows it).
            Token::Str { start, end, escaped } => {
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    *key = Some(string_at(text, start, end, escaped));
                }
            }
            Token::Colon { .. } | Token::Scalar { .. } => {}
        }
    }
    let mut path = JsonPath::root();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key) } => path.push_key(key),
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_index(*index),
        }
    }
    path
}

/// The message of `error`, raised at byte `at` of `text` (a type's buffered value, read by its
/// `Deserialize`): the path inside the text is left for [`params`](super::params) in the trail,
/// and said in the message for other callers.
pub fn nested_error_at(text: &str, at: usize, error: serde_json::Error) -> String {
    let path = path_at(text, at);
    let message = super::raw::with_position(text, at, &error);
    if path.is_empty() {
        trail::set_nested(Nested { path, message: message.clone() });
        return message;
    }
    let said = format!("in `{path}`: {message}");
    trail::set_nested(Nested { path, message });
    said
}

/// The message of `e` without the position serde_json appends to it (from `e`'s own line and
/// column): the position is in buffered text, which the reader of the error never saw.
pub(super) fn message_of(e: &serde_json::Error) -> String {
    let message = e.to_string();
    if e.line() == 0 {
        return message;
    }
    let position = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&position) {
        Some(bare) => bare.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Error positions of multi-line text are byte offsets of the text.
    #[test]
    fn error_offsets_count_lines() {
        let text = "{\"a\":[1,\n2],\n\"b\":x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        assert_eq!(path_at(text, error_offset(text, &e)), "b");
    }
}
