//! The check of a message against one release: what it uses that the release lacks.
//!
//! [`Check::new`] reads the tables once for a release and keeps, per type, only what matters
//! to it: the members, values and arms the release lacks, and the members that lead to a type
//! with such a thing. A check then follows those alone: a typed value is walked through its
//! `Serialize` (a member that leads nowhere is not serialized at all), JSON text is read in one
//! pass (a member that leads nowhere is skipped unread), and a method whose params type leads
//! to nothing the release lacks is not looked at. A union is looked at as a whole (its arm is
//! known only from its tag or its shape), as a `serde_json::Value`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use serde::ser::{self, Serialize};
use serde_json::Value;

use super::{owner_row, Kind, Member, Owner, Release, Unknown};
use crate::generated::availability::{METHODS, OWNERS};
use crate::path::JsonPath;

/// What one codex release lacks of the crate's protocol, ready to check messages against.
///
/// Built once per server ([`Check::new`]; `codex-app-client` builds it at the handshake), then
/// used for every message: an older codex silently ignores a params member it does not know
/// (and answers as if it had not been sent: `thread/list` with `includedThreadIds` lists every
/// thread), and refuses an enum value it does not know, so a client checks what it sends.
///
/// ```
/// use codex_app_protocol::availability::{Check, Release};
///
/// let check = Check::new(&Release::parse("0.169.0").unwrap());
/// let params = serde_json::json!({ "includedThreadIds": ["t1"], "limit": 5 });
/// let lacked = check.params("thread/list", &params).unwrap();
/// assert_eq!(lacked[0].path, "params.includedThreadIds");
/// assert_eq!(lacked[0].availability.since, "0.171.0");
/// ```
#[derive(Clone)]
pub struct Check {
    release: Release,
    /// One per row of the owners' table: `None` when nothing reachable from the type is
    /// missing from the release.
    plans: Box<[Option<Plan>]>,
    /// The methods whose params or result have something to look at: the rows of their plans.
    methods: HashMap<&'static str, (Option<usize>, Option<usize>), BuildHasherDefault<NameHasher>>,
}

/// What to look at in a value of one type.
#[derive(Clone)]
struct Plan {
    owner: &'static Owner,
    /// Each member the release lacks or that leads to a type with something to look at.
    members: Box<[Step]>,
    /// The same of its enum values and union arms.
    values: Box<[Step]>,
    /// Bit `len % 64` set for the length of each wire name of `members` (of `values`): most
    /// names looked up are not there, and are told so without a comparison.
    member_lengths: u64,
    value_lengths: u64,
}

#[derive(Clone, Copy)]
struct Step {
    /// The member's wire name (as in `member`, kept here so a lookup reads the steps alone).
    wire: &'static str,
    member: &'static Member,
    /// The release lacks it.
    lacked: bool,
    /// The plan (its row) of the type it leads to, when that type has something to look at.
    child: Option<usize>,
}

impl Plan {
    fn new(owner: &'static Owner, steps: impl Iterator<Item = Step>) -> Plan {
        let (members, values): (Vec<Step>, Vec<Step>) = steps.partition(|s| !s.member.value);
        let lengths = |steps: &[Step]| steps.iter().fold(0u64, |bits, s| bits | 1 << (s.wire.len() % 64));
        Plan {
            owner,
            member_lengths: lengths(&members),
            value_lengths: lengths(&values),
            members: members.into(),
            values: values.into(),
        }
    }

    /// A union's arm is known only from its tag or its shape: such a value is read whole.
    fn whole(&self) -> bool {
        matches!(self.owner.kind, Kind::Tagged | Kind::Untagged)
    }

    fn member(&self, wire: &str) -> Option<&Step> {
        find(&self.members, self.member_lengths, wire)
    }

    fn value(&self, wire: &str) -> Option<&Step> {
        find(&self.values, self.value_lengths, wire)
    }
}

