//! Duplicate members: the last one counts. Most decoders take the last value in their one
//! pass; a union's tag given again with another value is resolved here, by rewriting the text.

use std::borrow::Cow;

/// The message of the error the tagged decoder raises for a tag given again with another
/// value (it also tells [`super::trail`], which is what `decode_raw` decides on).
pub(super) const DUPLICATE_MEMBERS: &str = "a member is given twice with different values";

/// `text` with every object's duplicate members resolved as `serde_json::Value` resolves them:
/// the last value counts, at the place of the first. Values are copied as text (numbers
/// stay exact, whitespace is kept). `None` when nothing is duplicated (or `text` is no JSON).
///
/// Untrusted input: one iterative scan over the bytes (an explicit stack, no recursion, so
/// any depth runs in bounded stack), then one copy of the text with the duplicates' edits
/// applied: `O(n log n)` in all, whatever the nesting.
pub fn resolve_duplicates(text: &str) -> Option<String> {
    let edits = duplicate_edits(text)?;
    if edits.is_empty() {
        return None;
    }
    // Each range of the text is copied once: either where it stands or, for the last value of
    // a member given twice, in place of the first value.
    let mut out = String::with_capacity(text.len());
    let mut ranges = vec![(0, text.len())];
    while let Some((cursor, end)) = ranges.pop() {
        let next = edits.partition_point(|e| e.start < cursor);
        match edits.get(next) {
            Some(edit) if edit.start < end => {
                out.push_str(text.get(cursor..edit.start)?);
                ranges.push((edit.end, end));
                if let Some(with) = edit.with {
                    ranges.push(with);
                }
            }
            _ => out.push_str(text.get(cursor..end)?),
        }
    }
    Some(out)
}

/// A change [`resolve_duplicates`] makes: the text `start..end` dropped (a later occurrence of
/// a member, from the comma before it) or replaced by the text `with` (the first occurrence's
/// value, by the last occurrence's). Edits nest or are disjoint, never overlap otherwise.
struct Edit {
    start: usize,
    end: usize,
    with: Option<(usize, usize)>,
}

