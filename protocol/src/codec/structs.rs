//! Structs (JSON objects with known members), decoded member by member from a table.
//!
//! A struct's decoder is data: `wire_struct!` writes a [`Table`] of the struct's members (wire
//! name, the field's offset, and the functions that read, default and drop a field of the
//! member's type), and one loop, [`read_members`], compiled once, reads every struct's members
//! through its table into the struct's place. What each struct compiles is its table and a
//! call; what each member type compiles (its read, its drop) is shared by every struct that
//! has a member of that type and presence. The `inspect` walk reads the same table (with that
//! feature): one loop, `inspect_members`, walks each member's field by its type's function.
//!
//! The loop writes fields in place, in a `MaybeUninit` of the struct, and keeps one bit per
//! member read. The unsafe code is the loop's writes and drops through the table,
//! [`decode_members`]'s `assume_init`, and the walk's reads of fields through the table, whose
//! condition is that the table lists every field of the struct, each with its own type:
//! `wire_struct!` writes the table from the same list of members, and the same `cfg`s, as the
//! struct.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::mem::MaybeUninit;

use super::decode::{extra_member, Decode};
use super::reader::{Object, Reader, Result};
#[cfg(feature = "inspect")]
use crate::inspect::{Inspect, Inspector, Step};

/// A struct (a JSON object with known members), decoded member by member.
///
/// The generated `visit_members` reads the members through the struct's [`Table`]; unknown
/// keys are skipped (or kept, for open objects). No field-identifier type, no sequence form
/// (a JSON array is never a struct here), which serde's derive compiles for every struct.
pub trait DecodeStruct: Sized {
    const EXPECTING: &'static str;
    /// Reads the members of `object` (entered, its members read up to here) to its end.
    fn visit_members(reader: &mut Reader<'_>, object: Object) -> Result<Self>;
}

/// A struct's [`Decode`]: the object entered, then its members.
#[inline]
pub fn decode_struct<T: DecodeStruct>(reader: &mut Reader<'_>) -> Result<T> {
    let object = reader.begin_object(T::EXPECTING)?;
    T::visit_members(reader, object)
}

/// A boxed struct (a tagged union's arm whose payload holds the union) reads its members as
/// the struct does.
impl<T: DecodeStruct> DecodeStruct for Box<T> {
    const EXPECTING: &'static str = T::EXPECTING;

    #[inline]
    fn visit_members(reader: &mut Reader<'_>, object: Object) -> Result<Self> {
        T::visit_members(reader, object).map(Box::new)
    }
}

/// Reads a member's value into its field: `place` is the field's address, `set` whether it
/// holds a value already (a member given twice: the last counts, the earlier value dropped).
type ReadFn = unsafe fn(&mut Reader<'_>, *mut u8, bool) -> Result<()>;
/// Writes a field's value in place (an absent member's, or an open object's empty map).
type InitFn = unsafe fn(*mut u8);
/// Drops a field's value in place.
type DropFn = unsafe fn(*mut u8);
/// Reads an unknown member into the open object's map at `place`.
type ExtraFn = unsafe fn(&mut Reader<'_>, Cow<'_, str>, *mut u8) -> Result<()>;
/// Walks the value of the field at `place` for the `inspect` walk, the field borrowed for `'a`.
#[cfg(feature = "inspect")]
type InspectFn = for<'a> unsafe fn(*const u8, &mut Vec<Step<'a>>, &mut dyn Inspector);

/// What a member's field needs besides its decoder: with `inspect`, to be walked
/// ([`Inspect`]; every field type owns its value, `'static`); without, nothing.
#[cfg(feature = "inspect")]
pub trait Field: Inspect + 'static {}
#[cfg(feature = "inspect")]
impl<T: Inspect + 'static> Field for T {}
/// What a member's field needs besides its decoder: with `inspect`, to be walked; without,
/// nothing.
#[cfg(not(feature = "inspect"))]
pub trait Field {}
#[cfg(not(feature = "inspect"))]
impl<T> Field for T {}

/// A struct's members, in the order of its fields, and its open object if it has one.
pub struct Table {
    members: &'static [Member],
    extra: Option<Extra>,
}

impl Table {
    /// At most 64 members (one bit each while reading): checked as the table is built, at
    /// compile time.
    pub const fn new(members: &'static [Member], extra: Option<Extra>) -> Table {
        assert!(members.len() <= 64, "a struct of more than 64 members");
        Table { members, extra }
    }

