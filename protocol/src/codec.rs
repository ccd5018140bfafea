//! Serde support the generated code calls. Written by hand; not part of the public API.
//!
//! - Tagged unions (`{"type": "userMessage", ...}`) read the tag and then the arm straight from
//!   the same map when the tag comes first, as codex writes it: one pass, no buffering. A tag
//!   that comes later falls back to buffering the object once.
//! - Externally tagged unions (`"never"` or `{"granular": {...}}`) dispatch on the string or
//!   the single key.
//! - Unknown tags, keys and values are kept whole in the type's catch-all variant.
//! - `params` and `result` kept raw are decoded from their text; an error's path is recovered
//!   from the text at the error's position ([`path_at`]), so no type is compiled twice.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::RequestId;

/// A union of objects told apart by a tag member.
pub trait TaggedUnion: Sized {
    /// The tag member's name.
    const TAG: &'static str;
    const EXPECTING: &'static str;
    /// Decodes the arm for `tag` from the object's other members; an unknown tag keeps them
    /// with [`unrecognized_arm`].
    fn deserialize_arm<'de, D: Deserializer<'de>>(tag: &str, payload: D) -> Result<Self, D::Error>;
}

/// The whole object of an unknown tagged arm: its other members plus the tag.
pub fn unrecognized_arm<'de, D: Deserializer<'de>>(tag_name: &str, tag: &str, payload: D) -> Result<Map<String, Value>, D::Error> {
    let mut object = Map::deserialize(payload)?;
    object.insert(tag_name.to_owned(), Value::String(tag.to_owned()));
    Ok(object)
}

pub fn deserialize_tagged<'de, D: Deserializer<'de>, T: TaggedUnion>(deserializer: D) -> Result<T, D::Error> {
    struct TaggedVisitor<T>(PhantomData<T>);

    impl<'de, T: TaggedUnion> Visitor<'de> for TaggedVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
            let Some(first) = map.next_key::<Str<'de>>()? else {
                return Err(de::Error::missing_field(T::TAG));
            };
            if first.0 == T::TAG {
                let tag = map.next_value::<Str<'de>>()?;
                return T::deserialize_arm(&tag.0, de::value::MapAccessDeserializer::new(map));
            }
            // The tag is not first: keep the members as raw JSON, write them back with the
            // tag first and decode that through the path above. (Decoding the buffered members
            // with any other deserializer would compile every arm's deserializer again.)
            let mut members = vec![(first.0.into_owned(), map.next_value::<Box<RawValue>>()?)];
            while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                members.push((k, v));
            }
            let Some(text) = tag_first(members, T::TAG) else {
                return Err(de::Error::missing_field(T::TAG));
            };
            deserialize_tagged::<_, T>(&mut serde_json::Deserializer::from_str(&text)).map_err(de::Error::custom)
        }
    }

    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

/// A struct (a JSON object with known members), decoded member by member from a map.
///
/// The generated `visit_members` matches each key as a borrowed string and reads its value
/// into a slot; unknown keys are skipped as `IgnoredAny` (or kept, for open objects). This
/// is what serde's derive does, without its per-struct field-identifier types and its
/// sequence form (a JSON array is never a struct here), which would be compiled for every
/// struct.
pub trait DecodeStruct: Sized {
    const EXPECTING: &'static str;
    fn visit_members<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

pub fn deserialize_struct<'de, D: Deserializer<'de>, T: DecodeStruct>(deserializer: D) -> Result<T, D::Error> {
    struct StructVisitor<T>(PhantomData<T>);

    impl<'de, T: DecodeStruct> Visitor<'de> for StructVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::visit_members(map)
        }
    }

    deserializer.deserialize_map(StructVisitor(PhantomData))
}

/// The next member name of a struct, borrowed from the input when it has no escapes.
pub fn next_key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_key::<Str<'de>>()?.map(|key| key.0))
}

/// Reads a member's value into its slot; a member given twice is an error.
pub fn read_member<'de, A: MapAccess<'de>, T: Deserialize<'de>>(map: &mut A, slot: &mut Option<T>, name: &'static str) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// Skips the value of a member the struct does not know.
pub fn skip_member<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<de::IgnoredAny>().map(|_| ())
}

/// The value of a required member, or the error that names it.
pub fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| de::Error::missing_field(name))
}

/// The object of `members` written back with the `tag` member first; `None` without one.
fn tag_first(mut members: Vec<(String, Box<RawValue>)>, tag: &str) -> Option<String> {
    let at = members.iter().position(|(k, _)| k == tag)?;
    members.swap(0, at);
    let mut text = String::from("{");
    for (n, (k, v)) in members.iter().enumerate() {
        if n > 0 {
            text.push(',');
        }
        text.push_str(&Value::String(k.clone()).to_string());
        text.push(':');
        text.push_str(v.get());
    }
    text.push('}');
    Some(text)
}

/// A string enum; an unknown value is kept in its catch-all variant.
pub trait StringEnum: Sized {
    const EXPECTING: &'static str;
    fn from_wire(value: &str) -> Option<Self>;
    fn unrecognized(value: String) -> Self;
}

pub fn deserialize_string_enum<'de, D: Deserializer<'de>, T: StringEnum>(deserializer: D) -> Result<T, D::Error> {
    // One visitor for every string enum (the expected-type text is a value, not a type), so
    // the deserializer's string path is compiled once, not once per enum.
    struct StringVisitor(&'static str);

    impl<'de> Visitor<'de> for StringVisitor {
        type Value = Cow<'de, str>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }

        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_owned()))
        }

        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }

    let value = deserializer.deserialize_str(StringVisitor(T::EXPECTING))?;
    Ok(match T::from_wire(&value) {
        Some(known) => known,
        None => T::unrecognized(value.into_owned()),
    })
}

