//! The one rule for comparing a message with its re-encoding, and the JSON paths that name
//! where they differ.
//!
//! Decoding a message and encoding it again gives back the same JSON value, under these rules
//! (the crate docs, "`null` and absent members", say why):
//!
//! - **`null` and absent**: an object member whose value is `null` equals an absent member,
//!   except where the type is `Option<Option<T>>`. [`differences`] reports each such pair as
//!   [`Difference::NullOrAbsent`], so a caller that knows the types (the drift check) can
//!   tell the exception; [`equivalent`] takes them as equal.
//! - **Numbers** are compared by value: integers exactly; anything else as
//!   `f64`, a few units in the last place apart allowed, because `serde_json` without its
//!   `float_roundtrip` feature (which this crate does not turn on for its users) may read a
//!   float's text back one unit in the last place off. `1` equals `1.0`.
//! - **The top-level `jsonrpc` member** is not compared: the crate reads it and does not
//!   write it (`jsonrpc` inside `params` is compared like any member).
//! - **Empty `params`**: the original's top-level `"params": {}` equals absent `params`. A
//!   method without params reads `{}`, `null` and no `params` alike, as codex does, and is
//!   written without them; every other message writes back the `{}` it read.
//!
//! Each difference names where it is with a [`JsonPath`] (`params.thread.turns[0].status`).
//!
//! ```
//! use codex_app_protocol::roundtrip::{differences, equivalent, Difference};
//! use serde_json::json;
//!
//! let original = json!({"jsonrpc": "2.0", "method": "x", "params": {"a": null, "n": 1, "gone": 2}});
//! let reencoded = json!({"method": "x", "params": {"n": 1.0}});
//! assert!(!equivalent(&original, &reencoded));
//! let found = differences(&original, &reencoded);
//! assert_eq!(found.len(), 2);
//! assert!(matches!(&found[0], Difference::NullOrAbsent { path, original_null: true } if path == "params.a"));
//! assert!(matches!(&found[1], Difference::Missing { path, .. } if path == "params.gone"));
//! ```

use serde_json::{Number, Value};

use crate::path::{JsonPath, Step};

/// Where a message and its re-encoding differ, under the rules of the [module](self).
#[derive(Debug, Clone, PartialEq)]
pub enum Difference<'a> {
    /// A member of the original that the re-encoding does not have (and that is not `null`):
    /// a member the types do not know.
    Missing { path: JsonPath, original: &'a Value },
    /// A member the re-encoding adds (and that is not `null`).
    Added { path: JsonPath, reencoded: &'a Value },
    /// An array re-encoded with another number of elements.
    Length { path: JsonPath, original: usize, reencoded: usize },
    /// A value re-encoded as another.
    Changed { path: JsonPath, original: &'a Value, reencoded: &'a Value },
    /// `null` on one side, absent on the other: equal, unless the member is an
    /// `Option<Option<T>>`. `original_null`: the original had the `null`.
    NullOrAbsent { path: JsonPath, original_null: bool },
}

impl Difference<'_> {
    /// Where the difference is ([`JsonPath::root`] for the whole message).
    pub fn path(&self) -> &JsonPath {
        match self {
            Difference::Missing { path, .. }
            | Difference::Added { path, .. }
            | Difference::Length { path, .. }
            | Difference::Changed { path, .. }
            | Difference::NullOrAbsent { path, .. } => path,
        }
    }
}

/// Every difference between a message (`original`) and its re-encoding: per object, the
/// members of the original, then those the re-encoding adds, each in the order of
/// `serde_json::Map`.
pub fn differences<'a>(original: &'a Value, reencoded: &'a Value) -> Vec<Difference<'a>> {
    let mut out = Vec::new();
    compare(original, reencoded, &mut Vec::new(), &mut out);
    out
}

/// Whether `reencoded` is the same message as `original`: no differences but `null` against
/// absent.
pub fn equivalent(original: &Value, reencoded: &Value) -> bool {
    differences(original, reencoded).iter().all(|d| matches!(d, Difference::NullOrAbsent { .. }))
}

