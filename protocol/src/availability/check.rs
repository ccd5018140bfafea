//! The check of a message against one release: what it uses that the release lacks.
//!
//! [`Check::new`] reads the tables once for a release and keeps, per type, only what matters
//! to it: the members, values and arms the release lacks, and the members that lead to a type
//! with such a thing. A check is one walk of the message's JSON text (the crate's own reader,
//! no `serde_json::Value` built) that follows those alone: a member that leads nowhere is
//! skipped, not read, and a method whose params type leads to nothing the release lacks is not
//! looked at at all.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;
use serde_json::value::RawValue;

use super::{owner_row, Kind, Member, Owner, Release, Unknown};
use crate::codec::{self, Reader};
use crate::generated::availability::{METHODS, OWNERS};
use crate::path::{JsonPath, Step as PathStep};

/// What one codex release lacks of the crate's protocol, ready to check messages against.
///
/// Built once per server ([`Check::new`]; `codex-app-client` builds it at the handshake), then
/// used for every message: codex silently ignores a params member it does not know (and
/// answers as if it had not been sent: `thread/list` with `includedThreadIds` lists every
/// thread), and refuses a method or an enum value it does not know, so a client checks what it
/// sends. What codex removed counts as lacking in every later release, the crate's own and
/// newer ones included.
///
/// ```
/// use codex_app_protocol::availability::{Check, Release};
/// # if !codex_app_protocol::__test_support::written_for("0.171.0") { return; }
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
    /// What the release lacks, and what leads to it.
    plans: Plans,
    /// The methods the release lacks.
    lacked_methods: usize,
}

/// What a walk of a message looks at, for one question asked of every row of the tables (does
/// the release lack it? is it experimental?).
#[derive(Clone)]
pub(crate) struct Plans {
    /// One per row of the owners' table: `None` when nothing reachable from the type is
    /// wanted.
    plans: Box<[Option<Plan>]>,
    /// The methods whose params or result have something to look at: the rows of their plans.
    methods: HashMap<&'static str, (Option<usize>, Option<usize>), BuildHasherDefault<NameHasher>>,
}

/// What to look at in a value of one type.
#[derive(Clone)]
struct Plan {
    owner: &'static Owner,
    /// Each member that is wanted or that leads to a type with something to look at, in the
    /// order of their [`NameKey`]s (found by a binary search).
    members: Box<[Step]>,
    /// The same of its enum values and union arms.
    values: Box<[Step]>,
}

#[derive(Clone, Copy)]
struct Step {
    member: &'static Member,
    /// The member's name as two numbers, for the search of [`Plan::member`].
    key: NameKey,
    /// The walk reports it.
    wanted: bool,
    /// The plan (its row) of the type it leads to, when that type has something to look at.
    child: Option<usize>,
}

impl Plan {
    fn member(&self, wire: &str) -> Option<&Step> {
        let key = NameKey::of(wire);
        let at = self.members.partition_point(|s| s.key < key);
        self.members[at..].iter().take_while(|s| s.key == key).find(|s| s.member.wire == wire)
    }

    fn value(&self, wire: &str) -> Option<&Step> {
        self.values.iter().find(|s| s.member.wire == wire)
    }
}

/// A name's length and its first eight bytes as a word ([`codec::prefix`]): two names with
/// other keys differ, and two names with the same key are told apart by the rest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct NameKey(usize, u64);

impl NameKey {
    fn of(name: &str) -> NameKey {
        NameKey(name.len(), codec::prefix(name.as_bytes()))
    }
}

/// Something a walk found: where, and the row of the tables it is.
pub(crate) struct Found {
    pub path: JsonPath,
    pub owner: &'static Owner,
    pub member: &'static Member,
}

impl Found {
    /// `Type.member`, or `Type::value` for an enum value or union arm (an externally tagged
    /// union's arm too when its key is a member of the object).
    pub fn item(&self) -> String {
        let sep = if self.is_value() { "::" } else { "." };
        format!("{}{sep}{}", self.owner.name, self.member.wire)
    }

