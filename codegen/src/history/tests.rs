use super::*;
use crate::decisions::Decisions;
use crate::test_support::bundle;
use crate::{build_ir_with, SchemaSet, Settings};

fn ir(version: &str, methods: &[&str], defs: &str) -> Ir {
    let set = SchemaSet { stable: bundle(methods, defs), experimental: None, codex_version: version.into() };
    build_ir_with(&set, &Settings::with_decisions(Decisions::default()).proposing()).unwrap()
}

fn field<'a>(ir: &'a Ir, owner: &str, wire: &str) -> &'a Field {
    match &ir.types[owner].kind {
        TypeKind::Struct(s) => s.fields.iter().find(|f| f.wire == wire).unwrap(),
        k => panic!("{owner} is {k:?}"),
    }
}

#[test]
fn the_range_keeps_what_went_relaxes_what_came_and_widens_what_changed() {
    let v1 = ir(
        "1.0.0",
        &["c a/b P", "n old/n N", "n s/t S"],
        r#""P": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}},
           "N": {"type": "object", "properties": {}},
           "S": {"type": "object", "required": ["v"], "properties": {"v": {"type": "boolean"}}}"#,
    );
    let v2 = ir(
        "1.1.0",
        &["c a/b P", "c new/m P", "n s/t S"],
        r##""P": {"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}},
           "S": {"type": "object", "required": ["v"], "properties": {"v": {"$ref": "#/definitions/O"}}},
           "O": {"type": "object", "properties": {}}"##,
    );
    let mut history = History::start("1.0.0");
    history.extend(&v1, &v2, "1.1.0");
    assert_eq!(history.newest(), "1.1.0");
    // The committed form reads back as it was written: the facts, then what was retired
    // when it was folded from the same inputs.
    assert!(!history.retired.is_empty() && !history.retired_types.is_empty(), "{history:?}");
    let back = History::from_json(&history.to_json()).unwrap();
    let text = serde_json::to_string(&history.retired_file("inputs")).unwrap();
    let retired: RetiredFile = serde_json::from_str(&text).unwrap();
    assert_eq!(back.clone().with_retired(retired.clone(), "inputs"), Some(history.clone()));
    assert_eq!(back.with_retired(retired, "other inputs"), None);

    let mut range = v2.clone();
    history.apply(&mut range, None).unwrap();
    let removed = range.server_notifications.iter().find(|m| m.wire == "old/n").expect("a removed method stays");
    assert!(range.types.contains_key("N"), "with its params type: {removed:?}");
    assert_eq!(
        range.availability[&keys::method(Direction::ServerNotification, "old/n")].until.as_deref(),
        Some("1.0.0")
    );
    assert_eq!(range.availability[&keys::method(Direction::ClientRequest, "new/m")].since, "1.1.0");
    // `P.y`: required now, absent in 1.0.0, which had `P`.
    assert!(!field(&range, "P", "y").required);
    assert_eq!(range.availability[&keys::member("P", "y")].always_since.as_deref(), Some("1.1.0"));
    assert!(field(&range, "P", "x").required);
    // `S.v` was a boolean: what the client receives accepts both.
    assert_eq!(field(&range, "S", "v").ty, Ty::Any);
    assert!(range.warnings.iter().any(|w| w.message.contains("S.v")), "{:?}", range.warnings);

    // The floor moved up to 1.1.0: nothing of 1.0.0 is kept or relaxed.
    let mut newest_only = v2.clone();
    history.apply(&mut newest_only, Some("1.1.0")).unwrap();
    assert!(!newest_only.server_notifications.iter().any(|m| m.wire == "old/n"));
    assert!(field(&newest_only, "P", "y").required);
    assert_ne!(field(&newest_only, "S", "v").ty, Ty::Any);
    assert!(history.apply(&mut v2.clone(), Some("0.9.0")).is_err(), "a floor outside the history");
}

#[test]
fn a_restored_member_whose_type_the_range_does_not_name_is_any_json_value() {
    let v1 = ir(
        "1.0.0",
        &["c a/b P"],
        r#""P": {"type": "object", "properties": {"x": {"type": "string"}, "old": {"type": "string"}}}"#,
    );
    let v2 = ir("1.1.0", &["c a/b P"], r#""P": {"type": "object", "properties": {"x": {"type": "string"}}}"#);
    let mut history = History::start("1.0.0");
    history.extend(&v1, &v2, "1.1.0");
    // As when the older release's lowering named the member's type apart (`V1AskForApproval`
    // beside a v2 `AskForApproval`), a name the range's types do not have.
    match history.retired.get_mut(&keys::member("P", "old")) {
        Some(Retired::Field { field, .. }) => field.ty = Ty::Named("V1Gone".into()),
        other => panic!("P.old is not a retired member: {other:?}"),
    }
    let mut range = v2.clone();
    history.apply(&mut range, None).unwrap();
    assert_eq!(field(&range, "P", "old").ty, Ty::Any);
    assert!(range.warnings.iter().any(|w| w.message.contains("`V1Gone`")), "{:?}", range.warnings);
}