fn find<'p>(steps: &'p [Step], lengths: u64, wire: &str) -> Option<&'p Step> {
    if lengths & (1 << (wire.len() % 64)) == 0 {
        return None;
    }
    // The lengths first: the bytes are compared only for a name as long (a plan has a few
    // steps, and most names looked up are not among them).
    let first = wire.as_bytes().first();
    steps.iter().find(|s| s.wire.len() == wire.len() && s.wire.as_bytes().first() == first && s.wire == wire)
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let types = self.plans.iter().flatten().count();
        f.debug_struct("Check").field("release", &self.release).field("types_to_look_at", &types).finish()
    }
}

impl Check {
    /// Reads the tables for `release`. A release at least as new as the crate lacks nothing
    /// the crate knows; one older than [`FLOOR`](super::FLOOR) is taken to have what the floor
    /// has.
    pub fn new(release: &Release) -> Check {
        let newest = release.compare_to(crate::CODEX_VERSION).is_ge();
        let lacked: Vec<Vec<bool>> = OWNERS
            .iter()
            .map(|o| {
                o.members.iter().map(|m| !newest && m.availability().is_some_and(|a| !a.in_release(release))).collect()
            })
            .collect();
        let children: Vec<Vec<Option<usize>>> =
            OWNERS.iter().map(|o| o.members.iter().map(|m| owner_row(m.child)).collect()).collect();
        // A type has something to look at when it lacks something itself or leads to a type
        // that has (types may be recursive: grown until nothing changes).
        let mut marked: Vec<bool> = lacked.iter().map(|l| l.contains(&true)).collect();
        loop {
            let mut grew = false;
            for (row, children) in children.iter().enumerate() {
                if !marked[row] && children.iter().flatten().any(|&c| marked[c]) {
                    marked[row] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let plans = OWNERS
            .iter()
            .enumerate()
            .map(|(row, owner)| {
                marked[row].then(|| {
                    let steps = owner.members.iter().enumerate().filter_map(|(i, member)| {
                        let child = children[row][i].filter(|&c| marked[c]);
                        (lacked[row][i] || child.is_some()).then_some(Step {
                            wire: member.wire,
                            member,
                            lacked: lacked[row][i],
                            child,
                        })
                    });
                    Plan::new(owner, steps)
                })
            })
            .collect::<Box<[_]>>();
        let plan_row = |owner: &str| owner_row(owner).filter(|&row| plans[row].is_some());
        let methods = METHODS
            .iter()
            .map(|m| (m.0, (plan_row(m.3), plan_row(m.4))))
            .filter(|(_, rows)| rows.0.is_some() || rows.1.is_some())
            .collect();
        Check { release: release.clone(), plans, methods }
    }

    /// The release checked against.
    pub fn release(&self) -> &Release {
        &self.release
    }

    /// Whether the release lacks nothing the crate knows (it is at least as new as the crate).
    pub fn lacks_nothing(&self) -> bool {
        self.plans.iter().all(Option::is_none)
    }

    /// What the params of `method` use that the release does not have: members, enum values
    /// and union arms, each with its path (`params.includedThreadIds`; through objects,
    /// arrays and unions; the values of a map of arbitrary keys are not looked into). `params`
    /// is anything that serializes as the params do: the typed params, or a
    /// `serde_json::Value`. Empty for a method the crate does not know. An error when
    /// `params` fails to serialize, or serializes as no message of the protocol does (an enum
    /// variant with fields, which JSON writes as an object keyed by the variant's name).
    pub fn params<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<Vec<Unknown>, serde_json::Error> {
        self.typed(self.params_plan(method), "params", params)
    }

    /// [`Check::params`] for the result of a request (what a client answers a server request
    /// with): paths start at `result`.
    pub fn result<R: Serialize + ?Sized>(&self, method: &str, result: &R) -> Result<Vec<Unknown>, serde_json::Error> {
        self.typed(self.result_plan(method), "result", result)
    }

    /// [`Check::params`] for params as JSON text (what a client has just encoded), read in one
    /// pass: only the members that lead to something the release lacks are looked into. An
    /// error when the text is not JSON.
    pub fn params_text(&self, method: &str, params: &str) -> Result<Vec<Unknown>, serde_json::Error> {
        self.text(self.params_plan(method), "params", params)
    }

    /// [`Check::params_text`] for the result of a request: paths start at `result`.
    pub fn result_text(&self, method: &str, result: &str) -> Result<Vec<Unknown>, serde_json::Error> {
        self.text(self.result_plan(method), "result", result)
    }

    /// The plan of `method`'s params, when they have something to look at.
    fn params_plan(&self, method: &str) -> Option<&Plan> {
        self.methods.get(method)?.0.map(|row| self.plan(row))
    }

    /// The plan of `method`'s result, when it has something to look at.
    fn result_plan(&self, method: &str) -> Option<&Plan> {
        self.methods.get(method)?.1.map(|row| self.plan(row))
    }

    fn plan(&self, row: usize) -> &Plan {
        self.plans[row].as_ref().expect("a step leads only to a type with a plan")
    }

    fn typed<T: Serialize + ?Sized>(
        &self,
        plan: Option<&Plan>,
        root: &'static str,
        value: &T,
    ) -> Result<Vec<Unknown>, serde_json::Error> {
        let mut out = Vec::new();
        let Some(plan) = plan else { return Ok(out) };
        let mut path = JsonPath::root();
        let mut at = At { check: self, root, path: &mut path, out: &mut out };
        if plan.whole() {
            at.value(plan, &serde_json::to_value(value)?, 0);
        } else {
            value.serialize(Walker { at, plan })?;
        }
        out.dedup();
        Ok(out)
    }

    fn text(&self, plan: Option<&Plan>, root: &'static str, text: &str) -> Result<Vec<Unknown>, serde_json::Error> {
        let mut out = Vec::new();
        let Some(plan) = plan else { return Ok(out) };
        let mut path = JsonPath::root();
        let mut de = serde_json::Deserializer::from_str(text);
        let at = At { check: self, root, path: &mut path, out: &mut out };
        serde::de::DeserializeSeed::deserialize(Stream { at, plan, depth: 0 }, &mut de)?;
        de.end()?;
        out.dedup();
        Ok(out)
    }
}

/// The hash of a method name for [`Check`]'s map: FxHash (rustc's), a multiply and a rotate
/// per 8 bytes. The map holds the crate's own names and is only read, so a name chosen to
/// collide can slow its own lookup, nothing else.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Where a check is: its path so far (below `root`: built only as far as a member that leads
/// somewhere) and what it found.
struct At<'a> {
    check: &'a Check,
    root: &'static str,
    path: &'a mut JsonPath,
    out: &'a mut Vec<Unknown>,
}

impl At<'_> {
    fn reborrow(&mut self) -> At<'_> {
        At { check: self.check, root: self.root, path: self.path, out: self.out }
    }