    /// An enum value or union arm rather than a member: every row of an externally tagged
    /// union is an arm, those whose key is a member of the object too.
    pub fn is_value(&self) -> bool {
        self.member.value || self.owner.kind == Kind::External
    }
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let types = self.plans.plans.iter().flatten().count();
        f.debug_struct("Check")
            .field("release", &self.release)
            .field("types_to_look_at", &types)
            .field("methods_lacked", &self.lacked_methods)
            .finish()
    }
}

impl Check {
    /// Reads the tables for `release`. A release older than [`FLOOR`](super::FLOOR) is taken
    /// to have what the floor has; one newer than the crate, what the crate's own release has
    /// (what codex removed stays removed).
    pub fn new(release: &Release) -> Check {
        let plans = Plans::new(|m| m.availability().is_some_and(|a| !a.in_release(release)));
        let lacked_methods = METHODS.iter().filter(|m| !m.availability.in_release(release)).count();
        Check { release: release.clone(), plans, lacked_methods }
    }

    /// The release checked against.
    pub fn release(&self) -> &Release {
        &self.release
    }

    /// Whether the release lacks nothing the crate knows: no method, member, enum value or
    /// union arm of the crate is missing from it.
    pub fn lacks_nothing(&self) -> bool {
        self.lacked_methods == 0 && self.plans.plans.iter().all(Option::is_none)
    }

    /// What the params of `method` use that the release does not have: members, enum values
    /// and union arms, each with its path (`params.includedThreadIds`; through objects,
    /// arrays and unions; the values of a map of arbitrary keys are not looked into). `params`
    /// is anything that serializes as the params do: the typed params, a `serde_json::Value`,
    /// or JSON text as a `serde_json::value::RawValue` (which [`Check::params_raw`] reads
    /// without a copy). Empty for a method the crate does not know (whether the release has
    /// the method itself is [`super::method`]'s to say). An error when `params` fails to
    /// serialize as JSON.
    pub fn params<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<Vec<Unknown>, serde_json::Error> {
        self.plans.params(method, params).map(unknowns)
    }

    /// [`Check::params`] for the result of a request (what a client answers a server request
    /// with): paths start at `result`.
    pub fn result<R: Serialize + ?Sized>(&self, method: &str, result: &R) -> Result<Vec<Unknown>, serde_json::Error> {
        self.plans.result(method, result).map(unknowns)
    }

    /// [`Check::params`] of params that are JSON text already (what a client has once it has
    /// encoded them to send), read where they lie: the text is not copied.
    ///
    /// ```
    /// use codex_app_protocol::availability::{Check, Release};
    /// # if !codex_app_protocol::__test_support::written_for("0.171.0") { return; }
    ///
    /// let check = Check::new(&Release::parse("0.169.0").unwrap());
    /// let params = serde_json::value::to_raw_value(&serde_json::json!({ "includedThreadIds": ["t1"] })).unwrap();
    /// assert_eq!(check.params_raw("thread/list", &params).unwrap()[0].path, "params.includedThreadIds");
    /// ```
    pub fn params_raw(&self, method: &str, params: &RawValue) -> Result<Vec<Unknown>, serde_json::Error> {
        self.plans.walk_text(self.plans.params_row(method), "params", params.get()).map(unknowns)
    }

    /// [`Check::result`] of a result that is JSON text already, read where it lies.
    pub fn result_raw(&self, method: &str, result: &RawValue) -> Result<Vec<Unknown>, serde_json::Error> {
        self.plans.walk_text(self.plans.result_row(method), "result", result.get()).map(unknowns)
    }
}

/// What a release lacks, as [`Unknown`]s (what it lacks has an availability).
fn unknowns(found: Vec<Found>) -> Vec<Unknown> {
    let mut out: Vec<Unknown> = found
        .into_iter()
        .filter_map(|f| {
            let availability = f.member.availability()?;
            Some(Unknown { item: f.item(), is_value: f.is_value(), path: f.path, availability })
        })
        .collect();
    out.dedup();
    out
}