/// The re-encoding of a message (or any value of this crate) as a `Value`: its wire text, read
/// back.
///
/// What `serde_json::to_value` gives, through the encoder that sending uses
/// ([`Message::to_line`](crate::jsonrpc::Message::to_line), `serde_json::to_string`). Each type's
/// `Serialize` is compiled once per serializer it is used with, and `to_value`'s is a second
/// one: a crate that both sends messages and looks at their JSON compiles every type's encoder
/// twice with it, and once with this.
///
/// Unlike `to_value`, it fails on JSON nested deeper than `serde_json` reads (128 levels), as
/// codex's own reader does, and a float may come back a unit in the last place off (see the
/// [module](self)).
///
/// ```
/// use codex_app_protocol::roundtrip::reencode;
/// use codex_app_protocol::ServerNotification;
/// use serde_json::json;
///
/// let value = json!({"threadId": "t", "turnId": "u", "delta": "hi", "itemId": "i"});
/// let notification: ServerNotification =
///     serde_json::from_value(json!({"method": "item/agentMessage/delta", "params": value}))?;
/// assert_eq!(reencode(&notification)?["params"], value);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn reencode<T: serde::Serialize>(value: T) -> serde_json::Result<Value> {
    serde_json::from_slice(&serde_json::to_vec(&value)?)
}

/// Whether two JSON numbers are the same value: integers exactly, anything else (floats, and
/// integers beyond 64 bits, which a `Value` holds as floats) as `f64`, up to 4 units in the
/// last place apart.
fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        // One side an integer that the other side's type cannot hold: different values.
        (Some(_), _, _, Some(_)) | (_, Some(_), Some(_), _) => false,
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= x.abs().max(y.abs()) * 4.0 * f64::EPSILON,
            _ => false,
        },
    }
}

