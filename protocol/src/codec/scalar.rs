//! Unions of plain JSON scalars (`RequestId`: a string or an integer), decoded from the
//! scalar without buffering.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};

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

pub fn deserialize_scalar_union<'de, D: Deserializer<'de>, T: ScalarUnion>(deserializer: D) -> Result<T, D::Error> {
    struct ScalarVisitor(&'static str);

    impl<'de> Visitor<'de> for ScalarVisitor {
        type Value = Scalar<'de>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Borrowed(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Owned(v.to_owned())))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Str(Cow::Owned(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::I64(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::U64(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
            Ok(Scalar::F64(v))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
            Ok(Scalar::Bool(v))
        }
    }

    let scalar = deserializer.deserialize_any(ScalarVisitor(T::EXPECTING))?;
    // The error's text is written only for a value no arm takes.
    T::from_scalar(&scalar).ok_or_else(|| {
        de::Error::custom(format_args!("invalid value: {}, expected {}", scalar.unexpected(), T::EXPECTING))
    })
}