    /// The index of the member named `key`.
    #[inline]
    fn find(&self, key: &str) -> Option<usize> {
        let key = key.as_bytes();
        let head = prefix(key);
        self.members.iter().position(|member| {
            let wire = member.wire.as_bytes();
            member.prefix == head
                && wire.len() == key.len()
                && (key.len() <= 8 || (member.suffix == suffix(key) && (key.len() <= 16 || wire[16..] == key[16..])))
        })
    }
}

/// One member: its wire name, its field's offset in the struct, and its type's functions.
pub struct Member {
    wire: &'static str,
    /// The wire name's first eight bytes (zeros after a shorter name), compared with the key's
    /// before the rest of the name.
    prefix: u64,
    /// Its next eight bytes, the same way (names up to 16 bytes are compared as two words).
    suffix: u64,
    offset: usize,
    read: ReadFn,
    /// What an absent member's field holds (`None`); `None` for a required member.
    absent: Option<InitFn>,
    /// `None` when the field's type needs no drop.
    drop: Option<DropFn>,
    /// The walk of the field's value.
    #[cfg(feature = "inspect")]
    inspect: InspectFn,
    /// Whether the member's `null` means something other than its absence (an
    /// `Option<Option<T>>` field), which the walk reports.
    #[cfg(feature = "inspect")]
    null_meaningful: bool,
}

/// The field of an open object's members (a `BTreeMap<String, T>`).
pub struct Extra {
    offset: usize,
    init: InitFn,
    read: ExtraFn,
    drop: DropFn,
}

impl Member {
    /// A required member whose field is an `F`.
    pub const fn required<F: Decode + Field>(wire: &'static str, offset: usize) -> Member {
        Member::new::<F>(wire, offset, read_value::<F>, None, false)
    }

    /// A member that may be absent, whose field `F` (an `Option`) reads `null` as absent.
    pub const fn optional<F: Decode + Default + Field>(wire: &'static str, offset: usize) -> Member {
        Member::new::<F>(wire, offset, read_value::<F>, Some(write_default::<F>), false)
    }

    /// A member that may be absent and whose `null` is a value: the field `F` is an
    /// `Option<Option<T>>`, `Some` when present.
    pub const fn present<F: Present + Default + Field>(wire: &'static str, offset: usize) -> Member {
        Member::new::<F>(wire, offset, read_present::<F>, Some(write_default::<F>), true)
    }

