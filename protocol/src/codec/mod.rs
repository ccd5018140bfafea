//! Serde support the generated code calls. Written by hand; not part of the public API.
//!
//! - Tagged unions (`{"type": "userMessage", ...}`) read the tag and then the arm straight from
//!   the same map when the tag comes first, as codex writes it: one pass, no buffering. A tag
//!   that comes later falls back to buffering the object once.
//! - Externally tagged unions (`"never"` or `{"granular": {...}}`) dispatch on the string or
//!   the single key.
//! - Unknown tags, keys and values are kept whole in the type's catch-all variant.
//! - `params` and `result` kept raw are decoded from their text; an error's path is recovered
//!   from the text at the error's position ([`path_at`]), so no type is compiled twice.
//! - What a caller decides on after an error (a tag given twice; the path inside a union's
//!   buffered value) travels beside the error, in [`trail`], never in its message's text.
//!
//! Files by concern: `structs`, `enums`, `tagged`, `external`, `untagged`, `scalar` (the
//! decoders), `duplicates` (a repeated union tag blanked in the text), `raw` (`decode_raw`,
//! `ParamsError`), `place` (`Decode`: a value decoded into the place its reader owns),
//! `paths` (error positions to paths), `scan` (the one scanner of JSON text, which `paths` and
//! `duplicates` walk), `trail`, `writer` (a message's `Serialize`).

mod duplicates;
mod enums;
mod external;
mod paths;
mod place;
mod raw;
mod scalar;
mod scan;
mod structs;
mod tagged;
mod trail;
mod untagged;
mod writer;

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

// Each kind of type goes unused with the schemas that have none (the construct crates of
// codegen/tests/compile.rs).
#[allow(unused_imports)]
pub use enums::*;
#[allow(unused_imports)]
pub use external::*;
#[allow(unused_imports)]
pub use paths::*;
#[allow(unused_imports)]
pub use place::*;
#[allow(unused_imports)]
pub use raw::*;
#[allow(unused_imports)]
pub use scalar::*;
#[allow(unused_imports)]
pub use structs::*;
#[allow(unused_imports)]
pub use tagged::*;
#[allow(unused_imports)]
pub use untagged::*;
#[allow(unused_imports)]
pub use writer::*;

/// A string that borrows from the input when it can.
pub(super) struct Str<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;

        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }

        deserializer.deserialize_str(StrVisitor)
    }
}
