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
                let guard = TagGuard { map, name: T::TAG, tag: &tag.0 };
                return T::deserialize_arm(&tag.0, de::value::MapAccessDeserializer::new(guard));
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
            deserialize_tagged::<_, T>(&mut serde_json::Deserializer::from_str(&text)).map_err(|e| nested_error(&text, e))
        }
    }

    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

/// The members after a tagged union's tag, as its arm reads them. A second tag member is
/// type-checked and must repeat the tag; one with another value would change the arm after it
/// was chosen, which a one-pass decode cannot do: it is an error [`decode_raw`] answers by
/// decoding the text again with duplicate members resolved (the last one counts).
struct TagGuard<'t, A> {
    map: A,
    name: &'static str,
    tag: &'t str,
}

/// The message of a [`TagGuard`] error; [`decode_raw`] retries on it.
const DUPLICATE_MEMBERS: &str = "a member is given twice with different values";

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TagGuard<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Str(key)) = self.map.next_key::<Str<'de>>()? else { return Ok(None) };
            if key == self.name {
                if self.map.next_value::<Str<'de>>()?.0 != self.tag {
                    return Err(de::Error::custom(DUPLICATE_MEMBERS));
                }
                continue;
            }
            return match key {
                Cow::Borrowed(k) => seed.deserialize(de::value::BorrowedStrDeserializer::new(k)),
                Cow::Owned(k) => seed.deserialize(de::value::StringDeserializer::new(k)),
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// `text` with every object's duplicate members resolved as `serde_json::Value` resolves them:
/// the last value counts, at the place of the first. Values are copied as text (numbers
/// stay exact, whitespace is kept). `None` when nothing is duplicated (or `text` is no JSON).
///
/// Untrusted input: one iterative scan over the bytes (an explicit stack, no recursion, so
/// any depth runs in bounded stack), then one copy of the text with the duplicates' edits
/// applied: `O(n log n)` in all, whatever the nesting.
pub fn resolve_duplicates(text: &str) -> Option<String> {
    let edits = duplicate_edits(text)?;
    if edits.is_empty() {
        return None;
    }
    // Each range of the text is copied once: either where it stands or, for the last value of
    // a member given twice, in place of the first value.
    let mut out = String::with_capacity(text.len());
    let mut ranges = vec![(0, text.len())];
    while let Some((cursor, end)) = ranges.pop() {
        let next = edits.partition_point(|e| e.start < cursor);
        match edits.get(next) {
            Some(edit) if edit.start < end => {
                out.push_str(text.get(cursor..edit.start)?);
                ranges.push((edit.end, end));
                if let Some(with) = edit.with {
                    ranges.push(with);
                }
            }
            _ => out.push_str(text.get(cursor..end)?),
        }
    }
    Some(out)
}

/// A change [`resolve_duplicates`] makes: the text `start..end` dropped (a later occurrence of
/// a member, from the comma before it) or replaced by the text `with` (the first occurrence's
/// value, by the last occurrence's). Edits nest or are disjoint, never overlap otherwise.
struct Edit {
    start: usize,
    end: usize,
    with: Option<(usize, usize)>,
}

/// The [`Edit`]s that resolve `text`'s duplicate members, sorted by start; `None` when `text`
/// is no JSON the scan can follow.
fn duplicate_edits(text: &str) -> Option<Vec<Edit>> {
    use std::collections::HashMap;

    /// A member whose value is being read.
    struct Member<'a> {
        key: Cow<'a, str>,
        /// The comma before the member (`None` for the first).
        comma: Option<usize>,
        value: usize,
    }
    enum Frame<'a> {
        Object {
            id: usize,
            comma: Option<usize>,
            /// After a key: the member, `value` set at its `:`.
            member: Option<Member<'a>>,
        },
        Array,
    }
    /// The first occurrence of each (object, key): its value's range and the range of the
    /// last occurrence's value, once there is one.
    struct First {
        value: (usize, usize),
        last: Option<(usize, usize)>,
    }

    /// The scan's state.
    struct Scan<'a> {
        stack: Vec<Frame<'a>>,
        firsts: Vec<First>,
        index: HashMap<(usize, Cow<'a, str>), usize>,
        edits: Vec<Edit>,
    }
    impl Scan<'_> {
        /// A value of the innermost object ended at `end`: its member is complete.
        fn member_done(&mut self, end: usize) -> Option<()> {
            let Some(Frame::Object { id, member, .. }) = self.stack.last_mut() else { return Some(()) };
            let m = member.take()?;
            match self.index.entry((*id, m.key)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(self.firsts.len());
                    self.firsts.push(First { value: (m.value, end), last: None });
                }
                std::collections::hash_map::Entry::Occupied(slot) => {
                    self.firsts[*slot.get()].last = Some((m.value, end));
                    self.edits.push(Edit { start: m.comma?, end, with: None });
                }
            }
            Some(())
        }
    }

    let bytes = text.as_bytes();
    let mut scan = Scan { stack: Vec::new(), firsts: Vec::new(), index: HashMap::new(), edits: Vec::new() };
    let mut objects = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'[' => {
                if let Some(Frame::Object { member: Some(m), .. }) = scan.stack.last_mut() {
                    m.value = i;
                }
                scan.stack.push(if b == b'{' {
                    objects += 1;
                    Frame::Object { id: objects, comma: None, member: None }
                } else {
                    Frame::Array
                });
            }
            b'}' | b']' => {
                scan.stack.pop()?;
                scan.member_done(i + 1)?;
            }
            b',' => {
                if let Some(Frame::Object { comma, .. }) = scan.stack.last_mut() {
                    *comma = Some(i);
                }
            }
            b':' => {}
            b'"' => {
                let start = i;
                let mut escaped = false;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                if i >= bytes.len() {
                    return None;
                }
                match scan.stack.last_mut() {
                    // A key.
                    Some(Frame::Object { comma, member: member @ None, .. }) => {
                        let inner = text.get(start + 1..i)?;
                        let key = if escaped { Cow::Owned(serde_json::from_str::<String>(text.get(start..=i)?).ok()?) } else { Cow::Borrowed(inner) };
                        *member = Some(Member { key, comma: comma.take(), value: i + 1 });
                    }
                    Some(Frame::Object { member: Some(m), .. }) => {
                        m.value = start;
                        scan.member_done(i + 1)?;
                    }
                    _ => {}
                }
            }
            _ => {
                // A number, `true`, `false` or `null`.
                let start = i;
                while i + 1 < bytes.len() && !matches!(bytes[i + 1], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':' | b'"' | b'{' | b'[') {
                    i += 1;
                }
                if let Some(Frame::Object { member: Some(m), .. }) = scan.stack.last_mut() {
                    m.value = start;
                    scan.member_done(i + 1)?;
                }
            }
        }
        i += 1;
    }
    if !scan.stack.is_empty() {
        return None;
    }
    let mut edits = scan.edits;
    edits.extend(scan.firsts.into_iter().filter_map(|f| Some(Edit { start: f.value.0, end: f.value.1, with: Some(f.last?) })));
    edits.sort_unstable_by_key(|e| e.start);
    Some(edits)
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

