//! Internally tagged unions (`{"type": "userMessage", ...}`): the tag read first and the arm
//! decoded from the same object; a tag that comes later (or is given again with another
//! value) makes the decoder read the object twice: once for the tag, once for the arm.

use serde::de::Error as _;
use serde_json::{Map, Value};

use super::reader::{Mark, Object, Reader, Result, Tag};
use super::Decode;

/// A union of objects told apart by a tag member.
pub trait TaggedUnion: Sized {
    /// The tag member's name.
    const TAG: &'static str;
    const EXPECTING: &'static str;
    /// Decodes the arm for `tag` from the rest of `object` (the reader skips the tag member);
    /// an unknown tag keeps the object that starts at `start` with [`unrecognized_arm`].
    fn decode_arm(tag: &str, reader: &mut Reader<'_>, object: Object, start: Mark) -> Result<Self>;
}

/// The whole object of an unknown tagged arm (the one at `start`), the tag among its members.
pub fn unrecognized_arm(reader: &mut Reader<'_>, start: Mark) -> Result<Map<String, Value>> {
    reader.rewind(start);
    Map::decode(reader)
}

/// A tagged union's [`Decode`]. Out of line: a caller holds a call, not one more copy of the
/// union's dispatch.
#[inline(never)]
pub fn decode_tagged<T: TaggedUnion>(reader: &mut Reader<'_>) -> Result<T> {
    let start = reader.mark();
    let mut object = reader.begin_object(T::EXPECTING)?;
    let Some(first) = reader.next_key(&mut object)? else {
        return Err(serde_json::Error::missing_field(T::TAG));
    };
    if first == T::TAG {
        let tag = reader.string_for("a string")?;
        let outer = reader.set_tag(Some(Tag { name: T::TAG, value: Some(tag.clone()), depth: reader.depth() }));
        let read = T::decode_arm(&tag, reader, object, start);
        reader.set_tag(outer);
        match read {
            // The tag again, with another value: the last one counts.
            Err(_) if std::mem::take(&mut reader.retag) => {}
            read => return read,
        }
    }
    tag_later::<T>(reader, start)
}

/// The tag is not the first member, or was given again with another value: the object is read
/// for its tag (the last one counts, as for every member), then again for the arm, every tag
/// member skipped.
#[cold]
#[inline(never)]
fn tag_later<T: TaggedUnion>(reader: &mut Reader<'_>, start: Mark) -> Result<T> {
    reader.rewind(start);
    let tag = last_tag(reader, T::TAG, T::EXPECTING)?;
    reader.rewind(start);
    let object = reader.begin_object(T::EXPECTING)?;
    let outer = reader.set_tag(Some(Tag { name: T::TAG, value: None, depth: reader.depth() }));
    let read = T::decode_arm(&tag, reader, object, start);
    reader.set_tag(outer);
    read
}

/// The value of the last member `name` of the object at the reader.
fn last_tag<'de>(reader: &mut Reader<'de>, name: &'static str, expecting: &str) -> Result<std::borrow::Cow<'de, str>> {
    let mut object = reader.begin_object(expecting)?;
    let mut tag = None;
    while let Some(key) = reader.next_key(&mut object)? {
        if key == name {
            tag = Some(reader.string_for("a string")?);
        } else {
            reader.skip_value()?;
        }
    }
    tag.ok_or_else(|| serde_json::Error::missing_field(name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::value::RawValue;

    use crate::wire_macros::{wire_struct, wire_tagged};

    // A recursive union: the arm whose payload holds the union is boxed (`Neg`), and is read
    // by `Box<NegExpr>`'s `visit_members`, which no generated type of the vendored release
    // has.
    wire_struct! {
        #[derive(Debug, Clone, PartialEq)]
        pub struct LitExpr {
            pub value: i64 = "value" (required),
        }
    }
    wire_struct! {
        #[derive(Debug, Clone, PartialEq)]
        pub struct NegExpr {
            pub operand: Expr = "operand" (required),
        }
    }
    wire_tagged! {
        #[derive(Debug, Clone, PartialEq)]
        pub enum Expr (tag = "type") {
            Lit(LitExpr) = "lit",
            Neg(Box<NegExpr>) = "neg",
        }
    }

    fn neg(operand: Expr) -> Expr {
        Expr::Neg(Box::new(NegExpr { operand }))
    }

    #[test]
    fn a_boxed_arm_decodes_and_round_trips() {
        let expected = neg(neg(Expr::Lit(LitExpr { value: 3 })));
        let wire = json!({"type": "neg", "operand": {"type": "neg", "operand": {"type": "lit", "value": 3}}});
        // The tag first (read in one pass), the tag last (read twice), and a tag given again
        // with another value (the last one counts).
        let tag_last = r#"{"operand": {"operand": {"value": 3, "type": "lit"}, "type": "neg"}, "type": "neg"}"#;
        let retagged =
            r#"{"type": "lit", "operand": {"type": "neg", "operand": {"type": "lit", "value": 3}}, "type": "neg"}"#;
        for text in [wire.to_string().as_str(), tag_last, retagged] {
            let decoded: Expr = serde_json::from_str(text).unwrap();
            assert_eq!(decoded, expected, "{text}");
            assert_eq!(crate::roundtrip::reencode(&decoded).unwrap(), wire, "{text}");
        }
    }

    #[test]
    fn a_boxed_arm_reports_its_members_errors() {
        for (text, path, message) in [
            (r#"{"type":"neg","operand":{"type":"lit","value":"3"}}"#, "operand.value", "invalid type: string \"3\""),
            (r#"{"type":"neg"}"#, "", "missing field `operand`"),
            (r#"{"type":"neg","operand":{"type":"neg","operand":7}}"#, "operand.operand", "invalid type: integer `7`"),
            (r#"{"operand":{"operand":[],"type":"neg"},"type":"neg"}"#, "operand.operand", "invalid type: sequence"),
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
            let e = super::super::decode_raw(Some(&raw), <Expr as super::Decode>::decode).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
            assert!(e.source.to_string().starts_with(message), "{text}: {e}");
        }
    }
}
