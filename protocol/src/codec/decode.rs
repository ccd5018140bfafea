//! [`Decode`]: a type read from the [`Reader`], and its impls for what generated members hold
//! besides generated types.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Error as _, Unexpected};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::reader::{Number, Reader, Result};

/// A type read from JSON text by the one [`Reader`].
///
/// Implemented for every type a generated member can have: the generated types (by their
/// macros), the integers, `f32`, `f64`, `bool`, `String`, `Value`, `()`, and `Option`, `Vec`,
/// `BTreeMap<String, _>` and `Box` of those.
pub trait Decode: Sized {
    fn decode(reader: &mut Reader<'_>) -> Result<Self>;
}

/// A type's `Deserialize`: its JSON text buffered (exact from serde_json's `from_str`,
/// `from_slice` and `from_reader`; from a `Value`, its numbers as the `Value` holds them), then
/// read by the type's [`Decode`]. An error names the path inside the value. Generic over the
/// deserializer only in [`buffer`] and [`failed`]: what is compiled for each type, in every
/// crate that decodes it, is the two calls and their two `match`es.
#[inline]
pub fn deserialize_via_text<'de, D: Deserializer<'de>, T: Decode>(deserializer: D) -> std::result::Result<T, D::Error> {
    let text = buffer(deserializer)?;
    let mut reader = Reader::new(text.get());
    match T::decode(&mut reader) {
        Ok(value) => match reader.end() {
            Ok(()) => Ok(value),
            Err(e) => Err(failed(text.get(), reader.offset(), e)),
        },
        Err(e) => Err(failed(text.get(), reader.offset(), e)),
    }
}

/// The JSON text of the value a deserializer holds.
#[inline(never)]
pub fn buffer<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Box<RawValue>, D::Error> {
    Box::<RawValue>::deserialize(deserializer)
}

/// [`deserialize_via_text`]'s error: given its path, which is also left for a caller that
/// reads the buffered type's path ([`nested`](super::trail)).
#[inline(never)]
fn failed<E: serde::de::Error>(text: &str, at: usize, error: serde_json::Error) -> E {
    E::custom(super::nested_error_at(text, at, error))
}

/// A member a struct with open members (`additionalProperties`) does not declare: kept (unless
/// it is the tag of the union whose arm the struct is).
#[inline(never)]
pub fn extra_member<T: Decode>(
    reader: &mut Reader<'_>,
    key: Cow<'_, str>,
    extra: &mut BTreeMap<String, T>,
) -> Result<()> {
    if reader.is_tag(&key)? {
        return Ok(());
    }
    let value = T::decode(reader)?;
    extra.insert(key.into_owned(), value);
    Ok(())
}

/// `null` is `None`; any other value is `Some`.
impl<T: Decode> Decode for Option<T> {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        if r.null()? {
            return Ok(None);
        }
        T::decode(r).map(Some)
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let mut array = r.begin_array("a sequence")?;
        let mut items = Vec::new();
        while r.next_item(&mut array)? {
            items.push(T::decode(r)?);
        }
        Ok(items)
    }
}

/// A key given twice keeps its last value.
impl<T: Decode> Decode for BTreeMap<String, T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        read_entries(r)
    }
}

/// The members of an object, each inserted as it is read (a key given again replaces its value).
fn read_entries<M: Default + Extend<(String, T)>, T: Decode>(r: &mut Reader<'_>) -> Result<M> {
    let mut object = r.begin_object("a map")?;
    let mut map = M::default();
    while let Some(key) = r.next_key(&mut object)? {
        let value = T::decode(r)?;
        map.extend(std::iter::once((key.into_owned(), value)));
    }
    Ok(map)
}

impl<T: Decode> Decode for Box<T> {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        T::decode(r).map(Box::new)
    }
}

impl Decode for String {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        r.string_for("a string").map(|s| s.into_owned())
    }
}

impl Decode for bool {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        r.bool_for("a boolean")
    }
}

