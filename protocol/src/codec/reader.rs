//! The one reader of JSON text every type decodes from ([`Reader`]): concrete, so each type's
//! decoder is compiled once, as one function of the crate, and not again per deserializer type
//! and per crate that decodes (`docs/build-cost.md`).
//!
//! It reads what serde_json reads, and refuses what serde_json refuses: strings with escapes
//! and every number but a plain integer are handed to serde_json itself, so both agree on every
//! value. Errors are `serde_json::Error`s built with serde's own texts (`invalid type: ...,
//! expected ...`); the position of an error is where the reader stopped ([`Reader::offset`]),
//! where serde_json would report it.

use std::borrow::Cow;

use serde::de::{self, Error as _, Unexpected};

/// What a decode gives: the error is serde_json's, its text serde's.
pub type Result<T> = std::result::Result<T, serde_json::Error>;

/// How deep values nest before the reader refuses them (serde_json's limit).
const MAX_DEPTH: u32 = 128;

/// A reader of one JSON text, borrowing strings without escapes from it.
pub struct Reader<'de> {
    text: &'de str,
    pos: usize,
    depth: u32,
    /// The tag of the tagged union whose arm is being read, at the depth of its object: a
    /// member of that name is the tag again, not a member of the arm ([`Reader::is_tag`]).
    tag: Option<Tag<'de>>,
    /// A tag given again with another value, found by [`Reader::is_tag`].
    pub(super) retag: bool,
}

/// The tag of the union being read: its name, its value (`None`: every occurrence is skipped,
/// the last one having been taken), and the depth of its object.
#[derive(Clone)]
pub(super) struct Tag<'de> {
    pub(super) name: &'static str,
    pub(super) value: Option<Cow<'de, str>>,
    pub(super) depth: u32,
}

/// Where the reader was: [`Reader::rewind`] goes back there.
#[derive(Clone, Copy)]
pub struct Mark {
    pos: usize,
    depth: u32,
}

/// The members of an object being read; [`Reader::next_key`] reads the separators.
pub struct Object {
    first: bool,
}

/// The items of an array being read; [`Reader::next_item`] reads the separators.
pub struct Array {
    first: bool,
}

/// A JSON number as serde_json reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Number {
    pub fn unexpected(self) -> Unexpected<'static> {
        match self {
            Number::U64(n) => Unexpected::Unsigned(n),
            Number::I64(n) => Unexpected::Signed(n),
            Number::F64(n) => Unexpected::Float(n),
        }
    }
}

impl<'de> Reader<'de> {
    pub fn new(text: &'de str) -> Self {
        Reader { text, pos: 0, depth: 0, tag: None, retag: false }
    }

    /// The byte offset the reader has read up to: after an error, where it happened.
    pub fn offset(&self) -> usize {
        self.pos
    }

    pub fn mark(&self) -> Mark {
        Mark { pos: self.pos, depth: self.depth }
    }

    pub fn rewind(&mut self, mark: Mark) {
        self.pos = mark.pos;
        self.depth = mark.depth;
    }