/// The [`Edit`]s that resolve `text`'s duplicate members, sorted by start; `None` when `text`
/// is no JSON the scan can follow.
fn duplicate_edits(text: &str) -> Option<Vec<Edit>> {
    use std::collections::HashMap;

    /// A member whose value is being read.
    struct Member<'a> {
        key: Cow<'a, str>,
        /// The comma before the member (`None` for the first).
        comma: Option<usize>,
        value: usize,
    }
    enum Frame<'a> {
        Object {
            id: usize,
            comma: Option<usize>,
            /// After a key: the member, `value` set at its `:`.
            member: Option<Member<'a>>,
        },
        Array,
    }
    /// The first occurrence of each (object, key): its value's range and the range of the
    /// last occurrence's value, once there is one.
    struct First {
        value: (usize, usize),
        last: Option<(usize, usize)>,
    }

    /// The scan's state.
    struct Scan<'a> {
        stack: Vec<Frame<'a>>,
        firsts: Vec<First>,
        index: HashMap<(usize, Cow<'a, str>), usize>,
        edits: Vec<Edit>,
    }
    impl Scan<'_> {
        /// A value of the innermost object ended at `end`: its member is complete.
        fn member_done(&mut self, end: usize) -> Option<()> {
            let Some(Frame::Object { id, member, .. }) = self.stack.last_mut() else { return Some(()) };
            let m = member.take()?;
            match self.index.entry((*id, m.key)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(self.firsts.len());
                    self.firsts.push(First { value: (m.value, end), last: None });
                }
                std::collections::hash_map::Entry::Occupied(slot) => {
                    self.firsts[*slot.get()].last = Some((m.value, end));
                    self.edits.push(Edit { start: m.comma?, end, with: None });
                }
            }
            Some(())
        }
    }

    let bytes = text.as_bytes();
    let mut scan = Scan { stack: Vec::new(), firsts: Vec::new(), index: HashMap::new(), edits: Vec::new() };
    let mut objects = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'[' => {
                if let Some(Frame::Object { member: Some(m), .. }) = scan.stack.last_mut() {
                    m.value = i;
                }
                scan.stack.push(if b == b'{' {
                    objects += 1;
                    Frame::Object { id: objects, comma: None, member: None }
                } else {
                    Frame::Array
                });
            }
            b'}' | b']' => {
                scan.stack.pop()?;
                scan.member_done(i + 1)?;
            }
            b',' => {
                if let Some(Frame::Object { comma, .. }) = scan.stack.last_mut() {
                    *comma = Some(i);
                }
            }
            b':' => {}
            b'"' => {
                let start = i;
                let mut escaped = false;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                if i >= bytes.len() {
                    return None;
                }
                match scan.stack.last_mut() {
                    // A key.
                    Some(Frame::Object { comma, member: member @ None, .. }) => {
                        let inner = text.get(start + 1..i)?;
                        let key = if escaped {
                            Cow::Owned(serde_json::from_str::<String>(text.get(start..=i)?).ok()?)
                        } else {
                            Cow::Borrowed(inner)
                        };
                        *member = Some(Member { key, comma: comma.take(), value: i + 1 });
                    }
                    Some(Frame::Object { member: Some(m), .. }) => {
                        m.value = start;
                        scan.member_done(i + 1)?;
                    }
                    _ => {}
                }
            }
            _ => {
                // A number, `true`, `false` or `null`.
                let start = i;
                while i + 1 < bytes.len()
                    && !matches!(
                        bytes[i + 1],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':' | b'"' | b'{' | b'['
                    )
                {
                    i += 1;
                }
                if let Some(Frame::Object { member: Some(m), .. }) = scan.stack.last_mut() {
                    m.value = start;
                    scan.member_done(i + 1)?;
                }
            }
        }
        i += 1;
    }
    if !scan.stack.is_empty() {
        return None;
    }
    let mut edits = scan.edits;
    edits.extend(
        scan.firsts.into_iter().filter_map(|f| Some(Edit { start: f.value.0, end: f.value.1, with: Some(f.last?) })),
    );
    edits.sort_unstable_by_key(|e| e.start);
    Some(edits)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Duplicates resolved as `Value` resolves them (last value, first place), in any object
    /// at any depth, keys compared unescaped, whitespace and number texts kept.
    #[test]
    fn resolve_duplicates_keeps_the_last_value_at_the_first_place() {
        let cases = [
            (r#"{"a":1,"b":2,"a":3}"#, Some(r#"{"a":3,"b":2}"#)),
            (r#"{"a":{"x":1,"x":2},"a":{"y":[1,{"z":1,"z":2}],"y":0}}"#, Some(r#"{"a":{"y":0}}"#)),
            (r#"[{"k":1,"k":2},{"k":3}]"#, Some(r#"[{"k":2},{"k":3}]"#)),
            (r#"{"a":1,"\u0061":2}"#, Some(r#"{"a":2}"#)),
            ("{ \"a\" : 1 ,\n \"b\" : \"}\" ,\n \"a\" : 1.50 }", Some("{ \"a\" : 1.50 ,\n \"b\" : \"}\"  }")),
            (r#"{"a":1,"b":2}"#, None),
            (r#"{"a":"#, None),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_duplicates(text).as_deref(), want, "{text}");
            if let Some(want) = want {
                assert_eq!(
                    serde_json::from_str::<Value>(text).unwrap(),
                    serde_json::from_str::<Value>(want).unwrap(),
                    "{text}"
                );
            }
        }
    }

    /// Any depth, in bounded stack: 100,000 levels, each object with its key twice, on a 256 KiB
    /// stack (a recursive rewrite overflows it a few thousand levels down).
    #[test]
    fn resolve_duplicates_is_iterative() {
        let depth = 100_000;
        let text = format!("{}0{}", r#"{"a":0,"a":"#.repeat(depth), "}".repeat(depth));
        let resolved = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || resolve_duplicates(&text))
            .unwrap()
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(resolved, format!("{}0{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)));
    }
}