impl Plans {
    /// The plans that look for the members, values and arms `wanted` says yes to.
    pub(crate) fn new(wanted: impl Fn(&Member) -> bool) -> Plans {
        let wanted: Vec<Vec<bool>> = OWNERS.iter().map(|o| o.members.iter().map(&wanted).collect()).collect();
        let children: Vec<Vec<Option<usize>>> =
            OWNERS.iter().map(|o| o.members.iter().map(|m| owner_row(m.child)).collect()).collect();
        // A type has something to look at when it has something wanted itself or leads to a
        // type that has (the rule the generator keeps the tables' types by).
        let mut marked: Vec<bool> = wanted.iter().map(|l| l.contains(&true)).collect();
        super::reach::lead_to(&mut marked, |row| children[row].iter().flatten().copied());
        let plans = OWNERS
            .iter()
            .enumerate()
            .map(|(row, owner)| {
                marked[row].then(|| {
                    let (values, mut members): (Vec<Step>, Vec<Step>) = owner
                        .members
                        .iter()
                        .enumerate()
                        .filter_map(|(i, member)| {
                            let child = children[row][i].filter(|&c| marked[c]);
                            (wanted[row][i] || child.is_some()).then_some(Step {
                                member,
                                key: NameKey::of(member.wire),
                                wanted: wanted[row][i],
                                child,
                            })
                        })
                        .partition(|s| s.member.value);
                    members.sort_unstable_by_key(|s| s.key);
                    Plan { owner, members: members.into(), values: values.into() }
                })
            })
            .collect::<Box<[_]>>();
        let plan_row = |owner: &str| owner_row(owner).filter(|&row| plans[row].is_some());
        let methods = METHODS
            .iter()
            .map(|m| (m.wire, (plan_row(m.params), plan_row(m.result))))
            .filter(|(_, rows)| rows.0.is_some() || rows.1.is_some())
            .collect();
        Plans { plans, methods }
    }

    /// What is wanted in the params of `method`, each with its path from `params`.
    pub(crate) fn params<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Vec<Found>, serde_json::Error> {
        self.walk(self.params_row(method), "params", params)
    }

    /// What is wanted in the result of `method`, each with its path from `result`.
    pub(crate) fn result<R: Serialize + ?Sized>(
        &self,
        method: &str,
        result: &R,
    ) -> Result<Vec<Found>, serde_json::Error> {
        self.walk(self.result_row(method), "result", result)
    }

    /// The plan of `method`'s params, when they have something to look at.
    fn params_row(&self, method: &str) -> Option<usize> {
        self.methods.get(method).and_then(|rows| rows.0)
    }

    /// The plan of `method`'s result, when it has something to look at.
    fn result_row(&self, method: &str) -> Option<usize> {
        self.methods.get(method).and_then(|rows| rows.1)
    }

    fn plan(&self, row: usize) -> &Plan {
        self.plans[row].as_ref().expect("a step leads only to a type with a plan")
    }

    fn walk<T: Serialize + ?Sized>(
        &self,
        row: Option<usize>,
        root: &'static str,
        value: &T,
    ) -> Result<Vec<Found>, serde_json::Error> {
        match row {
            // The value as JSON text (a `RawValue`'s is copied as it is).
            Some(_) => self.walk_text(row, root, &serde_json::to_string(value)?),
            None => Ok(Vec::new()),
        }
    }

