//! Duplicate members: the last one counts. Every decoder takes the last value in its one pass
//! (each occurrence type-checked), but for a union's tag given again with another value after
//! the arm was chosen; that one is resolved here, in the text, and decoded again.

use super::scan::{string_at, Scanner, Token};

/// The message of the error the tagged decoder raises for a tag given again with another
/// value (it also tells [`super::trail`] which tag, which is what `decode_raw` decides on).
pub(super) const DUPLICATE_MEMBERS: &str = "a member is given twice with different values";

/// `text` with every occurrence but the last of the member `tag` blanked, in each object that
/// gives it more than once with string values (a tagged union's tag given again with another
/// value); `None` when there is none.
///
/// Only that member changes, so every other member is decoded (and type-checked) as in the
/// first pass, whatever else the text holds; and the blanked occurrences (from the key to the
/// comma after the value) become spaces, newlines kept, so every byte, line and column of the
/// text is where it was in the text as sent: an error of the second decode points into that.
///
/// Untrusted input: one pass over the tokens, an explicit stack (any depth in bounded stack),
/// linear in the text.
pub fn blank_repeated_tag(text: &str, tag: &str) -> Option<String> {
    /// An occurrence of `tag` in an object: where its key starts, whether its value is a
    /// string, and the comma after it (a later occurrence means there is one).
    struct Occurrence {
        start: usize,
        string: bool,
        comma: Option<usize>,
    }
    struct Object {
        /// After a key, before its value: whether the key is `tag`.
        key: Option<(usize, bool)>,
        occurrences: Vec<Occurrence>,
    }
    enum Frame {
        Object(Object),
        Array,
    }

    /// A value of the innermost object ended (`string`: it was a string).
    fn value_done(stack: &mut [Frame], string: bool) {
        if let Some(Frame::Object(object)) = stack.last_mut() {
            if let Some((start, true)) = object.key.take() {
                object.occurrences.push(Occurrence { start, string, comma: None });
            }
        }
    }

    let mut stack: Vec<Frame> = Vec::new();
    let mut blanks: Vec<(usize, usize)> = Vec::new();
    for token in Scanner::new(text) {
        match token {
            Token::Open { object, .. } => stack.push(if object {
                Frame::Object(Object { key: None, occurrences: Vec::new() })
            } else {
                Frame::Array
            }),
            Token::Close { .. } => {
                if let Some(Frame::Object(object)) = stack.pop() {
                    let all_strings = object.occurrences.iter().all(|o| o.string);
                    if let Some((_, earlier)) = object.occurrences.split_last().filter(|_| all_strings) {
                        for o in earlier {
                            blanks.push((o.start, o.comma? + 1));
                        }
                    }
                }
                value_done(&mut stack, false);
            }
            Token::Comma { at } => {
                if let Some(Frame::Object(object)) = stack.last_mut() {
                    if let Some(last @ Occurrence { comma: None, .. }) = object.occurrences.last_mut() {
                        last.comma = Some(at);
                    }
                }
            }
            Token::Str { start, end, escaped } => match stack.last_mut() {
                Some(Frame::Object(object)) if object.key.is_none() => {
                    object.key = Some((start, string_at(text, start, end, escaped) == tag));
                }
                _ => value_done(&mut stack, true),
            },
            Token::Scalar { .. } => value_done(&mut stack, false),
            Token::Colon { .. } => {}
        }
    }
    if blanks.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for (start, end) in blanks {
        for b in bytes.get_mut(start..end)? {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Whole UTF-8 sequences were blanked (from a `"` to a `,`), so the text is still UTF-8.
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Only the repeated tag changes, its last value kept, every byte where it was.
    #[test]
    fn blanks_all_but_the_last_occurrence_of_the_tag() {
        let cases = [
            (r#"{"type":"a","x":1,"type":"b"}"#, Some(r#"{           "x":1,"type":"b"}"#)),
            // Nested objects, and keys compared unescaped; other duplicates are left alone.
            (
                r#"[{"t":0,"t":1,"type":"a","\u0074ype":"b"},{"type":"c"}]"#,
                Some(r#"[{"t":0,"t":1,           "\u0074ype":"b"},{"type":"c"}]"#),
            ),
            // Pretty text keeps its lines; non-ASCII is blanked whole.
            ("{ \"type\" :\n \"é\" ,\n \"type\":\"b\"}", Some("{         \n       \n \"type\":\"b\"}")),
            // Not all strings: the decoder's type check answers that, as in the first pass.
            (r#"{"type":"a","type":5}"#, None),
            (r#"{"type":"a","x":{"type":"b"}}"#, None),
            (r#"{"type":"a""#, None),
        ];
        for (text, want) in cases {
            let got = blank_repeated_tag(text, "type");
            assert_eq!(got.as_deref(), want, "{text}");
            if let Some(got) = got {
                assert_eq!(got.len(), text.len());
                assert_eq!(
                    serde_json::from_str::<Value>(text).unwrap(),
                    serde_json::from_str::<Value>(&got).unwrap(),
                    "the same value: {text}"
                );
            }
        }
    }

    /// Any depth, in bounded stack: 100,000 levels, each object with the tag twice, on a 256 KiB
    /// stack (a recursive rewrite overflows it a few thousand levels down).
    #[test]
    fn blank_repeated_tag_is_iterative() {
        let depth = 100_000;
        let text = format!("{}0{}", r#"{"t":"a","t":"b","x":"#.repeat(depth), "}".repeat(depth));
        let blanked = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || blank_repeated_tag(&text, "t"))
            .unwrap()
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(blanked, format!("{}0{}", r#"{        "t":"b","x":"#.repeat(depth), "}".repeat(depth)));
    }
}
