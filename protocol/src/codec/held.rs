//! A decoded value held by a decoder that is generic over many types, dropped by code compiled
//! with the value's type rather than where it is held.

use std::mem::ManuallyDrop;

use serde::de;

/// Drops a value in one function per type, [`discard`](Discard::discard).
///
/// A provided trait method is compiled with the type it is called for (in the codegen unit
/// of that type's module, like [`ReadMember`](crate::wire_macros::ReadMember)'s reads), where
/// the type's drop code is compiled anyway; a decoder that holds the value calls it rather than
/// compiling that drop code (and that of every type inside it) again.
pub trait Discard: Sized {
    #[inline(never)]
    fn discard(slot: &mut Option<Self>) {
        *slot = None;
    }
}

impl<T> Discard for T {}

/// A value a decoder holds: filled by [`new`](Self::new) or [`put`](Self::put), taken by
/// [`take`](Self::take), and dropped, if it is still held, by [`Discard::discard`] (also on
/// an error path or when a panic unwinds through the holder).
///
/// The struct and tagged union visitors write into one (their serde `Value` is `()`), so the
/// deserializer's copy of `deserialize_map` never holds a decoded value, and a deserializer
/// that fails after the visitor returned leaves it here, where it is dropped.
pub struct Held<T>(ManuallyDrop<Option<T>>);

impl<T> Held<T> {
    #[inline]
    pub fn empty() -> Self {
        Held(ManuallyDrop::new(None))
    }

    #[inline]
    pub fn new(value: T) -> Self {
        Held(ManuallyDrop::new(Some(value)))
    }

    /// Holds `value`. Called once, on an empty holder (a visitor is consumed by its visit).
    #[inline(always)]
    pub fn put(&mut self, value: T) {
        // The holder is empty: the `None` given back has nothing to drop.
        std::mem::forget(self.0.replace(value));
    }

    /// The value, or an error when a deserializer returned `Ok` without running the visitor
    /// that puts it (none does: the visitor's `()` is the only way to make its value).
    #[inline(always)]
    pub fn take<E: de::Error>(mut self) -> Result<T, E> {
        match self.0.take() {
            Some(value) => Ok(value),
            None => Err(not_decoded()),
        }
    }

    /// The value held since [`new`](Self::new).
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        match &mut *self.0 {
            Some(value) => value,
            None => made_empty(),
        }
    }

    /// The value held since [`new`](Self::new).
    #[inline]
    pub fn into_inner(mut self) -> T {
        match self.0.take() {
            Some(value) => value,
            None => made_empty(),
        }
    }
}

impl<T> Drop for Held<T> {
    #[inline]
    fn drop(&mut self) {
        if self.0.is_some() {
            T::discard(&mut self.0);
        }
    }
}

#[cold]
#[inline(never)]
fn made_empty() -> ! {
    unreachable!("`Held::get_mut` and `Held::into_inner` are only called on a holder made by `Held::new`")
}

#[cold]
#[inline(never)]
fn not_decoded<E: de::Error>() -> E {
    E::custom("the deserializer returned without decoding the value")
}
