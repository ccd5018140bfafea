//! Where a visitor puts the value it decoded, so that no error path leaks it: a [`Slot`].

use std::mem::ManuallyDrop;

use serde::de;

/// A slot a visitor writes its value into (its serde `Value` is `()`): the deserializer's copy
/// of `deserialize_map` never holds a decoded value, so it compiles no drop code of its type,
/// and a deserializer that fails after the visitor returned leaves the value in the slot, which
/// [`finish`](Self::finish) has dropped by the type's own `discard`. (A panic that unwinds
/// through the deserializer after the visitor forgets the value instead: dropping it there
/// would compile the slot's drop code, one more function per type, for a deserializer that
/// panics.)
pub struct Slot<T>(ManuallyDrop<Option<T>>);

impl<T> Slot<T> {
    #[inline(always)]
    pub fn empty() -> Self {
        Slot(ManuallyDrop::new(None))
    }

    /// Holds `value`. Called once, on an empty slot (a visitor is consumed by its visit).
    #[inline(always)]
    pub fn put(&mut self, value: T) {
        // The slot is empty: the `None` given back has nothing to drop (and `forget` compiles
        // no drop code into the deserializer's copy, as an assignment would).
        std::mem::forget(self.0.replace(value));
    }

    /// The value, after the deserializer ran the visitor with `result`; on an error, a value
    /// the visitor put is dropped by `discard` (the type's
    /// [`DecodeStruct::discard`](super::DecodeStruct::discard) or
    /// [`TaggedUnion::discard`](super::TaggedUnion::discard)).
    ///
    /// Not dropped here: this is inlined into every reader of a struct, and each would compile
    /// the type's drop code once more (with that of every type inside it) for a path that
    /// serde_json's deserializers never take.
    #[inline(always)]
    pub fn finish<E: de::Error>(&mut self, result: Result<(), E>, discard: fn(&mut Self)) -> Result<T, E> {
        if let Err(e) = result {
            discard(self);
            return Err(e);
        }
        self.0.take().ok_or_else(not_decoded)
    }

    /// The value a visitor put, when nothing can fail after it (its error left the slot
    /// empty).
    #[inline(always)]
    pub fn into_value<E: de::Error>(mut self) -> Result<T, E> {
        self.0.take().ok_or_else(not_decoded)
    }

    /// Drops the value the slot holds, in place (it is not moved out first).
    #[inline(always)]
    pub fn clear(&mut self) {
        *self.0 = None;
    }
}

/// A deserializer returned `Ok` without running the visitor that puts the value (none does:
/// the visitor's `()` is the only way to make its value).
#[cold]
#[inline(never)]
fn not_decoded<E: de::Error>() -> E {
    E::custom("the deserializer returned without decoding the value")
}
