//! No decoded value is leaked when a deserializer fails after a visitor returned it, at any
//! depth: a struct or tagged union is decoded into a place its reader owns (`codec::Decode`),
//! so whatever a deserializer does after the visitor, the value is dropped with that place.
//! Counted by the binary's allocator (`counting.rs`), per thread.
//!
//! Written against the types of the vendored codex release (see `written_for_codex!`).

codex_app_protocol::__test_support::written_for_codex! { "0.171.0",

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use codex_app_protocol::{
    AgentMessageDeltaNotification, ApplyPatchApprovalParams, ClientNotification, ClientRequest, Notification, NotificationVisitor, Request,
    RequestVisitor, ServerNotification, ServerRequest, ThreadItem,
};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::counting;

const FAILED: &str = "failed after the visitor";

/// A deserializer that passes everything to `inner` (serde_json's, at the top) and counts the
/// values its visitors return, at every depth: when the count reaches `budget`, it drops the
/// value the visitor gave back and fails, as one that finds something wrong after a value
/// does (a checksum, a length that does not match, an end that is missing).
struct FailsAfter<'b, D> {
    inner: D,
    budget: &'b Cell<usize>,
}

impl<D> FailsAfter<'_, D> {
    fn after<T, E: de::Error>(budget: &Cell<usize>, value: T) -> Result<T, E> {
        let left = budget.get().saturating_sub(1);
        budget.set(left);
        if left == 0 {
            drop(value);
            return Err(E::custom(FAILED));
        }
        Ok(value)
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let budget = self.budget;
            let value = self.inner.$method($($arg,)* Wrapped { visitor, budget })?;
            Self::after(budget, value)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for FailsAfter<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_u8(); deserialize_u16(); deserialize_u32(); deserialize_u64();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str(); deserialize_string();
        deserialize_bytes(); deserialize_byte_buf(); deserialize_option(); deserialize_unit();
        deserialize_unit_struct(name: &'static str); deserialize_newtype_struct(name: &'static str);
        deserialize_seq(); deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map(); deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier(); deserialize_ignored_any();
    }
}

/// The visitor given to the inner deserializer: what it visits inside (a map's or a list's
/// values, an option's value) is read through [`FailsAfter`] too.
struct Wrapped<'b, V> {
    visitor: V,
    budget: &'b Cell<usize>,
}

macro_rules! pass {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrapped<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    pass! {
        visit_bool(bool); visit_i8(i8); visit_i16(i16); visit_i32(i32); visit_i64(i64); visit_u8(u8);
        visit_u16(u16); visit_u32(u32); visit_u64(u64); visit_f32(f32); visit_f64(f64); visit_char(char);
        visit_str(&str); visit_borrowed_str(&'de str); visit_string(String); visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]); visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(FailsAfter { inner, budget: self.budget })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(FailsAfter { inner, budget: self.budget })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(Access { inner: seq, budget: self.budget })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(Access { inner: map, budget: self.budget })
    }

    // JSON has no enums; serde_json gives one only to `deserialize_enum`, which the generated
    // types never ask for.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(data)
    }
}

/// A map's or list's access whose keys, values and items are read through [`FailsAfter`].
struct Access<'b, A> {
    inner: A,
    budget: &'b Cell<usize>,
}

