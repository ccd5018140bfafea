//! The generator's one error type: what went wrong and where in the schema.

use std::fmt;

use crate::decisions::Missing;

/// An error that names the JSON pointer of the schema construct it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// JSON pointer into the bundle (`#/definitions/v2/ThreadItem/oneOf/3`), or empty when the
    /// error is not about one place.
    pub pointer: String,
    pub message: String,
    /// When the error is that the schema needs decisions `vendor-schemas/decisions.json` does
    /// not hold: all of them, with their proposals (the message lists them too).
    pub missing_decisions: Option<Box<Missing>>,
}

impl Error {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Error { pointer: pointer.into(), message: message.into(), missing_decisions: None }
    }

    /// The error that stops a run whose schema needs decisions: lists every one of them.
    pub fn missing_decisions(missing: Missing) -> Self {
        Error { pointer: String::new(), message: missing.render(), missing_decisions: Some(Box::new(missing)) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Something the generator could not type faithfully, and what it did instead (a
/// `serde_json::Value`, a renamed item, an ignored keyword). It never loses data on the wire;
/// `cargo xtask regen` prints every warning with its JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    /// JSON pointer into the bundle of the construct it is about.
    pub pointer: String,
    pub message: String,
    /// About what an older release of the supported range had (the history applied to the
    /// newest release's types), not about the schema given: regen prints it with `--verbose`.
    pub range: bool,
}

impl Warning {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Warning { pointer: pointer.into(), message: message.into(), range: false }
    }

    /// A warning about what an older release of the supported range had.
    pub fn range(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Warning { range: true, ..Warning::new(pointer, message) }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}
