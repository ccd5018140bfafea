//! Untagged unions: the arm picked the way the schema picks it, by what each arm accepts
//! (generated [`Match`] data), then only that arm decoded.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::paths::nested_error;
use super::trail;
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
/// [`deserialize_untagged`]).
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
    /// `(variant index, what it accepts)`, in schema order.
    const ARMS: &'static [(usize, Match)];
    fn decode_arm(
        arm: usize,
        deserializer: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>,
    ) -> serde_json::Result<Self>;
}

/// Decodes an untagged union: the value is read once as JSON text (an object's or array's
/// members kept raw), its arm picked by [`Shape::pick`], and only that arm decoded from the
/// text. Decoding from inside the visitor lets serde_json place an error at the union's value,
/// and the path inside the arm is passed up as data ([`nested_error`]). Out of line, as a
/// tagged union's is.
#[inline(never)]
pub fn deserialize_untagged<'de, D: Deserializer<'de>, T: UntaggedUnion>(deserializer: D) -> Result<T, D::Error> {
    struct UntaggedVisitor<T>(PhantomData<T>);

    fn decode<T: UntaggedUnion, E: de::Error>(text: &str) -> Result<T, E> {
        let shape = Shape::read(text).map_err(E::custom)?;
        let Some(arm) = shape.pick(T::ARMS) else {
            return Err(E::custom(format_args!("no variant of {} matches this value", T::EXPECTING)));
        };
        trail::clear_nested();
        let mut deserializer = serde_json::Deserializer::from_str(text);
        T::decode_arm(arm, &mut deserializer)
            .and_then(|value| deserializer.end().map(|()| value))
            .map_err(|e| nested_error(text, e))
    }

    impl<'de, T: UntaggedUnion> Visitor<'de> for UntaggedVisitor<T> {
        type Value = T;

        #[inline]
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
            let mut text = String::from("{");
            while let Some(key) = map.next_key::<Str<'de>>()? {
                if text.len() > 1 {
                    text.push(',');
                }
                text.push_str(&Value::String(key.0.into_owned()).to_string());
                text.push(':');
                text.push_str(map.next_value::<Box<RawValue>>()?.get());
            }
            text.push('}');
            decode(&text)
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
            let mut text = String::from("[");
            while let Some(item) = seq.next_element::<Box<RawValue>>()? {
                if text.len() > 1 {
                    text.push(',');
                }
                text.push_str(item.get());
            }
            text.push(']');
            decode(&text)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            decode(&Value::String(v.to_owned()).to_string())
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
            decode(&v.to_string())
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            decode(&v.to_string())
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
            decode(&Value::from(v).to_string())
        }

        fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
            decode(if v { "true" } else { "false" })
        }

        fn visit_unit<E: de::Error>(self) -> Result<T, E> {
            decode("null")
        }

        fn visit_none<E: de::Error>(self) -> Result<T, E> {
            decode("null")
        }

        fn visit_some<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<T, D2::Error> {
            deserializer.deserialize_any(self)
        }
    }

    deserializer.deserialize_any(UntaggedVisitor(PhantomData))
}
