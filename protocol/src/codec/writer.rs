//! Writing a message: `{"id"?, "method", "params"?, envelope...}`.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::RequestId;

/// Writes `{"id"?, "method", "params"?, envelope...}`. `params` that are `None` are not written
/// (absent and `null` mean the same for params).
pub fn write_message<S: Serializer, P: Serialize + ?Sized>(
    serializer: S,
    id: Option<&RequestId>,
    method: &str,
    params: Option<&P>,
    envelope: impl FnOnce(&mut S::SerializeMap) -> Result<(), S::Error>,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    if let Some(id) = id {
        map.serialize_entry("id", id)?;
    }
    map.serialize_entry("method", method)?;
    if let Some(params) = params {
        map.serialize_entry("params", params)?;
    }
    envelope(&mut map)?;
    map.end()
}

/// Writes one message whose id, method and envelope members are known, given its params:
/// what the generated `Serialize` of a message enum hands each variant's params to.
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
    #[inline]
    pub fn params<P: Serialize + ?Sized>(self, params: Option<&P>) -> Result<S::Ok, S::Error> {
        write_message(self.serializer, self.id, self.method, params, self.envelope)
    }
}