    /// Skips whitespace; the next byte, if any.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// After the value: only whitespace may follow.
    pub fn end(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.syntax("trailing characters")),
        }
    }

    /// An error of the text itself (not of a value's type).
    #[cold]
    pub fn syntax(&self, what: &str) -> serde_json::Error {
        serde_json::Error::custom(what)
    }

    #[cold]
    fn eof(&self) -> serde_json::Error {
        serde_json::Error::custom("EOF while parsing a value")
    }

    /// `null`, read when it is next; `false` (nothing read) otherwise.
    #[inline]
    pub fn null(&mut self) -> Result<bool> {
        if self.peek() != Some(b'n') {
            return Ok(false);
        }
        self.literal(b"null")?;
        Ok(true)
    }

    fn literal(&mut self, word: &[u8]) -> Result<()> {
        let bytes = self.text.as_bytes();
        for &expected in word {
            match bytes.get(self.pos) {
                Some(&b) if b == expected => self.pos += 1,
                Some(_) => return Err(self.syntax("expected ident")),
                None => return Err(self.eof()),
            }
        }
        Ok(())
    }

    /// The error for a value of the wrong type where `expected` belongs: the value is read if
    /// it is a scalar (the error is after it, as serde_json reports it); an array or object is
    /// not entered.
    #[cold]
    #[inline(never)]
    pub fn invalid_type(&mut self, expected: &str) -> serde_json::Error {
        let exp = Expected(expected);
        match self.peek() {
            None => self.eof(),
            Some(b'[') => de::Error::invalid_type(Unexpected::Seq, &exp),
            Some(b'{') => de::Error::invalid_type(Unexpected::Map, &exp),
            Some(b'"') => match self.string() {
                Ok(s) => de::Error::invalid_type(Unexpected::Str(&s), &exp),
                Err(e) => e,
            },
            Some(b't') => {
                self.literal(b"true").map_or_else(|e| e, |()| de::Error::invalid_type(Unexpected::Bool(true), &exp))
            }
            Some(b'f') => {
                self.literal(b"false").map_or_else(|e| e, |()| de::Error::invalid_type(Unexpected::Bool(false), &exp))
            }
            Some(b'n') => {
                self.literal(b"null").map_or_else(|e| e, |()| de::Error::invalid_type(Unexpected::Unit, &exp))
            }
            Some(b'-' | b'0'..=b'9') => match self.number() {
                Ok(n) => de::Error::invalid_type(n.unexpected(), &exp),
                Err(e) => e,
            },
            Some(_) => self.syntax("expected value"),
        }
    }

    /// The error for a value of the right type that `expected` does not take.
    #[cold]
    pub fn invalid_value(&self, unexpected: Unexpected<'_>, expected: &str) -> serde_json::Error {
        de::Error::invalid_value(unexpected, &Expected(expected))
    }

    /// Enters an object; `expected` names the type for the error when the value is not one.
    #[inline]
    pub fn begin_object(&mut self, expected: &str) -> Result<Object> {
        self.open(b'{', expected).map(|()| Object { first: true })
    }

    /// Enters an array.
    #[inline]
    pub fn begin_array(&mut self, expected: &str) -> Result<Array> {
        self.open(b'[', expected).map(|()| Array { first: true })
    }

    /// Enters the container that `bracket` opens, or fails with the type `expected`.
    #[inline]
    fn open(&mut self, bracket: u8, expected: &str) -> Result<()> {
        if self.peek() != Some(bracket) {
            return Err(self.invalid_type(expected));
        }
        self.enter()
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("recursion limit exceeded"));
        }
        self.pos += 1;
        Ok(())
    }

    /// The next member's name (its `:` read), or `None` after the object's `}`.
    #[inline]
    pub fn next_key(&mut self, object: &mut Object) -> Result<Option<Cow<'de, str>>> {
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                self.depth -= 1;
                return Ok(None);
            }
            Some(b',') if !object.first => self.pos += 1,
            Some(_) if object.first => {}
            None => return Err(self.eof()),
            Some(_) => return Err(self.syntax("expected `,` or `}`")),
        }
        object.first = false;
        match self.peek() {
            Some(b'"') => {}
            None => return Err(self.eof()),
            Some(_) => return Err(self.syntax("key must be a string")),
        }
        let key = self.string()?;
        match self.peek() {
            Some(b':') => self.pos += 1,
            None => return Err(self.eof()),
            Some(_) => return Err(self.syntax("expected `:`")),
        }
        Ok(Some(key))
    }

    /// Whether an item follows (its `,` read); `false` after the array's `]`.
    #[inline]
    pub fn next_item(&mut self, array: &mut Array) -> Result<bool> {
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                self.depth -= 1;
                return Ok(false);
            }
            Some(b',') if !array.first => {
                self.pos += 1;
                if self.peek() == Some(b']') {
                    return Err(self.syntax("trailing comma"));
                }
            }
            None => return Err(self.eof()),
            Some(_) if array.first => {}
            Some(_) => return Err(self.syntax("expected `,` or `]`")),
        }
        array.first = false;
        Ok(true)
    }

    /// A string, borrowed when it has no escapes; `expected` names the type for the error
    /// when the value is not a string.
    #[inline]
    pub fn string_for(&mut self, expected: &str) -> Result<Cow<'de, str>> {
        if self.peek() != Some(b'"') {
            return Err(self.invalid_type(expected));
        }
        self.string()
    }

    /// The string at the reader (its opening quote next). Always inlined: a call per key and
    /// per string value costs more than the scan of most of them.
    #[inline(always)]
    fn string(&mut self) -> Result<Cow<'de, str>> {
        let start = self.pos + 1;
        let bytes = self.text.as_bytes();
        let at = plain_end(bytes, start);
        match bytes.get(at) {
            Some(b'"') => {
                self.pos = at + 1;
                Ok(Cow::Borrowed(&self.text[start..at]))
            }
            Some(_) => self.escaped_string(),
            None => {
                self.pos = bytes.len();
                Err(self.syntax("EOF while parsing a string"))
            }
        }
    }

    /// A string with escapes (or a control character): serde_json reads it, so both accept
    /// and refuse the same strings.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self) -> Result<Cow<'de, str>> {
        let rest = &self.text[self.pos..];
        let mut deserializer = serde_json::Deserializer::from_str(rest);
        let read = <String as serde::Deserialize>::deserialize(&mut deserializer);
        let consumed = string_end(rest);
        match read {
            Ok(s) => {
                self.pos += consumed;
                Ok(Cow::Owned(s))
            }
            Err(e) => {
                self.pos += super::error_offset(rest, &e).min(rest.len());
                Err(serde_json::Error::custom(super::message_of(&e)))
            }
        }
    }

    /// A number, as serde_json reads it: a plain integer here, in one pass over its digits.
    pub fn number(&mut self) -> Result<Number> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let negative = bytes.get(start) == Some(&b'-');
        let first = start + usize::from(negative);
        let mut at = first;
        let mut n: u64 = 0;
        while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            // Nineteen digits and fewer always fit; more are not read here.
            n = n.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            at += 1;
        }
        let digits = at - first;
        let plain = (1..=19).contains(&digits)
            && (digits == 1 || bytes[first] != b'0')
            && !matches!(bytes.get(at), Some(b'-' | b'+' | b'.' | b'e' | b'E'));
        if plain {
            self.pos = at;
            return Ok(match negative {
                false => Number::U64(n),
                // As serde_json: `-0` and what `i64` does not hold are floats.
                true if n != 0 && n <= i64::MAX as u64 + 1 => Number::I64((n as i64).wrapping_neg()),
                true => Number::F64(-(n as f64)),
            });
        }
        let mut end = at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = bytes.get(end) {
            end += 1;
        }
        self.other_number(start, end)
    }

    /// A number with a fraction, an exponent or more digits than 64 bits hold (or no number at
    /// all): serde_json reads it.
    #[cold]
    #[inline(never)]
    fn other_number(&mut self, start: usize, end: usize) -> Result<Number> {
        let text = &self.text[start..end];
        match serde_json::from_str::<serde_json::Number>(text) {
            Ok(n) => {
                self.pos = end;
                Ok(if let Some(u) = n.as_u64() {
                    Number::U64(u)
                } else if let Some(i) = n.as_i64() {
                    Number::I64(i)
                } else {
                    Number::F64(n.as_f64().unwrap_or(f64::NAN))
                })
            }
            Err(e) => {
                self.pos = start + super::error_offset(text, &e).min(text.len());
                Err(serde_json::Error::custom(super::message_of(&e)))
            }
        }
    }

    /// A number where `expected` belongs.
    #[inline]
    pub fn number_for(&mut self, expected: &str) -> Result<Number> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.invalid_type(expected)),
        }
    }

    pub fn bool_for(&mut self, expected: &str) -> Result<bool> {
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|()| true),
            Some(b'f') => self.literal(b"false").map(|()| false),
            _ => Err(self.invalid_type(expected)),
        }
    }

    /// Skips one value (checked as serde_json checks it); its text.
    pub fn raw_value(&mut self) -> Result<&'de str> {
        let start = match self.peek() {
            Some(_) => self.pos,
            None => return Err(self.eof()),
        };
        self.skip_value()?;
        Ok(&self.text[start..self.pos])
    }

    /// One value kept as its text: serde_json reads it and copies it in one pass (a skip here
    /// and a `RawValue` made of the text would read it twice).
    pub fn raw_box(&mut self) -> Result<Box<serde_json::value::RawValue>> {
        let rest = &self.text[self.pos..];
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Box<serde_json::value::RawValue>>();
        match values.next() {
            Some(Ok(raw)) => {
                self.pos += values.byte_offset();
                Ok(raw)
            }
            Some(Err(e)) => {
                self.pos += super::error_offset(rest, &e).min(rest.len());
                Err(serde_json::Error::custom(super::message_of(&e)))
            }
            None => Err(self.eof()),
        }
    }

    /// Skips one value, checked as serde_json checks what it skips: without a depth limit
    /// (a loop, not a recursion), and numbers by their grammar only.
    #[inline(never)]
    pub fn skip_value(&mut self) -> Result<()> {
        let mut open = Open::default();
        loop {
            match self.peek() {
                None => return Err(self.eof()),
                Some(b'"') => drop(self.string()?),
                Some(b'{') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'}') => self.pos += 1,
                        _ => {
                            open.push(true);
                            self.key_and_colon()?;
                            continue;
                        }
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b']') => self.pos += 1,
                        _ => {
                            open.push(false);
                            continue;
                        }
                    }
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.skip_number()?,
                Some(_) => return Err(self.syntax("expected value")),
            }
            // After a value: the next member or item, or the end of containers.
            loop {
                let Some(object) = open.last() else { return Ok(()) };
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if object {
                            self.key_and_colon()?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        self.pos += 1;
                        open.pop();
                    }
                    Some(b']') if !object => {
                        self.pos += 1;
                        open.pop();
                    }
                    None => return Err(self.eof()),
                    Some(_) if object => return Err(self.syntax("expected `,` or `}`")),
                    Some(_) => return Err(self.syntax("expected `,` or `]`")),
                }
            }
        }
    }

    /// A member's name and its `:`, inside an object being skipped.
    fn key_and_colon(&mut self) -> Result<()> {
        match self.peek() {
            Some(b'"') => drop(self.string()?),
            None => return Err(self.eof()),
            Some(_) => return Err(self.syntax("key must be a string")),
        }
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(self.eof()),
            Some(_) => Err(self.syntax("expected `:`")),
        }
    }

    /// A number skipped: its grammar checked (as serde_json skips one), its value not read.
    fn skip_number(&mut self) -> Result<()> {
        let bytes = self.text.as_bytes();
        let digits = |at: &mut usize| {
            let start = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > start
        };
        let mut at = self.pos;
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        let valid = match bytes.get(at) {
            Some(b'0') => {
                at += 1;
                !bytes.get(at).is_some_and(u8::is_ascii_digit)
            }
            _ => digits(&mut at),
        } && (bytes.get(at) != Some(&b'.') || {
            at += 1;
            digits(&mut at)
        }) && (!matches!(bytes.get(at), Some(b'e' | b'E')) || {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            digits(&mut at)
        });
        self.pos = at;
        match valid {
            true => Ok(()),
            false if at >= bytes.len() => Err(self.eof()),
            false => Err(self.syntax("invalid number")),
        }
    }

    /// Reads the tag `name` of a union whose arm is read from this object, with `value`
    /// (`None`: every later occurrence is skipped); the tag read before is given back for
    /// [`Reader::set_tag`] after the arm.
    pub(super) fn set_tag(&mut self, tag: Option<Tag<'de>>) -> Option<Tag<'de>> {
        std::mem::replace(&mut self.tag, tag)
    }

    pub(super) fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether the member `key` of the object being read is the tag of the union whose arm
    /// this object is; if so its value is read: the same tag again is skipped, another is an
    /// error, and [`Reader::retag`] is set for the union to read the object again.
    #[inline(never)]
    pub fn is_tag(&mut self, key: &str) -> Result<bool> {
        let Some(tag) = &self.tag else { return Ok(false) };
        if tag.depth != self.depth || tag.name != key {
            return Ok(false);
        }
        let expected = tag.value.clone();
        let again = self.string_for("a string")?;
        match expected {
            Some(value) if value != again => {
                self.retag = true;
                Err(serde_json::Error::custom("a tag given twice with different values"))
            }
            _ => Ok(true),
        }
    }

    /// A member the type does not declare: skipped (or, if it is the union's tag, checked).
    #[inline(never)]
    pub fn skip_member(&mut self, key: &str) -> Result<()> {
        if self.is_tag(key)? {
            return Ok(());
        }
        self.skip_value()
    }
}