    /// The walk of a value given as JSON text, read where it lies: no `Value` is built, and a
    /// member that leads nowhere is skipped, not read.
    fn walk_text(&self, row: Option<usize>, root: &'static str, text: &str) -> Result<Vec<Found>, serde_json::Error> {
        let mut out = Vec::new();
        let Some(row) = row else { return Ok(out) };
        let mut reader = Reader::new(text);
        let mut at = At { plans: self, root, path: Vec::new(), out: &mut out };
        at.value(self.plan(row), &mut reader, 0)?;
        reader.end()?;
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

/// How deep a value is looked into (a message of the protocol is far shallower); a value
/// deeper than this is skipped.
const MAX_DEPTH: usize = 64;

/// One step of the path a walk is at, its keys borrowed from the text where they have no
/// escapes.
enum Place<'t> {
    Key(Cow<'t, str>),
    Index(usize),
}

/// Where a check is: its path so far, and what it found.
struct At<'a, 't> {
    plans: &'a Plans,
    /// The first step (`params`, `result`).
    root: &'static str,
    /// The steps after it.
    path: Vec<Place<'t>>,
    out: &'a mut Vec<Found>,
}

impl<'t> At<'_, 't> {
    fn report(&mut self, plan: &Plan, step: &Step) {
        if step.wanted {
            let path = std::iter::once(PathStep::Key(self.root))
                .chain(self.path.iter().map(|place| match place {
                    Place::Key(key) => PathStep::Key(key),
                    Place::Index(i) => PathStep::Index(*i),
                }))
                .collect();
            self.out.push(Found { path, owner: plan.owner, member: step.member });
        }
    }

    /// A value of `plan`'s type, the next one of `reader`'s text, which it reads past.
    fn value(&mut self, plan: &Plan, reader: &mut Reader<'t>, depth: usize) -> codec::Result<()> {
        if depth > MAX_DEPTH {
            return reader.skip_value();
        }
        let start = reader.mark();
        let array = match reader.peek() {
            Some(b'[') => {
                let mut items = reader.begin_array("an array")?;
                let mut i = 0;
                while reader.next_item(&mut items)? {
                    self.path.push(Place::Index(i));
                    self.value(plan, reader, depth + 1)?;
                    self.path.pop();
                    i += 1;
                }
                true
            }
            Some(b'"') => {
                let s = reader.string_for("a string")?;
                if let Some(step) = plan.value(&s) {
                    self.report(plan, step);
                }
                false
            }
            Some(b'{') => {
                self.object(plan, reader, depth)?;
                false
            }
            _ => {
                reader.skip_value()?;
                false
            }
        };
        // An untagged union: the value against each arm's type.
        if plan.owner.kind == Kind::Untagged && !array {
            let end = reader.mark();
            for step in plan.values.iter() {
                if let Some(child) = step.child {
                    reader.rewind(start);
                    self.value(self.plans.plan(child), reader, depth + 1)?;
                }
            }
            reader.rewind(end);
        }
        Ok(())
    }

    /// An object of `plan`'s type: a tagged union's arm first (its tag wherever it is in the
    /// object, the last one when it is given twice), then the members.
    fn object(&mut self, plan: &Plan, reader: &mut Reader<'t>, depth: usize) -> codec::Result<()> {
        let start = reader.mark();
        let tag = (plan.owner.kind == Kind::Tagged).then_some(plan.owner.tag);
        if let Some(tag) = tag {
            let mut value = None;
            let mut object = reader.begin_object("an object")?;
            while let Some(key) = reader.next_key(&mut object)? {
                if key == tag {
                    value = match reader.peek() {
                        Some(b'"') => Some(reader.string_for("a string")?),
                        _ => reader.skip_value().map(|()| None)?,
                    };
                } else {
                    reader.skip_value()?;
                }
            }
            if let Some(arm) = value.and_then(|v| plan.value(&v)) {
                // At the object's path: stripping an arm removes the whole object.
                self.report(plan, arm);
                if let Some(payload) = arm.child {
                    reader.rewind(start);
                    self.value(self.plans.plan(payload), reader, depth + 1)?;
                }
            }
            reader.rewind(start);
        }
        let mut object = reader.begin_object("an object")?;
        while let Some(key) = reader.next_key(&mut object)? {
            let step = match tag {
                Some(tag) if key == tag => None,
                _ => plan.member(&key),
            };
            let Some(step) = step else {
                reader.skip_value()?;
                continue;
            };
            self.path.push(Place::Key(key));
            self.report(plan, step);
            match step.child {
                Some(child) => self.value(self.plans.plan(child), reader, depth + 1)?,
                None => reader.skip_value()?,
            }
            self.path.pop();
        }
        Ok(())
    }
}
