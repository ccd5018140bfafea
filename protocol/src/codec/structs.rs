//! Structs (JSON objects with known members), decoded member by member.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::{built, decoded, put, Str};

/// A struct (a JSON object with known members), decoded member by member from a map.
///
/// The generated `visit_members` matches each key as a borrowed string and reads its value
/// into a slot; unknown keys are skipped as `IgnoredAny` (or kept, for open objects). This
/// is what serde's derive does, without its per-struct field-identifier types and its
/// sequence form (a JSON array is never a struct here), which would be compiled for every
/// struct.
pub trait DecodeStruct: Sized {
    const EXPECTING: &'static str;
    /// Reads the members from `map` and puts the struct into the empty place `into` (built
    /// there, not returned and moved), as its last step: on an error, `into` is left empty.
    fn visit_members<'de, A: MapAccess<'de>>(map: A, into: &mut Option<Self>) -> Result<(), A::Error>;
}

/// A struct's [`Decode`](super::Decode): the visitor puts the struct into `into`, where a
/// deserializer that fails after the visitor returned leaves it for the caller to drop.
/// Inlined into its callers (the member reads, the list and map reads): out of line, the
/// struct value went back through more moves and calls.
#[inline]
pub fn decode_struct<'de, D: Deserializer<'de>, T: DecodeStruct>(
    deserializer: D,
    into: &mut Option<T>,
) -> Result<(), D::Error> {
    struct StructVisitor<'p, T>(&'p mut Option<T>);

    impl<'de, T: DecodeStruct> Visitor<'de> for StructVisitor<'_, T> {
        type Value = ();

        // Both inlined into the deserializer's copy, so that they are not one more function
        // for each struct.
        #[inline]
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        #[inline(always)]
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
            T::visit_members(map, self.0)
        }
    }

    deserializer.deserialize_map(StructVisitor(into))
}

/// A struct's `Deserialize`: [`decode_struct`] into a place of its own, dropped with a value
/// a deserializer left there when it failed after the visitor.
#[inline]
pub fn deserialize_struct<'de, D: Deserializer<'de>, T: DecodeStruct>(deserializer: D) -> Result<T, D::Error> {
    let mut place = None;
    let result = decode_struct(deserializer, &mut place);
    decoded(result, place)
}

/// A boxed struct (a tagged union's arm whose payload holds the union) reads its members as
/// the struct does.
impl<T: DecodeStruct> DecodeStruct for Box<T> {
    const EXPECTING: &'static str = T::EXPECTING;

    #[inline]
    fn visit_members<'de, A: MapAccess<'de>>(map: A, into: &mut Option<Self>) -> Result<(), A::Error> {
        let mut inner = None;
        let result = T::visit_members(map, &mut inner);
        put(into, Box::new(built(result, inner)?));
        Ok(())
    }
}

/// A tagged union's arm, read from the members after the tag by its struct's `visit_members`
/// itself: no deserializer runs after it, so the struct is never left in a place to be
/// dropped late, and the arm compiles no copy of a deserializer's map code.
#[inline]
pub fn decode_payload<'de, A: MapAccess<'de>, T: DecodeStruct>(map: A) -> Result<T, A::Error> {
    let mut place = None;
    let result = T::visit_members(map, &mut place);
    built(result, place)
}

/// The next member name of a struct, borrowed from the input when it has no escapes.
pub fn next_key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_key::<Str<'de>>()?.map(|key| key.0))
}

/// Skips the value of a member the struct does not know. Out of line: a call in each struct's
/// decoder, not one more copy of the code that skips a value.
#[inline(never)]
pub fn skip_member<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<de::IgnoredAny>().map(|_| ())
}
