//! Every member that `vendor-schemas/decisions.json` decides is three states (`null_distinct_from_absent`
//! with `"distinct": true`: absent, `null` and a value are three requests) is one in the
//! generated type: an instance of its definition with the member absent, `null` and a value,
//! each read with the generated type and written back, keeps exactly that state, and the
//! re-encoding read again is written the same. The list is the decisions file's, so a new
//! entry is covered without naming it here; an entry whose member the vendored bundles lack,
//! or whose definition has no generated type, fails.
//!
//! The decisions are the range's: after a regen from an older release (`cargo xtask regen
//! --codex-version`), the vendored bundles are that release's, and a member a newer release
//! added is not stale. The newest release is then the archive's anchor
//! (`vendor-schemas/releases/`, the one file written whole, `"base": null`): an entry is stale
//! only when neither the vendored bundles nor the anchor's have its member.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::instances::Generator;
use super::{common, definitions, table, Codec};

/// `Type.member` of every decision with `"distinct": true`.
fn distinct_members() -> Vec<(String, String)> {
    let path = format!("{}/../vendor-schemas/decisions.json", env!("CARGO_MANIFEST_DIR"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("decisions are JSON");
    let decisions = file["null_distinct_from_absent"].as_object().expect("null_distinct_from_absent is an object");
    decisions
        .iter()
        .filter(|(_, entry)| match entry {
            // The file's first format: a bare boolean.
            Value::Bool(distinct) => *distinct,
            entry => entry["distinct"].as_bool().expect("an entry has a boolean `distinct`"),
        })
        .map(|(key, _)| {
            let (ty, member) = key.split_once('.').unwrap_or_else(|| panic!("{key}: not `Type.member`"));
            (ty.to_owned(), member.to_owned())
        })
        .collect()
}

/// The definition named `name` in `bundle` (in a namespace or not): its JSON pointer and schema.
fn definition<'a>(bundle: &'a Value, name: &str) -> Option<(String, &'a Value)> {
    definitions(bundle).into_iter().find(|(_, n, _)| n == name).map(|(pointer, _, schema)| (pointer, schema))
}

fn has_member(bundle: &Value, ty: &str, member: &str) -> bool {
    definition(bundle, ty).is_some_and(|(_, schema)| schema["properties"].get(member).is_some())
}

/// The bundles (stable, experimental) of the newest release when the crate was regenerated
/// from an older one: the archive's file written whole (`"base": null`), whose values to set
/// are the bundles' top-level members. `None` when the vendored release is the newest (the
/// archive has no such file).
fn newer_anchor() -> Option<[Value; 2]> {
    let dir = format!("{}/../vendor-schemas/releases", env!("CARGO_MANIFEST_DIR"));
    let anchors: Vec<Value> = std::fs::read_dir(&dir)
        .expect(&dir)
        .map(|entry| entry.expect(&dir).path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| serde_json::from_str::<Value>(&std::fs::read_to_string(&path).expect("readable")).expect("JSON"))
        .filter(|file| file.get("base").is_some_and(Value::is_null))
        .collect();
    assert!(anchors.len() <= 1, "the archive has {} files written whole, not at most one", anchors.len());
    let anchor = anchors.into_iter().next()?;
    let bundle = |folder: &str| -> Value {
        let set = anchor[folder]["set"].as_object().unwrap_or_else(|| panic!("the anchor's {folder} sets values"));
        // Top-level pointers only (`/definitions`): the members' names need no unescaping.
        Value::Object(set.iter().map(|(pointer, value)| (pointer[1..].to_owned(), value.clone())).collect())
    };
    Some([bundle("stable"), bundle("experimental")])
}

/// The three states of `member` in an instance of the definition: absent, `null`, a value.
fn three_states(generator: &mut Generator, pointer: &str, schema: &Value, member: &str) -> Result<[Value; 3], String> {
    let instances = generator.instances(schema, pointer);
    let with_value = instances
        .iter()
        .find(|i| i.value.get(member).is_some_and(|v| !v.is_null()))
        .ok_or_else(|| format!("no instance of {pointer} gives `{member}` a value"))?;
    let mut absent: Map<String, Value> =
        with_value.value.as_object().cloned().ok_or("the instance is not an object")?;
    absent.remove(member);
    let mut null = absent.clone();
    null.insert(member.to_owned(), Value::Null);
    Ok([Value::Object(absent), Value::Object(null), with_value.value.clone()])
}

/// The member as `value` holds it: `None` absent, else its value (`null` included).
fn state<'a>(value: &'a Value, member: &str) -> Option<&'a Value> {
    value.as_object().and_then(|o| o.get(member))
}