/// The `params` of a method without params: `null` (what the caller passes for an absent
/// member) or an empty object, which codex reads as no params too (an adjacently tagged unit
/// variant in its serde types): `{}` is answered, `{"x": 1}` refused with "invalid type: map,
/// expected unit", as this refuses it.
pub fn no_params(r: &mut Reader<'_>) -> Result<()> {
    if r.null()? {
        return Ok(());
    }
    if r.peek() == Some(b'{') {
        let mark = r.mark();
        let mut object = r.begin_object("unit")?;
        if r.next_key(&mut object)?.is_none() {
            return Ok(());
        }
        r.rewind(mark);
    }
    Err(r.invalid_type("unit"))
}

impl Decode for () {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        if r.null()? {
            return Ok(());
        }
        Err(r.invalid_type("unit"))
    }
}

/// The integers, as serde's primitive visitors take them: any JSON integer in range; a float
/// is the wrong type.
macro_rules! integers {
    ($($t:ident)*) => {$(
        impl Decode for $t {
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self> {
                integer(r, stringify!($t)).and_then(|n| {
                    let value = match n {
                        Number::U64(u) => $t::try_from(u).ok(),
                        Number::I64(i) => $t::try_from(i).ok(),
                        Number::F64(_) => unreachable!("integer() gives integers"),
                    };
                    value.ok_or_else(|| r.invalid_value(n.unexpected(), stringify!($t)))
                })
            }
        }
    )*};
}

integers!(i8 i16 i32 i64 u8 u16 u32 u64);

/// An integer where `expected` belongs.
#[inline(never)]
fn integer(r: &mut Reader<'_>, expected: &str) -> Result<Number> {
    match r.number_for(expected)? {
        Number::F64(f) => Err(serde_json::Error::invalid_type(Unexpected::Float(f), &expected)),
        n => Ok(n),
    }
}

impl Decode for f64 {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        Ok(match r.number_for("f64")? {
            Number::U64(u) => u as f64,
            Number::I64(i) => i as f64,
            Number::F64(f) => f,
        })
    }
}

impl Decode for f32 {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        f64::decode(r).map(|f| f as f32)
    }
}

/// Any JSON value, as serde_json's `Value` reads it (a key given twice keeps its last value).
impl Decode for Value {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        Ok(match r.peek() {
            Some(b'{') => Value::Object(Map::decode(r)?),
            Some(b'[') => Value::Array(Vec::decode(r)?),
            Some(b'"') => Value::String(String::decode(r)?),
            Some(b't' | b'f') => Value::Bool(bool::decode(r)?),
            Some(b'n') => {
                r.null()?;
                Value::Null
            }
            Some(b'-' | b'0'..=b'9') => match r.number()? {
                Number::U64(u) => Value::from(u),
                Number::I64(i) => Value::from(i),
                Number::F64(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            },
            _ => return Err(r.invalid_type("any valid JSON value")),
        })
    }
}

impl Decode for Map<String, Value> {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        read_entries(r)
    }
}

impl Decode for Box<RawValue> {
    fn decode(r: &mut Reader<'_>) -> Result<Self> {
        r.raw_box()
    }
}

/// A JSON array of exactly as many items as the tuple has, as serde reads a tuple.
macro_rules! tuples {
    ($(($len:literal: $($t:ident $n:literal),+))*) => {$(
        impl<$($t: Decode),+> Decode for ($($t,)+) {
            fn decode(r: &mut Reader<'_>) -> Result<Self> {
                const EXPECTED: &str = concat!("a tuple of size ", $len);
                let mut array = r.begin_array(EXPECTED)?;
                let tuple = ($(
                    match r.next_item(&mut array)? {
                        true => $t::decode(r)?,
                        false => return Err(serde_json::Error::invalid_length($n, &EXPECTED)),
                    },
                )+);
                match r.next_item(&mut array)? {
                    false => Ok(tuple),
                    true => Err(r.syntax("trailing characters")),
                }
            }
        }
    )*};
}

tuples! {
    (1: T0 0)
    (2: T0 0, T1 1)
    (3: T0 0, T1 1, T2 2)
    (4: T0 0, T1 1, T2 2, T3 3)
    (5: T0 0, T1 1, T2 2, T3 3, T4 4)
    (6: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5)
    (7: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6)
    (8: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7)
    (9: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8)
    (10: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9)
    (11: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10)
    (12: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11)
    (13: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12)
    (14: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13)
    (15: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14)
    (16: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15)
}
