//! Where a decoder generic over many types holds a decoded value, so that no error path leaks
//! it and its drop code is not compiled again in every decoder that holds one: a visitor's
//! [`Slot`], and the [`Held`] message of `decode_raw` and the notification table.

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

/// Drops `value` by [`Discard::discard`]: for a decoder that has a value it must drop on a rare
/// path, without compiling the value's drop code there.
#[inline]
pub fn discard<T>(value: T) {
    // `discard` leaves `None`, which has nothing to drop: `ManuallyDrop` compiles no drop
    // code of `T` here.
    let mut slot = ManuallyDrop::new(Some(value));
    T::discard(&mut slot);
}

/// A value a decoder holds: made by [`new`](Self::new), taken by
/// [`into_inner`](Self::into_inner), and dropped, if it is still held (text after it, a panic
/// unwinding through the holder), by [`Discard::discard`]. For the few types whose drop code
/// is the largest: the message enums (`decode_raw`, the notification table), whose drop code
/// holds that of every params type.
pub struct Held<T>(ManuallyDrop<Option<T>>);

impl<T> Held<T> {
    #[inline]
    pub fn new(value: T) -> Self {
        Held(ManuallyDrop::new(Some(value)))
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

/// A slot a visitor writes its value into (its serde `Value` is `()`): the deserializer's copy
/// of `deserialize_map` never holds a decoded value, so it compiles no drop code of its type,
/// and a deserializer that fails after the visitor returned leaves the value in the slot, which
/// its owner drops.
pub struct Slot<T>(Option<T>);

impl<T> Slot<T> {
    #[inline(always)]
    pub fn empty() -> Self {
        Slot(None)
    }

    /// Holds `value`. Called once, on an empty slot (a visitor is consumed by its visit).
    #[inline(always)]
    pub fn put(&mut self, value: T) {
        // The slot is empty: the `None` given back has nothing to drop (and `forget` compiles
        // no drop code into the deserializer's copy, as an assignment would).
        std::mem::forget(self.0.replace(value));
    }

    /// The value, or an error when a deserializer returned `Ok` without running the visitor
    /// that puts it (none does: the visitor's `()` is the only way to make its value).
    #[inline(always)]
    pub fn take<E: de::Error>(self) -> Result<T, E> {
        match self.0 {
            Some(value) => Ok(value),
            None => Err(not_decoded()),
        }
    }
}

#[cold]
#[inline(never)]
fn not_decoded<E: de::Error>() -> E {
    E::custom("the deserializer returned without decoding the value")
}