    fn report(&mut self, plan: &Plan, step: &Step) {
        if !step.lacked {
            return;
        }
        let m = step.member;
        if let Some(availability) = m.availability() {
            let sep = if m.value { "::" } else { "." };
            self.out.push(Unknown {
                path: JsonPath::root().key(self.root).join(self.path),
                item: format!("{}{sep}{}", plan.owner.name, m.wire),
                availability,
                is_value: m.value,
            });
        }
    }

    /// A value of `plan`'s type, read whole.
    fn value(&mut self, plan: &Plan, value: &Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push_index(i);
                    self.value(plan, item, depth + 1);
                    self.path.pop();
                }
            }
            Value::String(s) => {
                if let Some(step) = plan.value(s) {
                    self.report(plan, step);
                }
            }
            Value::Object(map) => {
                let tag = (plan.owner.kind == Kind::Tagged).then_some(plan.owner.tag);
                if let Some(arm) = tag.and_then(|t| map.get(t)).and_then(Value::as_str).and_then(|t| plan.value(t)) {
                    // At the object's path: stripping an arm removes the whole object.
                    self.report(plan, arm);
                    if let Some(payload) = arm.child {
                        self.value(self.check.plan(payload), value, depth + 1);
                    }
                }
                for (key, v) in map {
                    if Some(key.as_str()) == tag {
                        continue;
                    }
                    if let Some(step) = plan.member(key) {
                        self.path.push_key(key);
                        self.report(plan, step);
                        if let Some(child) = step.child {
                            self.value(self.check.plan(child), v, depth + 1);
                        }
                        self.path.pop();
                    }
                }
            }
            _ => {}
        }
        // An untagged union: the value against each arm's type.
        if plan.owner.kind == Kind::Untagged && !value.is_array() {
            for step in plan.values.iter() {
                if let Some(child) = step.child {
                    self.value(self.check.plan(child), value, depth + 1);
                }
            }
        }
    }

    /// A member's value whose step leads to `child`.
    fn child<T: Serialize + ?Sized>(&mut self, child: usize, value: &T) -> Result<(), serde_json::Error> {
        let plan = self.check.plan(child);
        if plan.whole() {
            self.value(plan, &serde_json::to_value(value)?, 0);
            Ok(())
        } else {
            value.serialize(Walker { at: self.reborrow(), plan })
        }
    }
}

