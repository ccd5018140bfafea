//! String enums, through one shared reader of their string.

use super::reader::{Reader, Result};

/// A string enum; an unknown value is kept in its catch-all variant.
pub trait StringEnum: Sized {
    const EXPECTING: &'static str;
    fn from_wire(value: &str) -> Option<Self>;
    fn unrecognized(value: String) -> Self;
}

/// A string enum's [`Decode`](super::Decode).
#[inline]
pub fn decode_string_enum<T: StringEnum>(reader: &mut Reader<'_>) -> Result<T> {
    let value = reader.string_for(T::EXPECTING)?;
    Ok(match T::from_wire(&value) {
        Some(known) => known,
        None => T::unrecognized(value.into_owned()),
    })
}
