//! Where a visitor puts the value it decoded, so that no error path leaks it: a [`Slot`].

use std::mem::ManuallyDrop;

use serde::de;

/// A slot a visitor writes its value into (its serde `Value` is `()`): the deserializer's copy
/// of `deserialize_map` never holds a decoded value, so it compiles no drop code of its type,
/// and a deserializer that fails after the visitor returned leaves the value in the slot, which
/// [`finish`](Self::finish) drops. (A panic that unwinds through the deserializer after the
/// visitor forgets the value instead: dropping it there would compile the slot's drop code,
/// one more function per type, for a deserializer that panics.)
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
    /// the visitor put is dropped.
    ///
    /// Dropped as `T` (a drop of `T` is compiled where a value of `T` is read anyway), not as
    /// the slot: drop code of a slot would be one more function per type.
    #[inline(always)]
    pub fn finish<E: de::Error>(&mut self, result: Result<(), E>) -> Result<T, E> {
        let value = self.0.take();
        match (result, value) {
            (Ok(()), Some(value)) => Ok(value),
            (Ok(()), None) => Err(not_decoded()),
            (Err(e), None) => Err(e),
            (Err(e), Some(value)) => {
                drop(value);
                Err(e)
            }
        }
    }
}

/// A deserializer returned `Ok` without running the visitor that puts the value (none does:
/// the visitor's `()` is the only way to make its value).
#[cold]
#[inline(never)]
fn not_decoded<E: de::Error>() -> E {
    E::custom("the deserializer returned without decoding the value")
}
