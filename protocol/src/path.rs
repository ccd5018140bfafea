//! JSON paths: where a value sits inside a message, in one syntax.
//!
//! `params.thread.turns[0].items[2].status`: members joined with `.`, array elements as `[i]`,
//! the whole value is the empty path. A member name that is not a plain word (ASCII letters,
//! digits, `_`, `$`, `-`; not empty) is written as a JSON string in brackets, with JSON
//! escapes: `changes["src/a b.rs"]`, `x["a.b"]`, `x[""]`, `x["café"]`. A plain word may start
//! with a digit (`x.0a`): an index is always in brackets, so it cannot be read as one.
//!
//! Every path this crate and its tools print or compare is a [`JsonPath`]: a decode error's
//! ([`DecodeError::path`](crate::jsonrpc::DecodeError::path),
//! [`ParamsError::path`](crate::jsonrpc::ParamsError)), a round-trip difference's
//! ([`roundtrip`](crate::roundtrip)), a member an older server does not know
//! (`availability`), and the drift report's findings of every kind. The syntax is written
//! in one place, [`JsonPath`]'s `Display`.
//!
//! ```
//! use codex_app_protocol::path::{JsonPath, Step};
//!
//! let path = JsonPath::root().key("params").key("changes").key("src/a b.rs").index(0);
//! assert_eq!(path.to_string(), r#"params.changes["src/a b.rs"][0]"#);
//! assert_eq!(path.steps().nth(2), Some(Step::Key("src/a b.rs")));
//! assert_eq!(JsonPath::root().to_string(), "");
//! ```

use std::fmt::{self, Write as _};

/// One step of a path: an object member or an array index, borrowed (the `inspect` walk and
/// [`JsonPath::steps`] hand these out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A step as a path owns it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Owned {
    Key(Box<str>),
    Index(usize),
}

impl Owned {
    fn step(&self) -> Step<'_> {
        match self {
            Owned::Key(key) => Step::Key(key),
            Owned::Index(index) => Step::Index(*index),
        }
    }
}

impl From<Step<'_>> for Owned {
    fn from(step: Step<'_>) -> Owned {
        match step {
            Step::Key(key) => Owned::Key(key.into()),
            Step::Index(index) => Owned::Index(index),
        }
    }
}

/// A JSON path, held as its steps and written in the syntax of the [module](self).
///
/// Equal locations are equal paths, whatever built them; keys are held unescaped (as JSON
/// reads them), so `"a\u0020b"` in a text and `"a b"` in a `Value` are the same key.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonPath {
    steps: Vec<Owned>,
}

impl JsonPath {
    /// The path of the whole value (written as the empty string).
    pub const fn root() -> JsonPath {
        JsonPath { steps: Vec::new() }
    }

    /// The path of these steps, in order.
    pub fn from_steps(steps: &[Step<'_>]) -> JsonPath {
        JsonPath { steps: steps.iter().map(|s| Owned::from(*s)).collect() }
    }

    /// Where in `text` the error of a `serde_json` decode of that text happened: the path of
    /// the value that did not fit, or, for a missing member, of the object that lacks it.
    ///
    /// Read from the text up to the error's position (serde_json reports a type error at the
    /// end of the offending value, a missing member at the end of its object), so it needs no
    /// second decode and works for any type. For an error without a position (one of
    /// `serde_json::from_value`), the root.
    ///
    /// ```
    /// use codex_app_protocol::path::JsonPath;
    ///
    /// #[derive(serde::Deserialize, Debug)]
    /// struct Answer { scores: Vec<u32> }
    ///
    /// let text = r#"{"scores": [1, 2, "three"]}"#;
    /// let error = serde_json::from_str::<Answer>(text).unwrap_err();
    /// assert_eq!(JsonPath::of_error(text, &error), "scores[2]");
    /// ```
    pub fn of_error(text: &str, error: &serde_json::Error) -> JsonPath {
        if error.line() == 0 {
            return JsonPath::root();
        }
        crate::codec::path_at(text, crate::codec::error_offset(text, error))
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether there are no steps: the path of the whole value.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps, from the root.
    pub fn steps(&self) -> impl DoubleEndedIterator<Item = Step<'_>> + ExactSizeIterator + '_ {
        self.steps.iter().map(Owned::step)
    }

    /// The last step, `None` at the root.
    pub fn last(&self) -> Option<Step<'_>> {
        self.steps.last().map(Owned::step)
    }

    /// The path without its last step (the root for the root).
    pub fn parent(&self) -> JsonPath {
        let n = self.steps.len().saturating_sub(1);
        JsonPath { steps: self.steps[..n].to_vec() }
    }

    /// Appends member `key` ([`key`](Self::key) is the same for a path built in one
    /// expression).
    pub fn push_key(&mut self, key: &str) {
        self.steps.push(Owned::Key(key.into()));
    }

    /// Appends array element `index`.
    pub fn push_index(&mut self, index: usize) {
        self.steps.push(Owned::Index(index));
    }

    /// Removes the last step and says whether there was one.
    pub fn pop(&mut self) -> bool {
        self.steps.pop().is_some()
    }

    /// This path with member `key` appended (a path being walked appends in place with
    /// [`push_key`](Self::push_key)).
    #[must_use]
    pub fn key(mut self, key: &str) -> JsonPath {
        self.push_key(key);
        self
    }

    /// This path with array element `index` appended.
    #[must_use]
    pub fn index(mut self, index: usize) -> JsonPath {
        self.push_index(index);
        self
    }

    /// This path followed by `inner` (the path of a value inside the one here).
    #[must_use]
    pub fn join(mut self, inner: &JsonPath) -> JsonPath {
        self.steps.extend(inner.steps.iter().cloned());
        self
    }

    /// Whether `prefix`'s steps begin this path.
    pub fn starts_with(&self, prefix: &JsonPath) -> bool {
        self.steps.starts_with(&prefix.steps)
    }
}

/// Writes member `key` as a step of a path: `.key` for a plain word (no `.` as the first step),
/// `["key"]` with JSON escapes for anything else. The quoting rule of the [module](self).
fn write_key(out: &mut fmt::Formatter<'_>, key: &str, first: bool) -> fmt::Result {
    let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-'));
    if plain {
        if !first {
            out.write_char('.')?;
        }
        return out.write_str(key);
    }
    let quoted = serde_json::to_string(key).map_err(|_| fmt::Error)?;
    write!(out, "[{quoted}]")
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps().enumerate() {
            match step {
                Step::Key(key) => write_key(f, key, i == 0)?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonPath({:?})", self.to_string())
    }
}

impl<'a> FromIterator<Step<'a>> for JsonPath {
    fn from_iter<I: IntoIterator<Item = Step<'a>>>(steps: I) -> JsonPath {
        JsonPath { steps: steps.into_iter().map(Owned::from).collect() }
    }
}

impl<'a> Extend<Step<'a>> for JsonPath {
    fn extend<I: IntoIterator<Item = Step<'a>>>(&mut self, steps: I) {
        self.steps.extend(steps.into_iter().map(Owned::from));
    }
}

