//! Structs (JSON objects with known members), decoded member by member.

use super::reader::{Object, Reader, Result};

/// A struct (a JSON object with known members), decoded member by member.
///
/// The generated `visit_members` matches each key as a borrowed string and reads its value
/// into a slot; unknown keys are skipped (or kept, for open objects). No field-identifier
/// type, no sequence form (a JSON array is never a struct here), which serde's derive compiles
/// for every struct.
pub trait DecodeStruct: Sized {
    const EXPECTING: &'static str;
    /// Reads the members of `object` (entered, its members read up to here) to its end.
    fn visit_members(reader: &mut Reader<'_>, object: Object) -> Result<Self>;
}

/// A struct's [`Decode`](super::Decode): the object entered, then its members.
#[inline]
pub fn decode_struct<T: DecodeStruct>(reader: &mut Reader<'_>) -> Result<T> {
    let object = reader.begin_object(T::EXPECTING)?;
    T::visit_members(reader, object)
}

/// A boxed struct (a tagged union's arm whose payload holds the union) reads its members as
/// the struct does.
impl<T: DecodeStruct> DecodeStruct for Box<T> {
    const EXPECTING: &'static str = T::EXPECTING;

    #[inline]
    fn visit_members(reader: &mut Reader<'_>, object: Object) -> Result<Self> {
        T::visit_members(reader, object).map(Box::new)
    }
}