// `serde_json` bounds the nesting of a `Value` it parses (128 levels), which bounds this
// recursion.
fn compare<'a>(original: &'a Value, reencoded: &'a Value, path: &mut Vec<Step<'a>>, out: &mut Vec<Difference<'a>>) {
    let here = |path: &[Step<'_>]| JsonPath::from_steps(path);
    match (original, reencoded) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, av) in a {
                if path.is_empty() && key == "jsonrpc" {
                    continue;
                }
                path.push(Step::Key(key));
                match (av, b.get(key)) {
                    (_, Some(bv)) => compare(av, bv, path, out),
                    (Value::Null, None) => out.push(Difference::NullOrAbsent { path: here(path), original_null: true }),
                    (Value::Object(params), None) if path.len() == 1 && key == "params" && params.is_empty() => {}
                    (_, None) => out.push(Difference::Missing { path: here(path), original: av }),
                }
                path.pop();
            }
            for (key, bv) in b {
                if a.contains_key(key) {
                    continue;
                }
                path.push(Step::Key(key));
                out.push(match bv {
                    Value::Null => Difference::NullOrAbsent { path: here(path), original_null: false },
                    _ => Difference::Added { path: here(path), reencoded: bv },
                });
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() != b.len() => {
            out.push(Difference::Length { path: here(path), original: a.len(), reencoded: b.len() })
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                path.push(Step::Index(i));
                compare(av, bv, path, out);
                path.pop();
            }
        }
        (Value::Number(a), Value::Number(b)) if same_number(a, b) => {}
        (a, b) if a == b => {}
        (a, b) => out.push(Difference::Changed { path: here(path), original: a, reencoded: b }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rule() {
        let original =
            json!({"jsonrpc": "2.0", "a": {"x": 1, "gone": [1], "nil": null}, "n": [1, 2.5], "f": 1, "s": "x"});
        let reencoded = json!({"a": {"x": 1.0, "new": true, "also": null}, "n": [1, 2.5, 3], "f": 2, "s": "x"});
        let found = differences(&original, &reencoded);
        let paths: Vec<String> = found.iter().map(|d| d.path().to_string()).collect();
        assert_eq!(paths, ["a.gone", "a.nil", "a.also", "a.new", "f", "n"]);
        assert!(matches!(found[0], Difference::Missing { original, .. } if original == &json!([1])));
        assert!(matches!(found[1], Difference::NullOrAbsent { original_null: true, .. }));
        assert!(matches!(found[2], Difference::NullOrAbsent { original_null: false, .. }));
        assert!(matches!(found[5], Difference::Length { original: 2, reencoded: 3, .. }));
        // `jsonrpc` is only left out at the top.
        let (a, b) = (json!({"p": {"jsonrpc": "2.0"}}), json!({"p": {}}));
        assert_eq!(differences(&a, &b).len(), 1);
        assert!(equivalent(&json!({"a": null, "b": [1, {"c": null}]}), &json!({"b": [1.0, {}], "d": null})));
        assert!(!equivalent(&json!({"a": 1}), &json!({"a": 1, "b": 0})));
    }

    #[test]
    fn empty_params_equal_none_only_at_the_top() {
        let none = json!({"id": 1, "method": "account/logout"});
        assert_eq!(differences(&json!({"id": 1, "method": "account/logout", "params": {}}), &none), []);
        let (params, nested, empty) = (
            json!({"id": 1, "method": "account/logout", "params": {"a": 1}}),
            json!({"method": "x", "params": {"p": {}}}),
            json!({"method": "x", "params": {}}),
        );
        assert!(matches!(&differences(&params, &none)[..], [Difference::Missing { path, .. }] if path == "params"));
        assert!(matches!(&differences(&nested, &empty)[..], [Difference::Missing { path, .. }] if path == "params.p"));
        assert_eq!(differences(&json!({"result": {"params": {}}}), &json!({"result": {}})).len(), 1);
    }

    /// A path of the round trip and one from the text of a decode error ([`crate::codec`]'s
    /// `path_at`) name the same place alike, for keys that need quoting (the rule itself:
    /// [`crate::path`]'s tests).
    #[test]
    fn paths_of_keys_that_need_quoting() {
        type Nested = std::collections::HashMap<String, std::collections::HashMap<String, String>>;
        for key in ["a.b", "a[0]", "say \"hi\"", "src/a b.rs", "", "café", "0a-b_$"] {
            let want = JsonPath::root().key("x").key(key);
            let (object, empty) = (json!({ "x": { key: null } }), json!({"x": {}}));
            let found = differences(&object, &empty);
            assert_eq!(found[0].path(), &want, "{key}: the round trip's path");
            let text = format!(r#"{{"x":{{{}:7}}}}"#, serde_json::to_string(key).unwrap());
            let error = serde_json::from_str::<Nested>(&text).unwrap_err();
            let at = crate::codec::path_at(&text, crate::codec::error_offset(&text, &error));
            assert_eq!(at, want, "{key}: the decode error's path");
        }
        // An escaped key is named as it reads.
        let text = r#"{"x":{"a\u0020b":7}}"#;
        let error = serde_json::from_str::<Nested>(text).unwrap_err();
        assert_eq!(crate::codec::path_at(text, crate::codec::error_offset(text, &error)), r#"x["a b"]"#);
    }

    #[test]
    fn numbers() {
        let n = |v: Value| match v {
            Value::Number(n) => n,
            _ => unreachable!(),
        };
        assert!(same_number(&n(json!(1)), &n(json!(1.0))));
        assert!(same_number(&n(json!(u64::MAX)), &n(json!(u64::MAX))));
        assert!(!same_number(&n(json!(u64::MAX)), &n(json!(-1))));
        assert!(!same_number(&n(json!(-1)), &n(json!(u64::MAX))));
        assert!(!same_number(&n(json!(i64::MAX)), &n(json!(i64::MAX - 1))), "integers compare exactly");
        let x = 0.1f64 + 0.2;
        assert!(same_number(&n(json!(x)), &n(json!(f64::from_bits(x.to_bits() + 1)))), "one unit in the last place");
        assert!(!same_number(&n(json!(x)), &n(json!(x * (1.0 + 1e-12)))));
    }
}