/// How deep text is read before the rest is skipped (the typed walk is as deep as its value).
const MAX_DEPTH: usize = 64;

/// A one-pass reader of JSON text of a plan's type.
struct Stream<'a, 'p> {
    at: At<'a>,
    plan: &'p Plan,
    depth: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for Stream<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(mut self, deserializer: D) -> Result<(), D::Error> {
        if self.plan.whole() || self.depth > MAX_DEPTH {
            let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
            self.at.value(self.plan, &value, self.depth);
            return Ok(());
        }
        deserializer.deserialize_any(self)
    }
}

/// A member name, borrowed from the text where it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl<'de> serde::de::Visitor<'de> for Stream<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let Some(step) = self.plan.member(&key) else {
                // Nothing the release lacks is in it: skipped unread.
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            self.at.path.push_key(&key);
            self.at.report(self.plan, step);
            match step.child {
                Some(child) => {
                    let plan = self.at.check.plan(child);
                    map.next_value_seed(Stream { at: self.at.reborrow(), plan, depth: self.depth + 1 })?
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            self.at.path.pop();
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        for i in 0.. {
            self.at.path.push_index(i);
            let more =
                seq.next_element_seed(Stream { at: self.at.reborrow(), plan: self.plan, depth: self.depth + 1 })?;
            self.at.path.pop();
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_str<E>(mut self, v: &str) -> Result<(), E> {
        if let Some(step) = self.plan.value(v) {
            self.at.report(self.plan, step);
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Walks a typed value of a plan's type (a struct's or an enum's: unions are read whole)
/// through its `Serialize`: a member is looked at by its name, and its value serialized only
/// when it leads to something the release lacks. A value whose shape is not its type's (a
/// number where an object is expected) has nothing to look at.
struct Walker<'a, 'p> {
    at: At<'a>,
    plan: &'p Plan,
}

/// Serializer methods that have nothing to look at: each returns `$ok`.
macro_rules! nothing {
    ($ok:expr; $($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self::Ok, serde_json::Error> { Ok($ok) })*
    };
}

/// What a scalar is to a serializer of this module: nothing to look at (`$ok`). An option and a
/// newtype are their value; an enum variant with a value is no shape of the protocol.
macro_rules! scalars {
    ($ok:expr) => {
        nothing! { $ok;
            serialize_bool(bool);
            serialize_i8(i8);
            serialize_i16(i16);
            serialize_i32(i32);
            serialize_i64(i64);
            serialize_i128(i128);
            serialize_u8(u8);
            serialize_u16(u16);
            serialize_u32(u32);
            serialize_u64(u64);
            serialize_u128(u128);
            serialize_f32(f32);
            serialize_f64(f64);
            serialize_char(char);
            serialize_bytes(&[u8]);
            serialize_none();
            serialize_unit();
            serialize_unit_struct(&'static str);
        }

        fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, serde_json::Error> {
            value.serialize(self)
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            value: &T,
        ) -> Result<Self::Ok, serde_json::Error> {
            value.serialize(self)
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, serde_json::Error> {
            Ok($ok)
        }
    };
}

impl<'a, 'p> ser::Serializer for Walker<'a, 'p> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Items<'a, 'p>;
    type SerializeTuple = Items<'a, 'p>;
    type SerializeTupleStruct = Items<'a, 'p>;
    type SerializeTupleVariant = ser::Impossible<(), serde_json::Error>;
    type SerializeMap = Members<'a, 'p>;
    type SerializeStruct = Members<'a, 'p>;
    type SerializeStructVariant = ser::Impossible<(), serde_json::Error>;

    scalars!(());

    fn serialize_str(mut self, v: &str) -> Result<(), serde_json::Error> {
        if let Some(step) = self.plan.value(v) {
            self.at.report(self.plan, step);
        }
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), serde_json::Error> {
        self.serialize_str(variant)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Items<'a, 'p>, serde_json::Error> {
        Ok(Items { walker: self, index: 0 })
    }

    fn serialize_tuple(self, len: usize) -> Result<Items<'a, 'p>, serde_json::Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Items<'a, 'p>, serde_json::Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(ser::Error::custom(format_args!("`{name}::{variant}` is not a shape of the protocol")))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Members<'a, 'p>, serde_json::Error> {
        Ok(Members { walker: self, step: None })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Members<'a, 'p>, serde_json::Error> {
        self.serialize_map(None)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(ser::Error::custom(format_args!("`{name}::{variant}` is not a shape of the protocol")))
    }
}

/// The items of an array of a plan's type.
struct Items<'a, 'p> {
    walker: Walker<'a, 'p>,
    index: usize,
}

impl ser::SerializeSeq for Items<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        let at = &mut self.walker.at;
        at.path.push_index(self.index);
        self.index += 1;
        let walked = value.serialize(Walker { at: at.reborrow(), plan: self.walker.plan });
        at.path.pop();
        walked
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

/// A tuple is walked as an array.
macro_rules! items_of_a_tuple {
    ($($tr:ident::$method:ident),*) => {
        $(impl ser::$tr for Items<'_, '_> {
            type Ok = ();
            type Error = serde_json::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
                ser::SerializeSeq::serialize_element(self, value)
            }
            fn end(self) -> Result<(), serde_json::Error> {
                Ok(())
            }
        })*
    };
}

items_of_a_tuple!(SerializeTuple::serialize_element, SerializeTupleStruct::serialize_field);

/// The members of an object of a plan's type.
struct Members<'a, 'p> {
    walker: Walker<'a, 'p>,
    /// The step of the key just written, when it has one.
    step: Option<&'p Step>,
}

impl<'p> Members<'_, 'p> {
    fn member<T: Serialize + ?Sized>(&mut self, step: &'p Step, value: &T) -> Result<(), serde_json::Error> {
        let plan = self.walker.plan;
        let at = &mut self.walker.at;
        at.path.push_key(step.member.wire);
        at.report(plan, step);
        let walked = match step.child {
            Some(child) => at.child(child, value),
            None => Ok(()),
        };
        at.path.pop();
        walked
    }
}

impl ser::SerializeMap for Members<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), serde_json::Error> {
        self.step = key.serialize(KeyOf(self.walker.plan)).unwrap_or(None);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        match self.step.take() {
            Some(step) => self.member(step, value),
            None => Ok(()),
        }
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

impl ser::SerializeStruct for Members<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        match self.walker.plan.member(key) {
            Some(step) => self.member(step, value),
            None => Ok(()),
        }
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

/// A map key's step in a plan: a key is a string (anything else names no member).
struct KeyOf<'p>(&'p Plan);

impl<'p> ser::Serializer for KeyOf<'p> {
    type Ok = Option<&'p Step>;
    type Error = serde_json::Error;
    type SerializeSeq = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeTuple = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeTupleStruct = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeTupleVariant = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeMap = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeStruct = ser::Impossible<Self::Ok, serde_json::Error>;
    type SerializeStructVariant = ser::Impossible<Self::Ok, serde_json::Error>;

    fn serialize_str(self, v: &str) -> Result<Self::Ok, serde_json::Error> {
        Ok(self.0.member(v))
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, serde_json::Error> {
        self.serialize_str(variant)
    }

    scalars!(None);

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(ser::Error::custom("a key is a string"))
    }
}