    /// A member whose field is an `F`, read by `read` (made for an `F`).
    #[allow(unused_variables)] // `null_meaningful` without `inspect`
    const fn new<F: Field>(
        wire: &'static str,
        offset: usize,
        read: ReadFn,
        absent: Option<InitFn>,
        null_meaningful: bool,
    ) -> Member {
        let name = wire.as_bytes();
        Member {
            wire,
            prefix: prefix(name),
            suffix: suffix(name),
            offset,
            read,
            absent,
            drop: drop_fn::<F>(),
            #[cfg(feature = "inspect")]
            inspect: inspect_at::<F>,
            #[cfg(feature = "inspect")]
            null_meaningful,
        }
    }
}

impl Extra {
    /// An open object's members, in a map `M` (a `BTreeMap<String, T>`) at `offset`.
    pub const fn map<M: OpenObject>(offset: usize) -> Extra {
        Extra { offset, init: write_default::<M>, read: read_extra::<M::Value>, drop: drop_at::<M> }
    }
}

/// The field of an open object's members: `BTreeMap<String, T>`.
pub trait OpenObject: Default {
    type Value: Decode;
}

impl<T: Decode> OpenObject for BTreeMap<String, T> {
    type Value = T;
}

/// A name's first eight bytes as a word, zeros after a shorter name (also the availability
/// check's key of a member's name).
#[inline]
pub(crate) const fn prefix(name: &[u8]) -> u64 {
    if let Some(head) = name.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    let mut word = 0;
    let mut i = 0;
    while i < name.len() {
        word |= (name[i] as u64) << (8 * i);
        i += 1;
    }
    word
}

/// A name's bytes after its first eight as [`prefix`] takes them (zero for a name of eight
/// bytes or fewer).
#[inline]
const fn suffix(name: &[u8]) -> u64 {
    match name.split_at_checked(8) {
        Some((_, tail)) => prefix(tail),
        None => 0,
    }
}

/// A field that holds a present member's value as `Some`: `Option<T>`.
pub trait Present {
    type Value: Decode;
    fn present(value: Self::Value) -> Self;
}

impl<T: Decode> Present for Option<T> {
    type Value = T;

    #[inline]
    fn present(value: T) -> Self {
        Some(value)
    }
}

const fn drop_fn<F>() -> Option<DropFn> {
    match std::mem::needs_drop::<F>() {
        true => Some(drop_at::<F>),
        false => None,
    }
}

/// # Safety
/// `place` is the address of a field of type `F`, which holds a value when `set`.
unsafe fn read_value<F: Decode>(reader: &mut Reader<'_>, place: *mut u8, set: bool) -> Result<()> {
    let value = F::decode(reader)?;
    // SAFETY: by the function's contract.
    unsafe { put(place.cast::<F>(), set, value) };
    Ok(())
}

/// # Safety
/// As [`read_value`].
unsafe fn read_present<F: Present>(reader: &mut Reader<'_>, place: *mut u8, set: bool) -> Result<()> {
    let value = F::present(F::Value::decode(reader)?);
    // SAFETY: by the function's contract.
    unsafe { put(place.cast::<F>(), set, value) };
    Ok(())
}

/// # Safety
/// `place` is the address of a field of type `F`, which holds a value when `set` (and is
/// dropped then) and none otherwise.
#[inline]
unsafe fn put<F>(place: *mut F, set: bool, value: F) {
    // SAFETY: the place is a field of type `F`, so aligned and valid for writes; when `set`,
    // it holds a value, which the assignment drops.
    unsafe {
        match set {
            true => *place = value,
            false => place.write(value),
        }
    }
}

/// # Safety
/// `place` is the address of a field of type `BTreeMap<String, T>` that holds a value.
unsafe fn read_extra<T: Decode>(reader: &mut Reader<'_>, key: Cow<'_, str>, place: *mut u8) -> Result<()> {
    // SAFETY: by the function's contract, the place holds a map, and nothing else refers to it.
    let map = unsafe { &mut *place.cast::<BTreeMap<String, T>>() };
    extra_member(reader, key, map)
}

/// # Safety
/// `place` is the address of a field of type `F` that holds no value.
unsafe fn write_default<F: Default>(place: *mut u8) {
    // SAFETY: by the function's contract.
    unsafe { place.cast::<F>().write(F::default()) }
}

/// # Safety
/// `place` is the address of a field of type `F` that holds a value, not used after.
unsafe fn drop_at<F>(place: *mut u8) {
    // SAFETY: by the function's contract.
    unsafe { place.cast::<F>().drop_in_place() }
}

/// # Safety
/// `place` is the address of a field of type `F` that holds a value and is borrowed for `'a`.
#[cfg(feature = "inspect")]
unsafe fn inspect_at<'a, F: Inspect + 'static>(
    place: *const u8,
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
) {
    // SAFETY: by the function's contract.
    let value: &'a F = unsafe { &*place.cast::<F>() };
    value.inspect(path, inspector);
}

/// The `inspect` walk of a struct's members, from its table, in the order of its fields: each
/// member's value walked under its wire name, and a member whose `null` means something other
/// than its absence reported as such (`ty`: the struct's name) first. What each struct compiles
/// for its walk is this call.
///
/// # Safety
/// `place` is the address of a struct, borrowed for `'a`, whose fields `table` lists, each
/// with its type (as for [`decode_members`]).
#[cfg(feature = "inspect")]
#[inline(never)]
pub unsafe fn inspect_members<'a>(
    place: *const u8,
    table: &Table,
    ty: &'static str,
    path: &mut Vec<Step<'a>>,
    inspector: &mut dyn Inspector,
) {
    for member in table.members {
        path.push(Step::Key(member.wire));
        if member.null_meaningful {
            inspector.null_meaningful(path, ty);
        }
        // SAFETY: the member's field, of the type its `inspect` was made for, in the struct
        // borrowed for `'a` (by the function's contract).
        unsafe { (member.inspect)(place.add(member.offset), path, inspector) };
        path.pop();
    }
}

