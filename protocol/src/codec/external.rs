//! Externally tagged unions (`"never"` or `{"granular": {...}}`): a plain string, or an object
//! whose one key names the variant.

use serde::de::Error as _;
use serde_json::{Map, Value};

use super::reader::{Reader, Result};
use super::Decode;

/// A union written as a plain string or as an object with one key that names the variant.
pub trait ExternalUnion: Sized {
    const EXPECTING: &'static str;
    /// The variant written as `value` (a string); an unknown one is kept as it came.
    fn from_unit(value: &str) -> Self;
    /// The variant keyed `key`, its payload read from the reader; an unknown key is kept with
    /// its value ([`unrecognized_keyed`]).
    fn decode_keyed(key: &str, reader: &mut Reader<'_>) -> Result<Self>;
    fn unrecognized(value: Value) -> Self;
}

/// An unknown keyed variant, kept as the object it came as.
pub fn unrecognized_keyed(key: &str, reader: &mut Reader<'_>) -> Result<Value> {
    let mut object = Map::new();
    object.insert(key.to_owned(), Value::decode(reader)?);
    Ok(Value::Object(object))
}

/// An externally tagged union's [`Decode`]. Out of line: a caller holds a call.
#[inline(never)]
pub fn decode_external<T: ExternalUnion>(reader: &mut Reader<'_>) -> Result<T> {
    if reader.peek() == Some(b'"') {
        return Ok(T::from_unit(&reader.string_for(T::EXPECTING)?));
    }
    let mut object = reader.begin_object(T::EXPECTING)?;
    let Some(key) = reader.next_key(&mut object)? else {
        return Ok(T::unrecognized(Value::Object(Map::new())));
    };
    let mut value = T::decode_keyed(&key, reader)?;
    // The key given again: its last value counts (each must have the arm's type), as
    // everywhere else; another key makes it no externally tagged value.
    while let Some(again) = reader.next_key(&mut object)? {
        if again != key {
            return Err(serde_json::Error::invalid_length(2, &"an object with a single key"));
        }
        value = T::decode_keyed(&key, reader)?;
    }
    Ok(value)
}
