//! Untagged unions: the arm picked the way the schema picks it, by what each arm accepts
//! (generated [`Match`] data), then only that arm decoded.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::paths::message_of;
use super::reader::{Reader, Result as ReadResult};
use super::Str;

/// A JSON type, as an untagged union tells its arms apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    Null,
    Boolean,
    Integer,
    /// Any number (an integer too).
    Number,
    String,
    Array,
    Object,
}

/// What JSON an arm of an untagged union accepts, as its schema says (generated data; see
/// [`decode_untagged`]).
#[derive(Debug)]
pub enum Match {
    Any,
    Types(&'static [JsonType]),
    /// A string, one of these values.
    Strings(&'static [&'static str]),
    /// One of these JSON values (as JSON text): an `enum` or `const` of numbers, booleans or
    /// mixed values.
    Values(&'static [&'static str]),
    Object {
        required: &'static [&'static str],
        /// What members accept when present.
        members: &'static [(&'static str, Match)],
        /// `additionalProperties: false`: the only members allowed.
        closed: Option<&'static [&'static str]>,
    },
    AnyOf(&'static [Match]),
}

/// How strictly an arm is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// As the schema says.
    Schema,
    /// Enum and const values not checked: a value a later release added (kept by an open enum).
    AnyValue,
    /// Required and allowed members only: the arm a value of the wrong type in a member
    /// belongs to, so that the error is about that member.
    Members,
    /// Only the JSON type.
    JsonType,
}

/// The top level of one buffered JSON value, enough to pick an untagged union's arm.
pub struct Shape<'a> {
    kind: JsonType,
    text: &'a str,
    /// An object's members in order (a key given twice is here twice; the last one counts).
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Shape<'a> {
    /// Reads the top level of `text` (one JSON value).
    pub fn read(text: &'a str) -> serde_json::Result<Self> {
        let trimmed = text.trim_start();
        let kind = match trimmed.as_bytes().first() {
            Some(b'{') => JsonType::Object,
            Some(b'[') => JsonType::Array,
            Some(b'"') => JsonType::String,
            Some(b't' | b'f') => JsonType::Boolean,
            Some(b'n') => JsonType::Null,
            _ if trimmed.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => JsonType::Number,
            _ => JsonType::Integer,
        };
        let members = if kind == JsonType::Object { serde_json::from_str::<Members<'a>>(text)?.0 } else { Vec::new() };
        Ok(Shape { kind, text, members })
    }

    fn member(&self, name: &str) -> Option<&'a RawValue> {
        self.members.iter().rev().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    fn accepts(&self, m: &Match, how: Strictness) -> bool {
        match m {
            Match::Any => true,
            Match::Types(types) => {
                types.iter().any(|t| *t == self.kind || (*t == JsonType::Number && self.kind == JsonType::Integer))
            }
            Match::Strings(values) => {
                self.kind == JsonType::String
                    && (how != Strictness::Schema
                        || serde_json::from_str::<Cow<'_, str>>(self.text).is_ok_and(|s| values.contains(&s.as_ref())))
            }
            Match::Values(values) => values.iter().any(|v| {
                let Ok(shape) = Shape::read(v) else { return false };
                let same_type = shape.kind == self.kind
                    || matches!(
                        (shape.kind, self.kind),
                        (JsonType::Integer, JsonType::Number) | (JsonType::Number, JsonType::Integer)
                    );
                same_type
                    && (how != Strictness::Schema
                        || serde_json::from_str::<serde_json::Value>(self.text).ok()
                            == serde_json::from_str::<serde_json::Value>(v).ok())
            }),
            Match::Object { required, members, closed } => {
                if self.kind != JsonType::Object {
                    return false;
                }
                if how == Strictness::JsonType {
                    return true;
                }
                let present = required.iter().all(|r| self.member(r).is_some());
                let allowed = closed.is_none_or(|c| self.members.iter().all(|(k, _)| c.contains(&k.as_ref())));
                present
                    && allowed
                    && (how == Strictness::Members
                        || members.iter().all(|(name, m)| match self.member(name) {
                            None => true,
                            Some(raw) => Shape::read(raw.get()).is_ok_and(|shape| shape.accepts(m, how)),
                        }))
            }
            Match::AnyOf(arms) => arms.iter().any(|a| self.accepts(a, how)),
        }
    }

    /// The arm to decode: the first that accepts the value as the schema says, else the first
    /// that accepts it with unknown enum values, else the first whose required and allowed
    /// members fit, else the first of its JSON type.
    pub fn pick(&self, arms: &[(usize, Match)]) -> Option<usize> {
        [Strictness::Schema, Strictness::AnyValue, Strictness::Members, Strictness::JsonType]
            .into_iter()
            .find_map(|how| arms.iter().find(|(_, m)| self.accepts(m, how)).map(|(i, _)| *i))
    }
}

/// An object's members as raw values, in order.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    members.push((key.0, map.next_value()?));
                }
                Ok(Members(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A union whose arms are told apart by the shape of the JSON (`#[serde(untagged)]` on the
/// wire), decoded by picking the arm its schema would pick, not by trying each in turn.
pub trait UntaggedUnion: Sized {
    const EXPECTING: &'static str;
    /// Each arm's index and what it accepts, in the schema's order.
    const ARMS: &'static [(usize, Match)];
    /// Decodes the value at the reader as arm `arm`.
    fn decode_arm(arm: usize, reader: &mut Reader<'_>) -> ReadResult<Self>;
}

/// An untagged union's [`Decode`](super::Decode): the value's shape read first
/// ([`pick_arm`]), then the value decoded as the arm it picked, from the same text. Out of
/// line: a caller holds a call.
#[inline(never)]
pub fn decode_untagged<T: UntaggedUnion>(reader: &mut Reader<'_>) -> ReadResult<T> {
    let arm = pick_arm(reader, T::ARMS, T::EXPECTING)?;
    T::decode_arm(arm, reader)
}

/// The arm of `arms` the value at the reader has the shape of; the reader is left where it
/// was, or, when no arm takes the value, after it.
fn pick_arm(reader: &mut Reader<'_>, arms: &[(usize, Match)], expecting: &str) -> ReadResult<usize> {
    let start = reader.mark();
    let text = reader.raw_value()?;
    let shape = Shape::read(text).map_err(|e| serde_json::Error::custom(message_of(&e)))?;
    let Some(arm) = shape.pick(arms) else {
        return Err(serde_json::Error::custom(format_args!("no variant of {expecting} matches this value")));
    };
    reader.rewind(start);
    Ok(arm)
}