/// A union of plain strings and single-key objects (serde's externally tagged form).
pub trait ExternalUnion: Sized {
    const EXPECTING: &'static str;
    /// The variant for a plain string; an unknown string is kept whole.
    fn from_unit(value: &str) -> Self;
    /// The variant for `{key: value}`; an unknown key keeps the object with [`unrecognized_keyed`].
    fn deserialize_keyed<'de, D: Deserializer<'de>>(key: &str, value: D) -> Result<Self, D::Error>;
    fn unrecognized(value: Value) -> Self;
}

/// The whole object `{key: value}` of an unknown key.
pub fn unrecognized_keyed<'de, D: Deserializer<'de>>(key: &str, value: D) -> Result<Value, D::Error> {
    let mut object = Map::new();
    object.insert(key.to_owned(), Value::deserialize(value)?);
    Ok(Value::Object(object))
}

pub fn deserialize_external<'de, D: Deserializer<'de>, T: ExternalUnion>(deserializer: D) -> Result<T, D::Error> {
    struct ExternalVisitor<T>(PhantomData<T>);

    struct KeyedSeed<'a, T>(&'a str, PhantomData<T>);

    impl<'de, T: ExternalUnion> DeserializeSeed<'de> for KeyedSeed<'_, T> {
        type Value = T;

        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
            T::deserialize_keyed(self.0, deserializer)
        }
    }

    impl<'de, T: ExternalUnion> Visitor<'de> for ExternalVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            Ok(T::from_unit(v))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
            let Some(key) = map.next_key::<Str<'de>>()? else {
                return Ok(T::unrecognized(Value::Object(Map::new())));
            };
            let value = map.next_value_seed(KeyedSeed::<T>(&key.0, PhantomData))?;
            if map.next_key::<de::IgnoredAny>()?.is_some() {
                return Err(de::Error::invalid_length(2, &"an object with a single key"));
            }
            Ok(value)
        }
    }

    deserializer.deserialize_any(ExternalVisitor(PhantomData))
}

/// A string that borrows from the input when it can.
struct Str<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;

        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }

        deserializer.deserialize_str(StrVisitor)
    }
}

/// For `Option<Option<T>>` members where `null` means something: a present member is
/// `Some(...)`, so `null` reads as `Some(None)` (an absent one stays `None` by `default`).
pub fn double_option<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

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
pub fn decode_raw<'a, T>(
    raw: Option<&'a RawValue>,
    decode: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'a>>) -> serde_json::Result<T>,
) -> Result<T, ParamsError> {
    let text = raw.map_or("null", RawValue::get);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    decode(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|source| ParamsError { path: path_at(text, source.column()), source })
}

/// The JSON path (`thread.turns[0].id`, empty at the top) of the value that ends at byte
/// `column` (1-based, as serde_json reports errors) of the one-line JSON `text`.
///
/// serde_json reports a type error at the last byte of the offending value and a missing
/// member at the end of its object, so scanning the text up to there gives the path of what
/// did not fit. This needs no second, path-tracking decode (which would compile every
/// type's deserializer twice).
pub fn path_at(text: &str, column: usize) -> String {
    enum Frame {
        Object { key: Option<String> },
        Array { index: usize },
    }
    let bytes = text.as_bytes();
    let end = column.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' => stack.push(Frame::Object { key: None }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key }) => *key = None,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    *key = Some(text.get(start..i.min(bytes.len())).unwrap_or_default().to_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key) } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// An optional envelope member (`emittedAtMs`) from the message's other members.
pub fn member<T: DeserializeOwned>(extra: &[(Cow<'_, str>, &RawValue)], name: &str) -> Result<Option<T>, ParamsError> {
    match extra.iter().find(|(k, _)| k == name) {
        None => Ok(None),
        Some((_, raw)) => params::<Option<T>>(Some(raw)).map_err(|mut e| {
            e.path = if e.path.is_empty() { name.to_owned() } else { format!("{name}.{}", e.path) };
            e
        }),
    }
}

/// Writes `{"id"?, "method", "params"?, envelope...}`. `params` that are `None` are not written
/// (absent and `null` mean the same for params).
pub fn write_message<S: Serializer, P: Serialize + ?Sized>(
    serializer: S,
    id: Option<&RequestId>,
    method: &str,
    params: Option<&P>,
    envelope: impl FnOnce(&mut S::SerializeMap) -> Result<(), S::Error>,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    if let Some(id) = id {
        map.serialize_entry("id", id)?;
    }
    map.serialize_entry("method", method)?;
    if let Some(params) = params {
        map.serialize_entry("params", params)?;
    }
    envelope(&mut map)?;
    map.end()
}

/// Writes one message whose id, method and envelope members are known, given its params:
/// what the generated `Serialize` of a message enum hands each variant's params to.
pub struct MessageWriter<'a, S: Serializer, E> {
    serializer: S,
    id: Option<&'a RequestId>,
    method: &'a str,
    envelope: E,
}

impl<'a, S: Serializer, E: FnOnce(&mut S::SerializeMap) -> Result<(), S::Error>> MessageWriter<'a, S, E> {
    pub fn new(serializer: S, id: Option<&'a RequestId>, method: &'a str, envelope: E) -> Self {
        MessageWriter { serializer, id, method, envelope }
    }

    /// Writes the message with `params` (not written when `None`).
    #[inline]
    pub fn params<P: Serialize + ?Sized>(self, params: Option<&P>) -> Result<S::Ok, S::Error> {
        write_message(self.serializer, self.id, self.method, params, self.envelope)
    }
}