/// The containers a skip is inside, innermost last, `true` for an object: a bit per level in a
/// word while they are 64 deep or less (no allocation for the values of the protocol), the
/// levels below in a vector.
#[derive(Default)]
struct Open {
    bits: u64,
    len: usize,
    deeper: Vec<bool>,
}

impl Open {
    #[inline]
    fn push(&mut self, object: bool) {
        match self.len {
            n if n < 64 => self.bits = (self.bits & !(1 << n)) | (u64::from(object) << n),
            _ => self.deeper.push(object),
        }
        self.len += 1;
    }

    #[inline]
    fn last(&self) -> Option<bool> {
        match self.len {
            0 => None,
            n if n <= 64 => Some(self.bits >> (n - 1) & 1 == 1),
            _ => self.deeper.last().copied(),
        }
    }

    #[inline]
    fn pop(&mut self) {
        if self.len > 64 {
            self.deeper.pop();
        }
        self.len -= 1;
    }
}

/// Where the plain run of a string's bytes that starts at `at` ends: the first quote, backslash
/// or control character (`bytes.len()` if none). Eight bytes at a time, as serde_json's own
/// `skip_to_escape` does: a byte's flag in `found` is exact for the first byte that matches
/// (a borrow only carries into the bytes after a match), so its position is the first
/// match's. Then byte by byte for the last seven.
#[inline]
fn plain_end(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    const SPACES: u64 = ONES * b' ' as u64;
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*chunk);
        // A byte is zero in `quote` where `word` has a quote; `x - 1` and `!x` both have the
        // high bit only where a byte of `x` is zero. A byte below a space (a control
        // character) has the high bit after `word - SPACES`, and `!word` has it where the
        // byte is ASCII.
        let quote = word ^ QUOTES;
        let backslash = word ^ BACKSLASHES;
        let found = (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | word.wrapping_sub(SPACES) & !word)
            & HIGH;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if matches!(b, b'"' | b'\\' | 0..=0x1f) {
            return at;
        }
        at += 1;
    }
    at
}

