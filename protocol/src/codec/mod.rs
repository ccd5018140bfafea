//! The decoding the generated code calls, and its serde support. Written by hand; not part of
//! the public API.
//!
//! Every type decodes from one concrete reader of JSON text ([`Reader`], [`Decode`]): each
//! type's decoder is compiled once, not per deserializer type, and a type's serde
//! `Deserialize` buffers its value's text and reads that ([`deserialize_via_text`]).
//!
//! - Tagged unions (`{"type": "userMessage", ...}`) read the tag and then the arm straight from
//!   the same object when the tag comes first, as codex writes it. A tag that comes later, or
//!   is given again with another value, makes the decoder read the object twice: for the tag
//!   (the last one counts), then for the arm.
//! - Untagged unions read the value's shape, pick the arm the schema would pick, and decode
//!   only that arm from the same text.
//! - Externally tagged unions (`"never"` or `{"granular": {...}}`) dispatch on the string or
//!   the single key.
//! - Unknown tags, keys and values are kept whole in the type's catch-all variant.
//! - An error's path is recovered from the text at the reader's offset ([`path_at`]); the
//!   path inside a type's buffered value (its `Deserialize`) travels beside the error, in
//!   [`trail`], never in its message's text.
//!
//! Files by concern: `reader` (the JSON reader), `decode` (`Decode`, its impls for the
//! scalars, lists, maps and `Value`, and `Deserialize` through text), `structs`, `enums`,
//! `tagged`, `external`, `untagged`, `scalar` (the decoders of each kind of type), `raw`
//! (`decode_raw`, `ParamsError`), `paths` (error positions to paths), `scan` (the scanner of
//! JSON text `paths` walks), `trail`, `writer` (a message's `Serialize`).

mod decode;
mod enums;
mod external;
mod paths;
mod raw;
mod reader;
mod scalar;
mod scan;
mod structs;
mod tagged;
mod trail;
mod untagged;
mod writer;

// Each kind of type goes unused with the schemas that have none (the construct crates of
// codegen/tests/compile.rs).
#[allow(unused_imports)]
pub use decode::*;
#[allow(unused_imports)]
pub use enums::*;
#[allow(unused_imports)]
pub use external::*;
#[allow(unused_imports)]
pub use paths::*;
#[allow(unused_imports)]
pub use raw::*;
#[allow(unused_imports)]
pub use reader::{Array, Mark, Number, Object, Reader, Result};
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

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
/// A string that borrows from the input when it can.
pub(super) struct Str<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct StrVisitor;

        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }

        deserializer.deserialize_str(StrVisitor)
    }
}