/// Reads a member's value into its slot. A member given twice keeps its last value (as
/// `serde_json::Value` does); every occurrence must have the member's type.
pub fn read_member<'de, A: MapAccess<'de>, T: Deserialize<'de>>(map: &mut A, slot: &mut Option<T>, _name: &'static str) -> Result<(), A::Error> {
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

/// The object of `members` written back with the `tag` member first (its last occurrence, the
/// one that counts; earlier ones dropped); `None` without one.
fn tag_first(mut members: Vec<(String, Box<RawValue>)>, tag: &str) -> Option<String> {
    let at = members.iter().rposition(|(k, _)| k == tag)?;
    let last = members.remove(at);
    members.retain(|(k, _)| k != tag);
    members.insert(0, last);
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
            let mut value = map.next_value_seed(KeyedSeed::<T>(&key.0, PhantomData))?;
            // The key given again: its last value counts (each must have the arm's type), as
            // everywhere else; another key makes it no externally tagged value.
            while let Some(again) = map.next_key::<Str<'de>>()? {
                if again.0 != key.0 {
                    return Err(de::Error::invalid_length(2, &"an object with a single key"));
                }
                value = map.next_value_seed(KeyedSeed::<T>(&key.0, PhantomData))?;
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

/// The JSON path (`thread.turns[0].id`, empty at the top) of the value that ends before byte
/// `end` of the JSON `text` ([`error_offset`] of an error).
///
/// serde_json reports a type error at the last byte of the offending value and a missing
/// member at the end of its object, so scanning the text up to there gives the path of what
/// did not fit. This needs no second, path-tracking decode (which would compile every
/// type's deserializer twice).
pub fn path_at(text: &str, end: usize) -> String {
    enum Frame {
        Object { key: Option<String> },
        Array { index: usize },
    }
    let bytes = text.as_bytes();
    let end = end.min(bytes.len());
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
    match extra.iter().rev().find(|(k, _)| k == name) {
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
                    || matches!((shape.kind, self.kind), (JsonType::Integer, JsonType::Number) | (JsonType::Number, JsonType::Integer));
                same_type
                    && (how != Strictness::Schema
                        || serde_json::from_str::<serde_json::Value>(self.text).ok() == serde_json::from_str::<serde_json::Value>(v).ok())
            }),
            Match::Object { required, members, closed } => {
                if self.kind != JsonType::Object {
                    return false;
                }
                if how == Strictness::JsonType {
                    return true;
                }
                let present = required.iter().all(|r| self.member(r).is_some());
                let allowed = closed.map_or(true, |c| self.members.iter().all(|(k, _)| c.contains(&k.as_ref())));
                present
                    && allowed
                    && (how == Strictness::Members || members.iter().all(|(name, m)| match self.member(name) {
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
    fn decode_arm(arm: usize, deserializer: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> serde_json::Result<Self>;
}

/// Decodes an untagged union: the value is read once as JSON text (an object's or array's
/// members kept raw), its arm picked by [`Shape::pick`], and only that arm decoded from the
/// text. Decoding from inside the visitor lets serde_json place an error at the union's value,
/// and the path inside the arm is carried in the message ([`nested_error`]).
pub fn deserialize_untagged<'de, D: Deserializer<'de>, T: UntaggedUnion>(deserializer: D) -> Result<T, D::Error> {
    struct UntaggedVisitor<T>(PhantomData<T>);

    fn decode<T: UntaggedUnion, E: de::Error>(text: &str) -> Result<T, E> {
        let shape = Shape::read(text).map_err(E::custom)?;
        let Some(arm) = shape.pick(T::ARMS) else {
            return Err(E::custom(format_args!("no variant of {} matches this value", T::EXPECTING)));
        };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        T::decode_arm(arm, &mut deserializer)
            .and_then(|value| deserializer.end().map(|()| value))
            .map_err(|e| nested_error(text, e))
    }

    impl<'de, T: UntaggedUnion> Visitor<'de> for UntaggedVisitor<T> {
        type Value = T;

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

/// A union of plain JSON scalars (`RequestId`: a string or an integer), decoded from the
/// scalar without buffering.
pub trait ScalarUnion: Sized {
    const EXPECTING: &'static str;
    fn from_scalar(scalar: Scalar<'_>) -> Option<Self>;
}

/// One JSON scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Str(Cow<'a, str>),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
}

impl Scalar<'_> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_int<T: TryFrom<i64> + TryFrom<u64>>(&self) -> Option<T> {
        match self {
            Scalar::I64(n) => T::try_from(*n).ok(),
            Scalar::U64(n) => T::try_from(*n).ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::I64(n) => Some(*n as f64),
            Scalar::U64(n) => Some(*n as f64),
            Scalar::F64(n) => Some(*n),
            _ => None,
        }
    }

    fn unexpected(&self) -> de::Unexpected<'_> {
        match self {
            Scalar::Str(s) => de::Unexpected::Str(s),
            Scalar::I64(n) => de::Unexpected::Signed(*n),
            Scalar::U64(n) => de::Unexpected::Unsigned(*n),
            Scalar::F64(n) => de::Unexpected::Float(*n),
            Scalar::Bool(b) => de::Unexpected::Bool(*b),
        }
    }
}

pub fn deserialize_scalar_union<'de, D: Deserializer<'de>, T: ScalarUnion>(deserializer: D) -> Result<T, D::Error> {
    struct ScalarVisitor(&'static str);

    impl<'de> Visitor<'de> for ScalarVisitor {
        type Value = Scalar<'de>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Borrowed(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Owned(v.to_owned())))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Owned(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::I64(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::U64(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::F64(v))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Bool(v))
        }
    }

    let scalar = deserializer.deserialize_any(ScalarVisitor(T::EXPECTING))?;
    let unexpected = format!("{}", scalar.unexpected());
    T::from_scalar(scalar).ok_or_else(|| de::Error::custom(format_args!("invalid value: {unexpected}, expected {}", T::EXPECTING)))
}

/// How an error inside a value decoded from buffered text starts: ``in `path`: ``, the path
/// inside that value, which [`decode_raw`] joins to the path of the value.
const NESTED: &str = "in `";

/// An error of a decode of buffered `text` (a union's value), re-raised in the decoder that
/// read `text`, with the path inside `text` where it happened.
pub fn nested_error<E: de::Error>(text: &str, e: serde_json::Error) -> E {
    let (inner, message) = split_nested(&e);
    let path = join_path(&path_at(text, error_offset(text, &e)), &inner);
    if path.is_empty() {
        E::custom(message)
    } else {
        E::custom(format_args!("{NESTED}{path}`: {message}"))
    }
}

/// The path carried by a [`nested_error`] and the message without it or its position.
fn split_nested(e: &serde_json::Error) -> (String, String) {
    let mut message = e.to_string();
    if e.line() != 0 {
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_owned();
        }
    }
    if let Some(rest) = message.strip_prefix(NESTED) {
        if let Some((path, msg)) = rest.split_once("`: ") {
            return (path.to_owned(), msg.to_owned());
        }
    }
    (String::new(), message)
}

/// `outer` and `inner` paths joined (`a.b` + `[0].c` = `a.b[0].c`).
pub fn join_path(outer: &str, inner: &str) -> String {
    match (outer.is_empty(), inner.is_empty()) {
        (_, true) => outer.to_owned(),
        (true, false) => inner.to_owned(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        (false, false) => format!("{outer}.{inner}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Duplicates resolved as `Value` resolves them (last value, first place), in any object
    /// at any depth, keys compared unescaped, whitespace and number texts kept.
    #[test]
    fn resolve_duplicates_keeps_the_last_value_at_the_first_place() {
        let cases = [
            (r#"{"a":1,"b":2,"a":3}"#, Some(r#"{"a":3,"b":2}"#)),
            (r#"{"a":{"x":1,"x":2},"a":{"y":[1,{"z":1,"z":2}],"y":0}}"#, Some(r#"{"a":{"y":0}}"#)),
            (r#"[{"k":1,"k":2},{"k":3}]"#, Some(r#"[{"k":2},{"k":3}]"#)),
            (r#"{"a":1,"\u0061":2}"#, Some(r#"{"a":2}"#)),
            ("{ \"a\" : 1 ,\n \"b\" : \"}\" ,\n \"a\" : 1.50 }", Some("{ \"a\" : 1.50 ,\n \"b\" : \"}\"  }")),
            (r#"{"a":1,"b":2}"#, None),
            (r#"{"a":"#, None),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_duplicates(text).as_deref(), want, "{text}");
            if let Some(want) = want {
                assert_eq!(serde_json::from_str::<Value>(text).unwrap(), serde_json::from_str::<Value>(want).unwrap(), "{text}");
            }
        }
    }

    /// Any depth, in bounded stack and linear time: 1,000,000 levels, each object with its key
    /// twice, on a 256 KiB stack.
    #[test]
    fn resolve_duplicates_is_iterative() {
        let depth = 1_000_000;
        let text = format!("{}0{}", r#"{"a":0,"a":"#.repeat(depth), "}".repeat(depth));
        let resolved = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || resolve_duplicates(&text))
            .unwrap()
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(resolved, format!("{}0{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)));
    }

    /// Error positions of multi-line text are byte offsets of the text.
    #[test]
    fn error_offsets_count_lines() {
        let text = "{\"a\":[1,\n2],\n\"b\":x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        assert_eq!(path_at(text, error_offset(text, &e)), "b");
    }
}
