//! Writing a message: `{"id"?, "method", "params"?, envelope...}`.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::RequestId;

/// Writes one message whose id, method and envelope members are known, given its params:
/// what the generated `Serialize` of a message enum hands each variant's params to. Written as
/// `{"id"?, "method", "params"?, envelope...}`; `params` that are `None` are not written (absent
/// and `null` mean the same for params).
///
/// Only the params' member is compiled per params type (each variant of every message enum,
/// in every crate that encodes it); the rest of the message is compiled once per serializer.
pub struct MessageWriter<'a, S: Serializer, E> {
    serializer: S,
    id: Option<&'a RequestId>,
    method: &'a str,
    envelope: E,
}

impl<'a, S: Serializer, E: FnOnce(&mut S::SerializeMap) -> Result<(), S::Error>> MessageWriter<'a, S, E> {
    pub fn new(serializer: S, id: Option<&'a RequestId>, method: &'a str, envelope: E) -> Self {
        MessageWriter { serializer, id, method, envelope }
    }

    /// Writes the message with `params` (not written when `None`).
    pub fn params<P: Serialize + ?Sized>(self, params: Option<&P>) -> Result<S::Ok, S::Error> {
        let (mut map, envelope) = self.open()?;
        if let Some(params) = params {
            map.serialize_entry("params", params)?;
        }
        close(map, envelope)
    }

    /// The message's map, its id and method written.
    fn open(self) -> Result<(S::SerializeMap, E), S::Error> {
        let mut map = self.serializer.serialize_map(None)?;
        if let Some(id) = self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("method", self.method)?;
        Ok((map, self.envelope))
    }
}

/// The envelope members written after the params, and the message's map ended.
fn close<M: SerializeMap, E: FnOnce(&mut M) -> Result<(), M::Error>>(
    mut map: M,
    envelope: E,
) -> Result<M::Ok, M::Error> {
    envelope(&mut map)?;
    map.end()
}
