//! Externally tagged unions (`"never"` or `{"granular": {...}}`): dispatch on the string or
//! the single key.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Str;

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

/// An externally tagged union's `Deserialize`; out of line, as a tagged union's is.
#[inline(never)]
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

        #[inline]
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
