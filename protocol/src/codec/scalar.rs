//! Unions of plain JSON scalars (`RequestId`: a string or an integer), decoded from the
//! scalar without buffering.

use std::borrow::Cow;

use serde::de::{self, Error as _};

use super::reader::{Number, Reader, Result};

/// A union of plain JSON scalars (`RequestId`: a string or an integer), decoded from the
/// scalar without buffering.
pub trait ScalarUnion: Sized {
    const EXPECTING: &'static str;
    /// The arm `scalar` fits, in the schema's order; `None` if none does.
    fn from_scalar(scalar: &Scalar<'_>) -> Option<Self>;
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

/// A scalar union's [`Decode`](super::Decode).
#[inline(never)]
pub fn decode_scalar_union<T: ScalarUnion>(reader: &mut Reader<'_>) -> Result<T> {
    let scalar = match reader.peek() {
        Some(b'"') => Scalar::Str(reader.string_for(T::EXPECTING)?),
        Some(b't' | b'f') => Scalar::Bool(reader.bool_for(T::EXPECTING)?),
        Some(b'-' | b'0'..=b'9') => match reader.number()? {
            Number::U64(n) => Scalar::U64(n),
            Number::I64(n) => Scalar::I64(n),
            Number::F64(n) => Scalar::F64(n),
        },
        _ => return Err(reader.invalid_type(T::EXPECTING)),
    };
    // The error's text is written only for a value no arm takes.
    T::from_scalar(&scalar).ok_or_else(|| {
        serde_json::Error::custom(format_args!("invalid value: {}, expected {}", scalar.unexpected(), T::EXPECTING))
    })
}