/// A seed whose deserializer is wrapped in [`FailsAfter`].
struct Seed<'b, S> {
    seed: S,
    budget: &'b Cell<usize>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(FailsAfter { inner, budget: self.budget })
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(Seed { seed, budget: self.budget })
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(Seed { seed, budget: self.budget })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, A::Error> {
        self.inner.next_element_seed(Seed { seed, budget: self.budget })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// What the decodes of one text, each failed after another visitor, left.
struct Failed {
    /// The visitors the decode runs (as many decodes failed).
    visitors: usize,
    leaks: Vec<Leak>,
}

/// A decode failed after its `visitor`th visitor left `bytes` in `blocks` allocated, after its
/// error was dropped.
#[derive(Debug)]
#[allow(dead_code)] // Read through `Debug`.
struct Leak {
    visitor: usize,
    bytes: isize,
    blocks: isize,
}

/// For each visitor a decode of `text` as `T` runs (in order), the decode that fails right
/// after it. A text that is not a `T` (the traffic of protocol errors) has none.
fn failing_after_each_visitor<T: DeserializeOwned>(text: &str) -> Failed {
    let mut leaks = Vec::new();
    if serde_json::from_str::<T>(text).is_err() {
        return Failed { visitors: 0, leaks };
    }
    for n in 1.. {
        let budget = Cell::new(n);
        let before = counting::in_use();
        // serde_json's deserializer keeps a buffer (for strings with escapes), dropped here
        // with it, before the count.
        let result = T::deserialize(FailsAfter { inner: &mut serde_json::Deserializer::from_str(text), budget: &budget });
        match result {
            Ok(value) => {
                assert!(budget.get() > 0, "the decode returned its value after the deserializer failed");
                drop(value);
                return Failed { visitors: n - 1, leaks };
            }
            Err(error) => {
                assert!(error.to_string().starts_with(FAILED), "{text}: the decode failed by itself: {error}");
                drop(error);
                let after = counting::in_use();
                if after != before {
                    leaks.push(Leak { visitor: n, bytes: after.0 - before.0, blocks: after.1 - before.1 });
                }
            }
        }
    }
    unreachable!()
}

#[test]
fn a_deserializer_failing_after_the_visitor_leaks_nothing() {
    let delta = r#"{"delta":"some text of the delta","itemId":"item-1","threadId":"thread-1","turnId":"turn-1"}"#;
    // The decode itself, through serde_json, allocates (the struct's strings).
    let before = counting::in_use();
    let decoded = serde_json::from_str::<AgentMessageDeltaNotification>(delta).unwrap();
    assert!(counting::in_use().0 > before.0, "the decoded struct holds heap data");
    drop(decoded);
    assert_eq!(counting::in_use(), before);

    let cases = [
        ("struct", failing_after_each_visitor::<AgentMessageDeltaNotification>(delta)),
        (
            "tagged union, tag first",
            failing_after_each_visitor::<ThreadItem>(r#"{"type":"agentMessage","id":"item-1","text":"some text"}"#),
        ),
        (
            "tagged union, tag last (buffered)",
            failing_after_each_visitor::<ThreadItem>(r#"{"id":"item-1","text":"some text","type":"agentMessage"}"#),
        ),
        (
            // A map of tagged unions (tag first and last), a member given twice, a `null`.
            "map of unions",
            failing_after_each_visitor::<ApplyPatchApprovalParams>(
                r#"{"callId":"call-1","conversationId":"thread-1","fileChanges":{"src/a.rs":{"type":"add","content":"fn a() {}"},"src/b.rs":{"content":"fn b() {}","type":"add"}},"reason":"first","reason":"second","grantRoot":null}"#,
            ),
        ),
    ];
    for (what, Failed { visitors, leaks }) in cases {
        assert!(visitors > 4, "{what}: only {visitors} visitors ran");
        assert!(leaks.is_empty(), "{what}: left allocated after the error: {leaks:?}");
    }
}

/// What a line of a transcript holds to decode: its params, or a response's result, with the
/// type that reads it (from the method table: the marker type's `Params` or `Response`).
enum Decoded {
    Params,
    Result,
}

struct Check<'t> {
    text: &'t str,
    what: Decoded,
}

type Outcome = Option<Failed>;

impl RequestVisitor for Check<'_> {
    type Output = Outcome;

    fn visit<R: Request>(self) -> Outcome {
        Some(match self.what {
            Decoded::Params => failing_after_each_visitor::<R::Params>(self.text),
            Decoded::Result => failing_after_each_visitor::<R::Response>(self.text),
        })
    }

    fn unrecognized(self) -> Outcome {
        None
    }
}

impl NotificationVisitor for Check<'_> {
    type Output = Outcome;

    fn visit<N: Notification>(self) -> Outcome {
        Some(failing_after_each_visitor::<N::Params>(self.text))
    }

    fn unrecognized(self) -> Outcome {
        None
    }
}

/// Every params and result of the recorded traffic of the vendored release, decoded by its
/// method's type through a deserializer that fails after each of its visitors in turn (at
/// every depth: a member, a list's item, a map's value, an option's value, a union's arm).
#[test]
fn no_value_of_the_recorded_traffic_leaks_when_a_nested_visitor_is_failed_after() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traffic/fixtures/0.171.0");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut checked, mut visitors, mut leaks) = (0, 0, Vec::new());
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut methods: BTreeMap<(bool, String), String> = BTreeMap::new();
        for (n, record) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let record: Value = serde_json::from_str(record).unwrap();
            let from_client = record["dir"] == "c2s";
            // A line that is no JSON (the traffic of protocol errors) holds nothing to decode.
            let Ok(message) = serde_json::from_str::<Value>(record["line"].as_str().unwrap()) else { continue };
            let id = message.get("id").map(Value::to_string);
            let params = message.get("params").map_or_else(|| "null".to_owned(), Value::to_string);
            let outcome = match (message.get("method").and_then(Value::as_str), id, message.get("result")) {
                (Some(method), Some(id), _) => {
                    methods.insert((from_client, id), method.to_owned());
                    let check = Check { text: &params, what: Decoded::Params };
                    if from_client { ClientRequest::visit_method(method, check) } else { ServerRequest::visit_method(method, check) }
                }
                (Some(method), None, _) => {
                    let check = Check { text: &params, what: Decoded::Params };
                    if from_client {
                        ClientNotification::visit_method(method, check)
                    } else {
                        ServerNotification::visit_method(method, check)
                    }
                }
                (None, Some(id), Some(result)) => {
                    // A response answers a request that went the other way.
                    let Some(method) = methods.get(&(!from_client, id)) else { continue };
                    let result = result.to_string();
                    let check = Check { text: &result, what: Decoded::Result };
                    if from_client { ServerRequest::visit_method(method, check) } else { ClientRequest::visit_method(method, check) }
                }
                _ => continue,
            };
            let Some(failed) = outcome.filter(|failed| failed.visitors > 0) else { continue };
            checked += 1;
            visitors += failed.visitors;
            leaks.extend(failed.leaks.into_iter().map(|leak| (format!("{name}:{}", n + 1), leak)));
        }
    }
    assert!(checked > 100 && visitors > 5000, "only {checked} values and {visitors} visitors checked");
    assert!(leaks.is_empty(), "left allocated after the error (line, leak): {leaks:?}");
}

}
