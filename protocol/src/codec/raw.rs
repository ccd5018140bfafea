//! `params`, `result` and envelope members kept raw, decoded from their text, with the path
//! of an error recovered from the text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde_json::value::RawValue;

use super::duplicates::{resolve_duplicates, DUPLICATE_MEMBERS};
use super::paths::{error_offset, join_path, path_at, split_nested};

/// Why `params` (or a `result`, or an envelope member) did not decode.
#[derive(Debug)]
pub struct ParamsError {
    /// Where in the value decoding failed (`thread.turns[0].items`), empty at the top.
    pub path: String,
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

/// Runs `decode` on raw text (absent reads as `null`), which must be consumed whole; an error
/// gets the path of where it happened.
///
/// `decode` is called with the same deserializer type as the one-pass decode of a whole line
/// (`&mut serde_json::Deserializer<StrRead>`), so both paths share one instantiation of every
/// type's deserializer.
pub fn decode_raw<T>(
    raw: Option<&RawValue>,
    decode: impl Fn(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> serde_json::Result<T>,
) -> Result<T, ParamsError> {
    let text = raw.map_or("null", RawValue::get);
    let run = |text: &str| {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        decode(&mut deserializer).and_then(|value| deserializer.end().map(|()| value))
    };
    match run(text) {
        Ok(value) => Ok(value),
        // A member given twice with different values where the one-pass decode could not
        // take the last one (a union's tag): decode the text with duplicates resolved.
        Err(source) if source.to_string().contains(DUPLICATE_MEMBERS) => match resolve_duplicates(text) {
            Some(resolved) => run(&resolved).map_err(|e| params_error(&resolved, e)),
            None => Err(params_error(text, source)),
        },
        Err(source) => Err(params_error(text, source)),
    }
}

/// The [`ParamsError`] of an error at the position of `source` in `text`, with the path of a value
/// decoded from buffered text ([`nested_error`]) appended.
fn params_error(text: &str, source: serde_json::Error) -> ParamsError {
    let here = path_at(text, error_offset(text, &source));
    let (inner, message) = split_nested(&source);
    if inner.is_empty() {
        return ParamsError { path: here, source };
    }
    ParamsError { path: join_path(&here, &inner), source: de::Error::custom(message) }
}

/// An optional envelope member (`emittedAtMs`) from the message's other members.
pub fn member<T: DeserializeOwned>(extra: &[(Cow<'_, str>, &RawValue)], name: &str) -> Result<Option<T>, ParamsError> {
    match extra.iter().rev().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, raw)) => params::<Option<T>>(Some(raw)).map_err(|mut e| {
            e.path = if e.path.is_empty() { name.to_owned() } else { format!("{name}.{}", e.path) };
            e
        }),
    }
}
