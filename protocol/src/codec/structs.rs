//! Structs (JSON objects with known members), decoded member by member.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::Str;

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

/// A struct's `Deserialize`. Inlined into its callers (a member's read, the `Option` and `Vec`
/// visitors, the method table's params decode), unlike the unions' and the string enums':
/// out of line it made the release build a little smaller but the typed decode measurably
/// slower, since the struct value then went back through more moves and calls (the figures:
/// `docs/build-cost.md`).
///
/// The visitor hands the value to the deserializer as `ManuallyDrop<T>`: serde_json drops a
/// visitor's value when the object's end is missing after it, so with a plain `T` each
/// struct's drop code (and that of every type inside it) would be compiled again into the
/// deserializer's copy of `deserialize_map`, in another codegen unit. A deserializer that
/// failed after the visitor returned would leak the value instead of dropping it; serde_json's
/// (from text or from a `Value`) cannot, since the visitor reads up to the object's end.
#[inline]
pub fn deserialize_struct<'de, D: Deserializer<'de>, T: DecodeStruct>(deserializer: D) -> Result<T, D::Error> {
    struct StructVisitor<T>(PhantomData<T>);

    impl<'de, T: DecodeStruct> Visitor<'de> for StructVisitor<T> {
        type Value = ManuallyDrop<T>;

        // Both inlined into the deserializer's copy, so that they are not one more function
        // for each struct.
        #[inline]
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }

        #[inline(always)]
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ManuallyDrop<T>, A::Error> {
            T::visit_members(map).map(ManuallyDrop::new)
        }
    }

    deserializer.deserialize_map(StructVisitor(PhantomData)).map(ManuallyDrop::into_inner)
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