fn check(decode: Codec, states: &[Value; 3], member: &str) -> Result<(), String> {
    for (name, input) in ["absent", "null", "a value"].iter().zip(states) {
        let back = decode.round_trip(&input.to_string()).map_err(|e| format!("{name}: {e}"))?;
        if state(&back, member) != state(input, member) {
            return Err(format!(
                "{name}: `{member}` read and written back is {:?}, not {:?} (input {input}, written {back})",
                state(&back, member),
                state(input, member)
            ));
        }
        if !codex_app_protocol::roundtrip::equivalent(input, &back) {
            return Err(format!("{name}: re-encoded differently: {back} (input {input})"));
        }
        // Read again, the re-encoding is written the same: the state is the typed value's.
        let again = decode.round_trip(&back.to_string()).map_err(|e| format!("{name}, read again: {e}"))?;
        if again != back {
            return Err(format!("{name}: read again, written {again}, not {back}"));
        }
    }
    Ok(())
}

#[test]
fn every_member_decided_three_states_keeps_absent_null_and_a_value() {
    let bundle = common::bundle();
    // The members of the experimental surface are tested where the crate has them.
    let experimental = common::bundle_of("experimental");
    let table = table();
    let mut generator = Generator::new(&bundle);
    let newer = newer_anchor();
    let members = distinct_members();
    assert!(!members.is_empty(), "decisions.json decides no member three states");
    // A member this build does not have: the experimental surface's (tested where the crate
    // has it), or a newer release's.
    let elsewhere = |ty: &str, member: &str| {
        (cfg!(not(feature = "experimental")) && has_member(&experimental, ty, member))
            || newer.as_ref().is_some_and(|bundles| bundles.iter().any(|b| has_member(b, ty, member)))
    };
    let mut tested = Vec::new();
    let mut newer_only = 0;
    let mut failures = BTreeMap::new();
    for (ty, member) in &members {
        let key = format!("{ty}.{member}");
        let Some((pointer, schema)) = definition(&bundle, ty) else {
            if elsewhere(ty, member) {
                newer_only += usize::from(!has_member(&experimental, ty, member));
                continue;
            }
            failures.insert(key, "no definition of that name in the vendored bundles".to_owned());
            continue;
        };
        if schema["properties"].get(member).is_none() {
            if elsewhere(ty, member) {
                newer_only += usize::from(!has_member(&experimental, ty, member));
                continue;
            }
            failures.insert(key, format!("{pointer} has no member `{member}`"));
            continue;
        }
        if schema["required"].as_array().is_some_and(|r| r.iter().any(|m| m == member.as_str())) {
            failures.insert(key, format!("{pointer}: `{member}` is required (never absent)"));
            continue;
        }
        let Some(decode) = table.types.get(pointer.as_str()).copied().map(Codec::Typed) else {
            failures.insert(key, format!("{pointer}: no generated type"));
            continue;
        };
        match three_states(&mut generator, &pointer, schema, member).and_then(|states| check(decode, &states, member)) {
            Ok(()) => tested.push(key),
            Err(e) => {
                failures.insert(key, e);
            }
        }
    }
    assert!(failures.is_empty(), "members decided three states that are not:\n{failures:#?}");
    if cfg!(feature = "experimental") {
        assert_eq!(
            tested.len() + newer_only,
            members.len(),
            "with the experimental surface, every member of this release is tested"
        );
    }
    assert!(!tested.is_empty());
}
