//! Internally tagged unions (`{"type": "userMessage", ...}`): the tag read first and the arm
//! decoded from the same map; a tag that comes later makes the decoder buffer the object.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::duplicates::DUPLICATE_MEMBERS;
use super::paths::nested_error;
use super::trail;
use super::{decoded, put, Str};

/// A union of objects told apart by a tag member.
pub trait TaggedUnion: Sized {
    /// The tag member's name.
    const TAG: &'static str;
    const EXPECTING: &'static str;
    /// Decodes the arm for `tag` from the object's other members; an unknown tag keeps them
    /// with [`unrecognized_arm`].
    fn deserialize_arm<'de, A: MapAccess<'de>>(tag: &str, payload: A) -> Result<Self, A::Error>;
}

/// The whole object of an unknown tagged arm: its other members plus the tag.
pub fn unrecognized_arm<'de, A: MapAccess<'de>>(
    tag_name: &str,
    tag: &str,
    payload: A,
) -> Result<Map<String, Value>, A::Error> {
    let mut object = Map::deserialize(de::value::MapAccessDeserializer::new(payload))?;
    object.insert(tag_name.to_owned(), Value::String(tag.to_owned()));
    Ok(object)
}

/// A tagged union's `Deserialize`: [`decode_tagged`] into a place of its own, dropped with a
/// value a deserializer left there when it failed after the visitor.
pub fn deserialize_tagged<'de, D: Deserializer<'de>, T: TaggedUnion>(deserializer: D) -> Result<T, D::Error> {
    let mut place = None;
    let result = decode_tagged(deserializer, &mut place);
    decoded(result, place)
}

/// A tagged union's [`Decode`](super::Decode): the visitor puts the union into `into`, as a
/// struct's does ([`decode_struct`](super::decode_struct)). Out of line: a caller holds a
/// call, not one more copy of the deserializer's map code (inlined, it decoded no faster).
#[inline(never)]
pub fn decode_tagged<'de, D: Deserializer<'de>, T: TaggedUnion>(
    deserializer: D,
    into: &mut Option<T>,
) -> Result<(), D::Error> {
    struct TaggedVisitor<'p, T>(&'p mut Option<T>);

    impl<'de, T: TaggedUnion> Visitor<'de> for TaggedVisitor<'_, T> {
        type Value = ();

        #[inline]
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let Some(first) = map.next_key::<Str<'de>>()? else {
                return Err(de::Error::missing_field(T::TAG));
            };
            if first.0 == T::TAG {
                let tag = map.next_value::<Str<'de>>()?;
                let guard = TagGuard { map, name: T::TAG, tag: &tag.0 };
                put(self.0, T::deserialize_arm(&tag.0, guard)?);
                return Ok(());
            }
            // The tag is not first: keep the members as raw JSON, write them back with the
            // tag first and decode that through the path above, into the same place.
            // (Decoding the buffered members with any other deserializer would compile every
            // arm's deserializer again.)
            let text = buffer_tag_first(first, &mut map, T::TAG)?;
            trail::clear_nested();
            decode_tagged(&mut serde_json::Deserializer::from_str(&text), self.0).map_err(|e| nested_error(&text, e))
        }
    }

    deserializer.deserialize_map(TaggedVisitor(into))
}

/// The rest of an object whose first member (`first`) is not the tag, written back as text
/// with the tag first ([`tag_first`]). Generic over the map only, not over the union.
#[inline(never)]
fn buffer_tag_first<'de, A: MapAccess<'de>>(
    first: Str<'de>,
    map: &mut A,
    tag: &'static str,
) -> Result<String, A::Error> {
    let mut members = vec![(first.0.into_owned(), map.next_value::<Box<RawValue>>()?)];
    while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
        members.push((k, v));
    }
    tag_first(members, tag).ok_or_else(|| de::Error::missing_field(tag))
}

/// The members after a tagged union's tag, as its arm reads them. A second tag member is
/// type-checked and must repeat the tag; one with another value would change the arm after it
/// was chosen, which a one-pass decode cannot do: it is an error
/// [`decode_raw`](super::decode_raw) answers by decoding the text again with duplicate members
/// resolved (the last one counts).
struct TagGuard<'t, A> {
    map: A,
    name: &'static str,
    tag: &'t str,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TagGuard<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Str(key)) = self.map.next_key::<Str<'de>>()? else { return Ok(None) };
            if key == self.name {
                if self.map.next_value::<Str<'de>>()?.0 != self.tag {
                    trail::note_duplicate(self.name);
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

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;
    use serde_json::value::RawValue;

    use crate::wire_macros::{wire_struct, wire_tagged};

    // A recursive union: the arm whose payload holds the union is boxed (`Neg`), and is read
    // by `Box<NegExpr>`'s `visit_members`, which no generated type of the vendored release
    // has.
    wire_struct! {
        #[derive(Debug, Clone, PartialEq)]
        pub struct LitExpr {
            pub value: i64 = "value" (required),
        }
    }
    wire_struct! {
        #[derive(Debug, Clone, PartialEq)]
        pub struct NegExpr {
            pub operand: Expr = "operand" (required),
        }
    }
    wire_tagged! {
        #[derive(Debug, Clone, PartialEq)]
        pub enum Expr (tag = "type") {
            Lit(LitExpr) = "lit",
            Neg(Box<NegExpr>) = "neg",
        }
    }

    fn neg(operand: Expr) -> Expr {
        Expr::Neg(Box::new(NegExpr { operand }))
    }

    #[test]
    fn a_boxed_arm_decodes_and_round_trips() {
        let expected = neg(neg(Expr::Lit(LitExpr { value: 3 })));
        let wire = json!({"type": "neg", "operand": {"type": "neg", "operand": {"type": "lit", "value": 3}}});
        // The tag first (read in one pass), and the tag last (buffered, then read the same way).
        let tag_last = r#"{"operand": {"operand": {"value": 3, "type": "lit"}, "type": "neg"}, "type": "neg"}"#;
        for text in [wire.to_string().as_str(), tag_last] {
            let decoded: Expr = serde_json::from_str(text).unwrap();
            assert_eq!(decoded, expected, "{text}");
            assert_eq!(serde_json::to_value(&decoded).unwrap(), wire, "{text}");
        }
    }

    #[test]
    fn a_boxed_arm_reports_its_members_errors() {
        for (text, path, message) in [
            (r#"{"type":"neg","operand":{"type":"lit","value":"3"}}"#, "operand.value", "invalid type: string \"3\""),
            (r#"{"type":"neg"}"#, "", "missing field `operand`"),
            (r#"{"type":"neg","operand":{"type":"neg","operand":7}}"#, "operand.operand", "invalid type: integer `7`"),
            (r#"{"operand":{"operand":[],"type":"neg"},"type":"neg"}"#, "operand.operand", "invalid type: sequence"),
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
            let e = super::super::decode_raw(Some(&raw), |d| Expr::deserialize(d)).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
            assert!(e.source.to_string().starts_with(message), "{text}: {e}");
        }
    }
}
