//! The one scanner of JSON text: its tokens with their byte offsets.
//!
//! The path of the value that ends at an error's position ([`path_at`](super::path_at), over
//! text that may be cut or wrong after that position) walks these tokens. The scanner does not
//! validate: the reader of the same text has, and it only has to follow what the reader
//! accepts. One pass, no recursion, no allocation.

/// A token of JSON text, with its byte offsets (`start..end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token {
    /// `{` (`object`) or `[`.
    Open {
        at: usize,
        object: bool,
    },
    /// `}` or `]`.
    Close {
        at: usize,
    },
    Comma {
        at: usize,
    },
    Colon {
        at: usize,
    },
    /// A string, its quotes included; `escaped` when it holds a backslash. An unterminated
    /// string ends at the end of the text.
    Str {
        start: usize,
        end: usize,
        escaped: bool,
    },
    /// A number, `true`, `false` or `null`.
    Scalar {
        start: usize,
        end: usize,
    },
}

impl Token {
    /// Where the token starts.
    pub(super) fn start(self) -> usize {
        match self {
            Token::Open { at, .. } | Token::Close { at } | Token::Comma { at } | Token::Colon { at } => at,
            Token::Str { start, .. } | Token::Scalar { start, .. } => start,
        }
    }
}

/// The tokens of a JSON text, in order.
pub(super) struct Scanner<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { bytes: text.as_bytes(), i: 0 }
    }
}

impl Iterator for Scanner<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while self.i < bytes.len() && matches!(bytes[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
        let at = self.i;
        let token = match *bytes.get(at)? {
            b'{' => Token::Open { at, object: true },
            b'[' => Token::Open { at, object: false },
            b'}' | b']' => Token::Close { at },
            b',' => Token::Comma { at },
            b':' => Token::Colon { at },
            b'"' => {
                let mut i = at + 1;
                let mut escaped = false;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                let end = (i + 1).min(bytes.len());
                self.i = end;
                return Some(Token::Str { start: at, end, escaped });
            }
            _ => {
                let mut i = at + 1;
                while i < bytes.len()
                    && !matches!(
                        bytes[i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':' | b'"' | b'{' | b'['
                    )
                {
                    i += 1;
                }
                self.i = i;
                return Some(Token::Scalar { start: at, end: i });
            }
        };
        self.i = at + 1;
        Some(token)
    }
}

/// The string a [`Token::Str`] at `start..end` of `text` stands for: unescaped as JSON reads
/// it, or, when it does not read (cut, or a bad escape), as written between its quotes.
pub(super) fn string_at(text: &str, start: usize, end: usize, escaped: bool) -> std::borrow::Cow<'_, str> {
    let quoted = text.get(start..end).unwrap_or_default();
    if escaped {
        if let Ok(unescaped) = serde_json::from_str::<String>(quoted) {
            return unescaped.into();
        }
    }
    let inner = quoted.strip_prefix('"').unwrap_or(quoted);
    inner.strip_suffix('"').unwrap_or(inner).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_their_offsets() {
        let text = "{\"a\\\"b\" : [1, -2.5e3, true], \"c\":null}";
        let tokens: Vec<Token> = Scanner::new(text).collect();
        assert_eq!(
            tokens,
            [
                Token::Open { at: 0, object: true },
                Token::Str { start: 1, end: 7, escaped: true },
                Token::Colon { at: 8 },
                Token::Open { at: 10, object: false },
                Token::Scalar { start: 11, end: 12 },
                Token::Comma { at: 12 },
                Token::Scalar { start: 14, end: 20 },
                Token::Comma { at: 20 },
                Token::Scalar { start: 22, end: 26 },
                Token::Close { at: 26 },
                Token::Comma { at: 27 },
                Token::Str { start: 29, end: 32, escaped: false },
                Token::Colon { at: 32 },
                Token::Scalar { start: 33, end: 37 },
                Token::Close { at: 37 },
            ]
        );
        assert_eq!(string_at(text, 1, 7, true), "a\"b");
        assert_eq!(string_at(text, 29, 32, false), "c");
        // Cut text: the string runs to the end.
        assert_eq!(Scanner::new(r#"{"ab"#).nth(1), Some(Token::Str { start: 1, end: 4, escaped: false }));
        assert_eq!(string_at(r#"{"ab"#, 1, 4, false), "ab");
    }
}