/// A path equals the text it is written as (`path == "params.thread.id"`).
impl PartialEq<str> for JsonPath {
    fn eq(&self, text: &str) -> bool {
        /// Compares what is written with `text`, without building a string.
        struct Compare<'t>(&'t str);
        impl fmt::Write for Compare<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 = self.0.strip_prefix(s).ok_or(fmt::Error)?;
                Ok(())
            }
        }
        let mut rest = Compare(text);
        write!(rest, "{self}").is_ok() && rest.0.is_empty()
    }
}

impl PartialEq<&str> for JsonPath {
    fn eq(&self, text: &&str) -> bool {
        *self == **text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one quoting rule, with the keys that need it: a `.`, `[`, `"`, a space, a slash,
    /// the empty key, a control character and a non-ASCII letter are quoted, with JSON's
    /// escapes (so the quoted key reads back as a JSON string); a leading digit is not (an
    /// index is always in brackets, so `.0a` cannot be read as one).
    #[test]
    fn keys_that_need_quoting() {
        let cases = [
            ("a.b", r#"x["a.b"]"#),
            ("a[0]", r#"x["a[0]"]"#),
            ("say \"hi\"", r#"x["say \"hi\""]"#),
            ("back\\slash", r#"x["back\\slash"]"#),
            ("src/a b.rs", r#"x["src/a b.rs"]"#),
            ("", r#"x[""]"#),
            ("café", r#"x["café"]"#),
            ("tab\there\u{1}", r#"x["tab\there\u0001"]"#),
            ("0a-b_$", "x.0a-b_$"),
        ];
        for (key, want) in cases {
            let path = JsonPath::root().key("x").key(key);
            assert_eq!(path.to_string(), want, "{key:?}");
            assert_eq!(path, *want);
            // The bracketed key is a JSON string that reads back as the key.
            if let Some(quoted) = want.strip_prefix("x[").and_then(|q| q.strip_suffix(']')) {
                assert_eq!(serde_json::from_str::<String>(quoted).unwrap(), key);
            }
            // First step: quoted alike, a plain word without a dot.
            let first = JsonPath::root().key(key).to_string();
            assert_eq!(first, want.strip_prefix("x").map(|w| w.strip_prefix('.').unwrap_or(w)).unwrap());
        }
    }

    #[test]
    fn builds_joins_and_splits() {
        let path = JsonPath::root().key("params").key("turns").index(0).key("items");
        assert_eq!(path.to_string(), "params.turns[0].items");
        assert_eq!(JsonPath::root().index(3).key("a").to_string(), "[3].a");
        let inner = JsonPath::root().index(1).key("b c");
        assert_eq!(path.clone().join(&inner).to_string(), r#"params.turns[0].items[1]["b c"]"#);
        assert_eq!(JsonPath::root().key("result").join(&JsonPath::root().key("id")).to_string(), "result.id");
        assert_eq!(JsonPath::root().join(&JsonPath::root()), JsonPath::root());
        assert_eq!(path.last(), Some(Step::Key("items")));
        assert_eq!(path.parent().to_string(), "params.turns[0]");
        assert!(path.starts_with(&path.parent()) && !path.parent().starts_with(&path));
        assert_eq!(JsonPath::root().parent(), JsonPath::root());
        let steps: Vec<Step<'_>> = path.steps().collect();
        assert_eq!(JsonPath::from_steps(&steps), path);
        assert_eq!(steps.into_iter().collect::<JsonPath>(), path);
        assert_ne!(path, "params.turns[0].item");
        assert_ne!(path, "params.turns[0].itemsx");
        assert_eq!(format!("{path:?}"), r#"JsonPath("params.turns[0].items")"#);
    }
}
