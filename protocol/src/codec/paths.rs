//! Error paths: where in a JSON text an error happened, and the path inside a value decoded
//! from buffered text.

use serde::de;

/// The byte offset in `text` of serde_json's error position (its line and column: the
/// column counts the bytes of the line before the position), so that multi-line and
/// pretty-printed text gets the same path as one line.
pub fn error_offset(text: &str, e: &serde_json::Error) -> usize {
    let line_start = match e.line() {
        0 | 1 => 0,
        line => text.bytes().enumerate().filter(|(_, b)| *b == b'\n').nth(line - 2).map_or(text.len(), |(i, _)| i + 1),
    };
    line_start + e.column()
}

/// The JSON path (`thread.turns[0].id`, empty at the top) of the value that ends before byte
/// `end` of the JSON `text` ([`error_offset`] of an error).
///
/// serde_json reports a type error at the last byte of the offending value and a missing
/// member at the end of its object, so scanning the text up to there gives the path of what
/// did not fit. This needs no second, path-tracking decode (which would compile every
/// type's deserializer twice).
pub fn path_at(text: &str, end: usize) -> String {
    enum Frame {
        Object { key: Option<String> },
        Array { index: usize },
    }
    let bytes = text.as_bytes();
    let end = end.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' => stack.push(Frame::Object { key: None }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key }) => *key = None,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    *key = Some(text.get(start..i.min(bytes.len())).unwrap_or_default().to_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key) } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// How an error inside a value decoded from buffered text starts: ``in `path`: ``, the path
/// inside that value, which [`decode_raw`] joins to the path of the value.
const NESTED: &str = "in `";

/// An error of a decode of buffered `text` (a union's value), re-raised in the decoder that
/// read `text`, with the path inside `text` where it happened.
pub fn nested_error<E: de::Error>(text: &str, e: serde_json::Error) -> E {
    let (inner, message) = split_nested(&e);
    let path = join_path(&path_at(text, error_offset(text, &e)), &inner);
    if path.is_empty() {
        E::custom(message)
    } else {
        E::custom(format_args!("{NESTED}{path}`: {message}"))
    }
}

/// The path carried by a [`nested_error`] and the message without it or its position.
pub(super) fn split_nested(e: &serde_json::Error) -> (String, String) {
    let mut message = e.to_string();
    if e.line() != 0 {
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_owned();
        }
    }
    if let Some(rest) = message.strip_prefix(NESTED) {
        if let Some((path, msg)) = rest.split_once("`: ") {
            return (path.to_owned(), msg.to_owned());
        }
    }
    (String::new(), message)
}

/// `outer` and `inner` paths joined (`a.b` + `[0].c` = `a.b[0].c`).
pub fn join_path(outer: &str, inner: &str) -> String {
    match (outer.is_empty(), inner.is_empty()) {
        (_, true) => outer.to_owned(),
        (true, false) => inner.to_owned(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        (false, false) => format!("{outer}.{inner}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Error positions of multi-line text are byte offsets of the text.
    #[test]
    fn error_offsets_count_lines() {
        let text = "{\"a\":[1,\n2],\n\"b\":x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        assert_eq!(path_at(text, error_offset(text, &e)), "b");
    }
}
