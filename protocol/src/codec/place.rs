//! Decoding into a place the caller owns: [`Decode`].

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// A member's type, decoded into a place its reader owns.
///
/// `into` is empty on entry. A struct's or a tagged union's visitor puts the value there
/// itself, so a deserializer that fails after the visitor returned leaves it in a place the
/// caller drops anyway: the members of the struct being read, the list or map being read, or
/// the holder of a type's `Deserialize`. No reader compiles a drop of the value for that path,
/// and no value is leaked on it, whatever the deserializer. Every other type is decoded by
/// value ([`by_value`]) and put there.
///
/// Implemented for every type a generated member can have: the generated types (by their
/// macros), the integers, `f32`, `f64`, `bool`, `String`, `Value`, `()`, tuples, and `Option`,
/// `Vec`, `BTreeMap<String, _>` and `Box` of those.
pub trait Decode<'de>: Sized {
    fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error>;
}

/// Puts `value` into the empty place `into`.
#[inline(always)]
pub fn put<T>(into: &mut Option<T>, value: T) {
    debug_assert!(into.is_none(), "a place is filled once");
    // The place is empty: the `None` given back has nothing to drop, and forgetting it
    // compiles no drop code of `T` into the caller (an assignment would).
    std::mem::forget(into.replace(value));
}

/// [`Decode`] for a type decoded by value.
#[inline]
pub fn by_value<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
    into: &mut Option<T>,
) -> Result<(), D::Error> {
    put(into, T::deserialize(deserializer)?);
    Ok(())
}

/// The value that `result`'s decode put into `place`, for a caller that holds the place itself
/// (a type's `Deserialize`). On an error the place is dropped, with a value a deserializer
/// left there after the visitor.
#[inline(always)]
pub fn decoded<T, E: de::Error>(result: Result<(), E>, place: Option<T>) -> Result<T, E> {
    result?;
    place.ok_or_else(not_decoded)
}

/// The value a struct's `visit_members` put into `place`, which its error left empty (the
/// struct is put as the last step): the empty place is forgotten, not dropped, so the caller
/// compiles no drop code of `T`.
#[inline(always)]
pub fn built<T, E: de::Error>(result: Result<(), E>, place: Option<T>) -> Result<T, E> {
    match result {
        Ok(()) => place.ok_or_else(not_decoded),
        Err(e) => {
            debug_assert!(place.is_none(), "visit_members puts the struct as its last step");
            std::mem::forget(place);
            Err(e)
        }
    }
}

/// A deserializer returned `Ok` without running the visitor that puts the value (none can:
/// the visitor's `()` is the only way a generic deserializer has to make its value).
#[cold]
#[inline(never)]
fn not_decoded<E: de::Error>() -> E {
    E::custom("the deserializer returned without decoding the value")
}

/// The seed that decodes a `T` into its place.
pub struct Place<'p, T>(pub &'p mut Option<T>);

impl<'de, T: Decode<'de>> DeserializeSeed<'de> for Place<'_, T> {
    type Value = ();

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::decode(deserializer, self.0)
    }
}

/// The seed that decodes a `T` that may be `null` into its place, which `null` leaves empty.
pub struct Nullable<'p, T>(pub &'p mut Option<T>);

impl<'de, T: Decode<'de>> DeserializeSeed<'de> for Nullable<'_, T> {
    type Value = ();

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(OptionVisitor(self.0))
    }
}

struct OptionVisitor<'p, T>(&'p mut Option<T>);

impl<'de, T: Decode<'de>> Visitor<'de> for OptionVisitor<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("option")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::decode(deserializer, self.0)
    }
}

crate::wire_macros::decode_by_value!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, String, Value, ());

macro_rules! tuples {
    ($(($($t:ident),+))*) => {
        $(
            impl<'de, $($t: Deserialize<'de>),+> Decode<'de> for ($($t,)+) {
                #[inline]
                fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error> {
                    by_value(deserializer, into)
                }
            }
        )*
    };
}

tuples! {
    (T0) (T0, T1) (T0, T1, T2) (T0, T1, T2, T3) (T0, T1, T2, T3, T4) (T0, T1, T2, T3, T4, T5)
    (T0, T1, T2, T3, T4, T5, T6) (T0, T1, T2, T3, T4, T5, T6, T7)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8) (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10) (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14)
    (T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15)
}

/// `null` is `None`; any other value is `Some`, decoded in the place inside it.
impl<'de, T: Decode<'de>> Decode<'de> for Option<T> {
    #[inline]
    fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error> {
        Nullable(into.get_or_insert(None)).deserialize(deserializer)
    }
}

/// Each item is decoded in a place of its own and pushed, also when the deserializer failed
/// after it: the list, in the caller's place, drops it.
impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
    fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error> {
        struct VecVisitor<'p, T>(&'p mut Option<Vec<T>>);

        impl<'de, T: Decode<'de>> Visitor<'de> for VecVisitor<'_, T> {
            type Value = ();

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                let items = self.0.get_or_insert_with(|| Vec::with_capacity(cautious::<T>(seq.size_hint())));
                loop {
                    let mut item = None;
                    let read = seq.next_element_seed(Place(&mut item));
                    if let Some(value) = item.take() {
                        items.push(value);
                    }
                    if read?.is_none() {
                        return Ok(());
                    }
                }
            }
        }

        deserializer.deserialize_seq(VecVisitor(into))
    }
}

/// A list's capacity from the deserializer's hint, bounded (as serde's own `Vec` bounds it) so
/// that a hint is not an allocation the input never fills.
fn cautious<T>(hint: Option<usize>) -> usize {
    const MAX_BYTES: usize = 1024 * 1024;
    hint.unwrap_or(0).min(MAX_BYTES / std::mem::size_of::<T>().max(1))
}

/// Each value is decoded in a place of its own and inserted, also when the deserializer
/// failed after it (the map, in the caller's place, drops it); a key given twice keeps its
/// last value.
impl<'de, T: Decode<'de>> Decode<'de> for BTreeMap<String, T> {
    fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error> {
        struct MapVisitor<'p, T>(&'p mut Option<BTreeMap<String, T>>);

        impl<'de, T: Decode<'de>> Visitor<'de> for MapVisitor<'_, T> {
            type Value = ();

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                let entries = self.0.get_or_insert_with(BTreeMap::new);
                while let Some(key) = map.next_key::<String>()? {
                    let mut value = None;
                    let read = map.next_value_seed(Place(&mut value));
                    if let Some(value) = value.take() {
                        entries.insert(key, value);
                    }
                    read?;
                }
                Ok(())
            }
        }

        deserializer.deserialize_map(MapVisitor(into))
    }
}

/// The value is decoded in a place of its own, then boxed (also when the deserializer failed
/// after it: the box, in the caller's place, drops it).
impl<'de, T: Decode<'de>> Decode<'de> for Box<T> {
    fn decode<D: Deserializer<'de>>(deserializer: D, into: &mut Option<Self>) -> Result<(), D::Error> {
        let mut inner = None;
        let read = T::decode(deserializer, &mut inner);
        if let Some(value) = inner.take() {
            put(into, Box::new(value));
        }
        read
    }
}