/// The length of the string at the start of `text` (opening quote to closing quote, both
/// included); the text's length if it does not end.
fn string_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut at = 1;
    loop {
        at = plain_end(bytes, at);
        match bytes.get(at) {
            Some(b'"') => return at + 1,
            // An escape's next byte is never the string's end.
            Some(b'\\') => at += 2,
            Some(_) => at += 1,
            None => return bytes.len(),
        }
    }
}

/// An expected-type text as serde's `Expected`.
struct Expected<'a>(&'a str);

impl de::Expected for Expected<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_as_serde_json_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1.5",
            "1e3",
            "-2.5E-3",
            "12345678901234567890123",
            "9999999999999999999",
            "-9999999999999999999",
            "1000000000000000000",
            "10",
            "0.0",
            "0e1",
            "1E+2",
        ] {
            let mut r = Reader::new(text);
            let n = r.number().unwrap();
            let expected: serde_json::Number = serde_json::from_str(text).unwrap();
            let same = match n {
                Number::U64(u) => expected.as_u64() == Some(u),
                Number::I64(i) => expected.as_i64() == Some(i) && expected.as_u64().is_none(),
                Number::F64(f) => expected.as_f64() == Some(f) && expected.is_f64(),
            };
            assert!(same, "{text}: {n:?} against {expected:?}");
            assert_eq!(r.offset(), text.len());
        }
        for text in ["01", "-01", "00", "-", "1.", "1e", "--1", "1-", "1+", "+1", "-a"] {
            assert!(Reader::new(text).number().is_err(), "{text}");
        }
    }

    #[test]
    fn strings_borrow_without_escapes_and_agree_with_serde_json() {
        let mut r = Reader::new(r#""plain" "a\nb\u00e9\ud83d\ude00" "\ud800" "a	b""#);
        assert!(matches!(r.string_for("a string").unwrap(), Cow::Borrowed("plain")));
        assert_eq!(r.string_for("a string").unwrap(), "a\nb\u{e9}\u{1f600}");
        assert!(r.string_for("a string").is_err(), "a lone surrogate");
        let mut r = Reader::new("\"a\tb\"");
        assert!(r.string_for("a string").unwrap_err().to_string().starts_with("control character"));
        // After an escaped string, the reader is right after its closing quote.
        let mut r = Reader::new(r#""a\"b\\" "longer than eight \u00e9 bytes\\\"" 7"#);
        assert_eq!(r.string_for("a string").unwrap(), "a\"b\\");
        assert_eq!(r.string_for("a string").unwrap(), "longer than eight \u{e9} bytes\\\"");
        assert_eq!(r.number_for("an integer").unwrap(), Number::U64(7));
    }

    #[test]
    fn a_string_ends_at_the_first_quote_backslash_or_control_character_at_every_offset() {
        // Every byte value at every place of a run long enough for the words and the tail,
        // after plain bytes (ASCII, and UTF-8 of two and four bytes, whose bytes have the
        // high bit) and before others that would also end it.
        let plain: Vec<u8> = "ab\u{e9}\u{1f600}z~ ".bytes().collect();
        for len in 0..24 {
            for byte in 0..=u8::MAX {
                let mut bytes: Vec<u8> = plain.iter().copied().cycle().take(len).collect();
                bytes.push(byte);
                bytes.extend_from_slice(b"x\"\\\n");
                let expected = bytes.iter().position(|&b| matches!(b, b'"' | b'\\' | 0..=0x1f)).unwrap();
                for start in 0..=len.min(9) {
                    assert_eq!(plain_end(&bytes, start), expected, "{len} {byte:#x} {start}");
                }
                assert_eq!(plain_end(&bytes[..len], 0), len, "no end");
            }
        }
    }

    #[test]
    fn the_wrong_type_is_reported_as_serde_json_reports_it() {
        let mut r = Reader::new(r#"{"a": 42}"#);
        let mut object = r.begin_object("struct A").unwrap();
        assert_eq!(r.next_key(&mut object).unwrap().as_deref(), Some("a"));
        let e = r.string_for("a string").unwrap_err();
        assert_eq!(e.to_string(), "invalid type: integer `42`, expected a string");
        assert_eq!(r.offset(), 8);
    }

    #[test]
    fn a_value_kept_as_text_is_read_once_and_exactly() {
        let mut r = Reader::new(r#"{"a": [1e400, "x\n"] , "b":7}"#);
        let mut object = r.begin_object("a map").unwrap();
        assert_eq!(r.next_key(&mut object).unwrap().as_deref(), Some("a"));
        assert_eq!(r.raw_box().unwrap().get(), r#"[1e400, "x\n"]"#);
        assert_eq!(r.next_key(&mut object).unwrap().as_deref(), Some("b"));
        assert_eq!(r.raw_box().unwrap().get(), "7");
        assert_eq!(r.next_key(&mut object).unwrap(), None);
        let mut r = Reader::new(r#"[1, {"a" 2}]"#);
        assert!(r.raw_box().is_err());
    }

    #[test]
    fn separators_are_checked() {
        for text in [r#"{"a":1 "b":2}"#, r#"{"a" 1}"#, r#"{,"a":1}"#, r#"{"a":1,}"#, "[1 2]", "[1,]", "[,1]", "{1:2}"] {
            let mut r = Reader::new(text);
            assert!(r.skip_value().is_err(), "{text}");
        }
        for text in ["1.", "-", "01", "1e", "1e+", "-x"] {
            assert!(Reader::new(text).skip_value().is_err(), "{text}");
        }
        for text in ["1e400", "-0.5E-7", "123456789012345678901234567890"] {
            let mut r = Reader::new(text);
            r.skip_value().unwrap();
            assert_eq!(r.offset(), text.len(), "{text}");
        }
        // Skipped values have no depth limit (as serde_json skips them); typed ones do.
        let deep = "[".repeat(200) + &"]".repeat(200);
        Reader::new(&deep).skip_value().unwrap();
        let e = <serde_json::Value as crate::codec::Decode>::decode(&mut Reader::new(&deep)).unwrap_err();
        assert_eq!(e.to_string(), "recursion limit exceeded");
    }

    #[test]
    fn a_skip_tells_objects_from_arrays_at_every_depth() {
        // Objects and arrays in turn, on both sides of the 64 levels a word holds: the value
        // is skipped whole, and a closer of the other kind at any level is refused.
        for depth in [1, 2, 63, 64, 65, 66, 130] {
            let open: String = (0..depth).map(|i| if i % 2 == 0 { r#"{"k":"# } else { "[0," }).collect();
            let close: Vec<u8> = (0..depth).rev().map(|i| if i % 2 == 0 { b'}' } else { b']' }).collect();
            let text = format!("{open}1{}", String::from_utf8(close.clone()).unwrap());
            let mut r = Reader::new(&text);
            r.skip_value().unwrap();
            assert_eq!(r.offset(), text.len(), "{depth}");
            for wrong in 0..depth {
                let mut bad = close.clone();
                bad[wrong] = if bad[wrong] == b'}' { b']' } else { b'}' };
                let text = format!("{open}1{}", String::from_utf8(bad).unwrap());
                assert!(Reader::new(&text).skip_value().is_err(), "{depth} {wrong}");
            }
        }
    }
}
