//! String enums, through one shared visitor.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};

/// A string enum; an unknown value is kept in its catch-all variant.
pub trait StringEnum: Sized {
    const EXPECTING: &'static str;
    fn from_wire(value: &str) -> Option<Self>;
    fn unrecognized(value: String) -> Self;
}

/// A string enum's `Deserialize`; out of line: a caller holds a call, not one more copy of
/// the deserializer's string code (`docs/build-cost.md`).
#[inline(never)]
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