/// The indexes of the bits set in `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let i = mask.trailing_zeros() as usize;
        mask &= mask.checked_sub(1)?;
        Some(i)
    })
}

/// Decodes the members of `object` into a `T` through its table.
///
/// # Safety
/// `table` lists every field of `T`: each member's offset is that of a field of `T` whose
/// type is the one its functions were made for (`Member::required::<F>`: an `F`), and every
/// field of `T` is one member's, or the open object's (`table.extra`).
#[inline]
pub unsafe fn decode_members<T>(reader: &mut Reader<'_>, object: Object, table: &Table) -> Result<T> {
    let mut value = MaybeUninit::<T>::uninit();
    // SAFETY: the place is a `T`'s, described by `table` (this function's contract); on `Ok`,
    // `read_members` initialized every field, so the `T`.
    unsafe {
        read_members(reader, object, table, value.as_mut_ptr().cast::<u8>())?;
        Ok(value.assume_init())
    }
}

/// The loop every struct's decoder shares: reads the members into the fields at `place`, then
/// gives the absent ones their value. On an error, drops what it read; on `Ok`, every field of
/// the table holds a value.
///
/// # Safety
/// `place` is the address of a struct that holds no value yet, whose fields `table` lists
/// (see [`decode_members`]); at most 64 members (`Table::new` checks).
#[inline(never)]
unsafe fn read_members(reader: &mut Reader<'_>, mut object: Object, table: &Table, place: *mut u8) -> Result<()> {
    let members = table.members;
    if let Some(extra) = &table.extra {
        // SAFETY: the open object's field, which holds no value yet.
        unsafe { (extra.init)(place.add(extra.offset)) };
    }
    // Bit `i`: member `i`'s field holds a value.
    let mut set: u64 = 0;
    let result = (|| {
        while let Some(key) = reader.next_key(&mut object)? {
            match table.find(&key) {
                Some(i) => {
                    let member = &members[i];
                    let bit = 1 << i;
                    // SAFETY: the member's field, of the type its `read` was made for, holding
                    // a value when its bit is set.
                    unsafe { (member.read)(reader, place.add(member.offset), set & bit != 0)? };
                    set |= bit;
                }
                None => match &table.extra {
                    // SAFETY: the open object's field, which holds its map.
                    Some(extra) => unsafe { (extra.read)(reader, key, place.add(extra.offset))? },
                    None => reader.skip_member(&key)?,
                },
            }
        }
        // The members not given, in order: an absent one's field gets its value, a required one
        // is the error (the first, as the members are declared).
        let all = u64::MAX.checked_shr(64 - members.len() as u32).unwrap_or(0);
        for i in bits(all & !set) {
            let member = &members[i];
            match member.absent {
                // SAFETY: an absent member's field, which holds no value.
                Some(absent) => unsafe { absent(place.add(member.offset)) },
                None => return Err(serde::de::Error::missing_field(member.wire)),
            }
            set |= 1 << i;
        }
        Ok(())
    })();
    if let Err(error) = result {
        for member in bits(set).map(|i| &members[i]) {
            if let Some(drop) = member.drop {
                // SAFETY: the field holds a value (its bit is set), dropped once: the struct is
                // not built.
                unsafe { drop(place.add(member.offset)) };
            }
        }
        if let Some(extra) = &table.extra {
            // SAFETY: the open object's field holds its map, dropped once.
            unsafe { (extra.drop)(place.add(extra.offset)) };
        }
        return Err(error);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Decode;

    /// A value of `T` from `text`, which must hold it whole; on an error, the offset it
    /// happened at.
    fn from_text<T: Decode>(text: &str) -> std::result::Result<T, (serde_json::Error, usize)> {
        let mut reader = Reader::new(text);
        let value = T::decode(&mut reader).map_err(|e| (e, reader.offset()))?;
        reader.end().map_err(|e| (e, reader.offset()))?;
        Ok(value)
    }

    /// Two structs as the generated code writes them (in a module of their own: the macros
    /// name `Result` as the prelude's).
    mod structs {
        use serde_json::Value;
        use std::collections::BTreeMap;

        crate::wire_macros::wire_struct! {
            #[derive(Debug, Clone, PartialEq)]
            pub struct Sample {
                pub count: Option<i64> = "count" (optional),
                pub email: Option<String> = "email" (required_nullable),
                pub name: String = "name" (required),
                pub note: Option<Option<String>> = "note" (optional_nullable),
                pub tags: Vec<String> = "tags" (required),
            }
        }

        crate::wire_macros::wire_struct! {
            #[derive(Debug, Clone, PartialEq)]
            pub struct Outer {
                pub first: Vec<Sample> = "first" (required),
                pub second: Option<Sample> = "second" (optional),
            }
        }

        crate::wire_macros::wire_struct! {
            #[derive(Debug, Clone, PartialEq)]
            pub struct Open {
                pub name: String = "name" (required),
                ..pub extra: BTreeMap<String, Value>
            }
        }
    }
    #[cfg(feature = "inspect")]
    use structs::Outer;
    use structs::{Open, Sample};

    fn sample(text: &str) -> std::result::Result<Sample, String> {
        from_text::<Sample>(text).map_err(|(error, _)| error.to_string())
    }

    /// What the loop writes in place, and what it gives the members not given. Run under Miri
    /// (`cargo +nightly miri test -p codex-app-protocol-stable --lib codec::structs`), which
    /// fails on a value dropped twice, never dropped, or read before it was written.
    #[test]
    fn the_loop_reads_every_field_in_place_and_drops_what_an_error_leaves() {
        let full = sample(
            r#"{"tags":["a","b"],"note":null,"x":[1,{"y":2}],"name":"first","count":3,"name":"second","email":"e"}"#,
        );
        let full = full.unwrap();
        assert_eq!(full.name, "second", "a member given twice: the last counts");
        assert_eq!((full.count, full.email.as_deref(), full.note.clone()), (Some(3), Some("e"), Some(None)));
        assert_eq!(full.tags, ["a", "b"]);

        let least = sample(r#"{"name":"n","tags":[],"email":null,"count":null}"#).unwrap();
        assert_eq!((least.count, least.email, least.note), (None, None, None), "null and absent");
        let note = sample(r#"{"name":"n","tags":[],"note":"kept"}"#).unwrap();
        assert_eq!(note.note, Some(Some("kept".to_owned())));

        // Errors after members were read: each read value is dropped (Miri's leak check).
        let missing = sample(r#"{"note":"n","email":"e","count":1}"#).unwrap_err();
        assert!(missing.starts_with("missing field `name`"), "the first required member missing: {missing}");
        let missing = sample(r#"{"name":"n","note":"n"}"#).unwrap_err();
        assert!(missing.starts_with("missing field `tags`"), "{missing}");
        let wrong = sample(r#"{"name":"n","note":"x","tags":["a"],"count":"three"}"#).unwrap_err();
        assert!(wrong.contains("expected i64") || wrong.contains("invalid type"), "{wrong}");
        let twice_then_wrong = sample(r#"{"name":"a","name":"b","tags":["t"],"tags":[1]}"#).unwrap_err();
        assert!(twice_then_wrong.contains("invalid type"), "{twice_then_wrong}");
        let cut = sample(r#"{"name":"a","tags":["t","#).unwrap_err();
        assert!(cut.contains("EOF"), "{cut}");

        // An open object keeps the members it does not declare, and drops them on an error.
        let open = from_text::<Open>(r#"{"a":1,"name":"n","b":{"c":[true]}}"#).unwrap();
        assert_eq!((open.name.as_str(), open.extra.len()), ("n", 2));
        assert_eq!(open.extra["b"], serde_json::json!({"c": [true]}));
        assert!(from_text::<Open>(r#"{"a":"kept until the error","name":7}"#).is_err());
        assert!(from_text::<Open>(r#"{"a":"kept until the error"}"#).is_err());
    }

    /// The `inspect` walk through the tables: every member of every struct, under its wire
    /// name, in the order of the fields; a member whose `null` means something is reported
    /// whether it is given or not. Run under Miri with the test above.
    #[cfg(feature = "inspect")]
    #[test]
    fn the_walk_reads_every_member_through_the_table() {
        use crate::path::JsonPath;

        #[derive(Default)]
        struct Reports(Vec<String>);
        impl Inspector for Reports {
            fn null_meaningful(&mut self, path: &[Step<'_>], ty: &'static str) {
                self.0.push(format!("{ty} {}", JsonPath::from_steps(path)));
            }
        }
        let walk = |text: &str| {
            let outer = from_text::<Outer>(text).map_err(|(error, _)| error).unwrap();
            let mut path = Vec::new();
            let mut reports = Reports::default();
            outer.inspect(&mut path, &mut reports);
            assert!(path.is_empty(), "the walk leaves the path as it found it: {path:?}");
            reports.0
        };
        let sample = r#"{"name":"n","tags":["t"],"note":null}"#;
        let second = r#"{"name":"m","tags":[]}"#;
        assert_eq!(
            walk(&format!(r#"{{"second":{second},"first":[{sample},{second}]}}"#)),
            ["Sample first[0].note", "Sample first[1].note", "Sample second.note"]
        );
        assert_eq!(walk(r#"{"first":[]}"#), Vec::<String>::new());
    }

    /// Names that share their first eight or sixteen bytes and their length, and differ after:
    /// each is found as itself, and nothing else is found.
    #[test]
    fn a_key_finds_its_member_by_every_byte() {
        const NAMES: &[&str] = &[
            "id",
            "idx",
            "threadId",
            "threadIx",
            "threadIdentity",
            "threadIdentitx",
            "environmentIdLong",
            "environmentIdLonh",
            "environmentIdLongerStill",
            "environmentIdLongerStilm",
        ];
        static MEMBERS: [Member; 10] = {
            let mut members = [const { Member::required::<bool>("", 0) }; 10];
            let mut i = 0;
            while i < NAMES.len() {
                members[i] = Member::required::<bool>(NAMES[i], 0);
                i += 1;
            }
            members
        };
        let table = Table::new(&MEMBERS, None);
        for (i, name) in NAMES.iter().enumerate() {
            assert_eq!(table.find(name), Some(i), "{name}");
        }
        for other in [
            "",
            "i",
            "threadI",
            "threadIdd",
            "threadIdentit",
            "environmentIdLongerStil",
            "environmentIdLongerStillx",
            "Id",
        ] {
            assert_eq!(table.find(other), None, "{other}");
        }
    }
}
