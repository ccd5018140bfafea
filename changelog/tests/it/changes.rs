use codex_app_changelog::*;
use codex_app_codegen::ir::Direction;
use codex_app_codegen::test_support::bundle;
use codex_app_codegen::SchemaSet;

fn stable(version: &str, methods: &[&str], defs: &str) -> SchemaSet {
    SchemaSet { stable: bundle(methods, defs), experimental: None, codex_version: version.to_owned() }
}

fn with_experimental(mut set: SchemaSet, methods: &[&str], defs: &str) -> SchemaSet {
    set.experimental = Some(bundle(methods, defs));
    set
}

fn report(old: &SchemaSet, new: &SchemaSet) -> Report {
    diff_sets(old, new).unwrap_or_else(|e| panic!("{e}"))
}

/// The one change at `path` (of the given kind name, when several share the path).
fn at<'a>(r: &'a Report, path: &str, kind: &str) -> &'a Change {
    let found: Vec<&Change> = r
        .changes
        .iter()
        .filter(|c| c.path.to_string() == path && serde_json::to_value(&c.kind).unwrap()["kind"] == kind)
        .collect();
    match found.as_slice() {
        [c] => c,
        _ => panic!("expected one {kind} at {path}, found {}:\n{}", found.len(), r.to_markdown()),
    }
}

fn breaks(c: &Change) -> (bool, bool) {
    (c.sends.as_ref().is_some_and(|e| e.breaking), c.receives.as_ref().is_some_and(|e| e.breaking))
}

const EMPTY_PAIR: &str = r#""AxParams":{"type":"object"},"AxResponse":{"type":"object"}"#;

#[test]
fn same_schema_no_changes() {
    let set = stable("1", &["c a/x AxParams"], EMPTY_PAIR);
    let r = report(&set, &set);
    assert!(r.is_empty());
    assert_eq!(r.counts, Counts::default());
    assert!(r.to_markdown().contains("No protocol changes"));
}

#[test]
fn methods_added_and_removed() {
    let old = stable("1", &["c a/x AxParams"], EMPTY_PAIR);
    let new = stable(
        "2",
        &["c b/y ByParams", "n thing/done ThingDoneNotification", "s ask AskParams"],
        r#""ByParams":{"type":"object"},"ByResponse":{"type":"object"},"ThingDoneNotification":{"type":"object"},
           "AskParams":{"type":"object"},"AskResponse":{"type":"object"}"#,
    );
    let r = report(&old, &new);
    let added = at(&r, "b/y", "method_added");
    assert_eq!(added.severity, Severity::Compatible);
    assert_eq!(
        added.filed_under,
        FiledUnder::Method { direction: Direction::ClientRequest, method: "b/y".into(), experimental: false }
    );
    assert!(added.sends.is_some() && added.receives.is_none());
    let removed = at(&r, "a/x", "method_removed");
    assert_eq!((removed.severity, breaks(removed)), (Severity::Breaking, (true, false)));
    let notification = at(&r, "thing/done", "method_added");
    assert!(notification.sends.is_none() && notification.receives.is_some());
    let request = at(&r, "ask", "method_added");
    assert!(request.receives.as_ref().unwrap().why.contains("answer it"));
    // The removed method's types: a Rust API change, filed under the method.
    let gone = at(&r, "AxParams", "type_removed");
    assert_eq!(gone.severity, Severity::RustApi);
    assert_eq!(
        gone.filed_under,
        FiledUnder::Method { direction: Direction::ClientRequest, method: "a/x".into(), experimental: false }
    );
    assert_eq!(at(&r, "ByParams", "type_added").severity, Severity::Compatible);
    let c = &r.counts;
    assert_eq!((c.methods_added, c.methods_removed, c.types_added, c.types_removed), (3, 1, 5, 2));
}

#[test]
fn added_fields_by_direction_and_presence() {
    let old = stable(
        "1",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object"},"TStartResponse":{"type":"object"}"#,
    );
    let new = stable(
        "2",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
           "TStartResponse":{"type":"object","required":["z","n"],"properties":{"z":{"type":"integer"},"w":{"type":"boolean"},"n":{"type":["string","null"]}}}"#,
    );
    let r = report(&old, &new);
    // Params: the client sends them. A new required member must be set.
    let x = at(&r, "TStartParams.x", "field_added");
    assert_eq!((x.severity, breaks(x)), (Severity::Breaking, (true, false)));
    assert!(x.receives.is_none());
    assert_eq!(at(&r, "TStartParams.y", "field_added").severity, Severity::Compatible);
    // Response: the client receives it. A new required member is missing from an older codex.
    let z = at(&r, "TStartResponse.z", "field_added");
    assert_eq!((z.severity, breaks(z)), (Severity::Breaking, (false, true)));
    assert!(z.receives.as_ref().unwrap().why.contains("older codex"));
    assert_eq!(at(&r, "TStartResponse.w", "field_added").severity, Severity::Compatible);
    // Required but nullable: an `Option` that reads a missing member as `None`.
    assert_eq!(at(&r, "TStartResponse.n", "field_added").severity, Severity::Compatible);
    assert_eq!(r.counts.types_changed, 2);
    assert_eq!(r.counts.methods_changed, 0);
}

#[test]
fn removed_renamed_and_retyped_fields() {
    let old = stable(
        "1",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"integer"}}},
           "TStartResponse":{"type":"object","properties":{"has_more":{"type":"boolean"},"gone":{"type":"string"}}}"#,
    );
    let new = stable(
        "2",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object","required":["a","count"],"properties":{"a":{"type":"integer"},"count":{"type":"integer"}}},
           "TStartResponse":{"type":"object","properties":{"hasMore":{"type":"boolean"},"fresh":{"type":"boolean"}}}"#,
    );
    let r = report(&old, &new);
    let retyped = at(&r, "TStartParams.a", "type_changed");
    assert_eq!(retyped.kind, Kind::TypeChanged { old: "String".into(), new: "i64".into() });
    assert_eq!(breaks(retyped), (true, false));
    // One removed and one added of the same type: looks like a rename.
    let renamed = at(&r, "TStartParams.b", "field_renamed");
    assert_eq!(renamed.kind, Kind::FieldRenamed { old: "b".into(), new: "count".into(), ty: "i64".into() });
    assert!(renamed.is_breaking());
    // Same name but for case and separators: a rename whatever else changed.
    let respelled = at(&r, "TStartResponse.has_more", "field_renamed");
    assert_eq!(breaks(respelled), (false, true));
    // Different types: a removal and an addition.
    let gone = at(&r, "TStartResponse.gone", "field_removed");
    assert_eq!(breaks(gone), (false, true));
    assert_eq!(at(&r, "TStartResponse.fresh", "field_added").severity, Severity::Compatible);
}

#[test]
fn required_and_optional() {
    let old = stable(
        "1",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
           "TStartResponse":{"type":"object","required":["z","w"],"properties":{"z":{"type":"string"},"w":{"type":"string"},"v":{"type":"string"}}}"#,
    );
    let new = stable(
        "2",
        &["c t/start TStartParams"],
        r#""TStartParams":{"type":"object","required":["y"],"properties":{"x":{"type":"string"},"y":{"type":"string"}}},
           "TStartResponse":{"type":"object","required":["w","v"],"properties":{"z":{"type":"string"},"w":{"type":["string","null"]},"v":{"type":"string"}}}"#,
    );
    let r = report(&old, &new);
    let presence = |path: &str| {
        let c = at(&r, path, "presence_changed");
        (c.severity, breaks(c))
    };
    // Sent: relaxing is compatible, requiring breaks.
    assert_eq!(presence("TStartParams.x"), (Severity::Compatible, (false, false)));
    assert_eq!(presence("TStartParams.y"), (Severity::Breaking, (true, false)));
    // Received: `T` <-> `Option<T>` breaks either way.
    assert_eq!(presence("TStartResponse.z"), (Severity::Breaking, (false, true)));
    assert_eq!(presence("TStartResponse.w"), (Severity::Breaking, (false, true)));
    assert!(at(&r, "TStartResponse.w", "presence_changed").receives.as_ref().unwrap().why.contains("null"));
    assert_eq!(presence("TStartResponse.v"), (Severity::Breaking, (false, true)));
    let Kind::PresenceChanged { old_ty, new_ty, .. } = &at(&r, "TStartResponse.z", "presence_changed").kind else {
        unreachable!()
    };
    assert_eq!((old_ty.as_str(), new_ty.as_str()), ("String", "Option<String>"));
}

#[test]
fn option_to_double_option_is_a_rust_api_change() {
    let defs = |doc: &str| {
        format!(
            r#""TStartParams":{{"type":"object","properties":{{"c":{{"type":["string","null"],"description":"{doc}"}}}}}},
               "TStartResponse":{{"type":"object"}}"#
        )
    };
    let old = stable("1", &["c t/start TStartParams"], &defs("Omit to keep it, set to `null` to clear it."));
    let new = stable("2", &["c t/start TStartParams"], &defs("The value."));
    let r = report(&old, &new);
    let c = at(&r, "TStartParams.c", "presence_changed");
    assert_eq!((c.severity, breaks(c)), (Severity::RustApi, (false, false)));
    let Kind::PresenceChanged { old_ty, new_ty, .. } = &c.kind else { unreachable!() };
    assert_eq!((old_ty.as_str(), new_ty.as_str()), ("Option<Option<String>>", "Option<String>"));
    assert_eq!(report(&new, &old).changes[0].severity, Severity::RustApi);
}

#[test]
fn enum_values_and_union_variants() {
    let defs = |values: &str, arms: &str| {
        format!(
            r##""AxParams":{{"type":"object"}},
               "AxResponse":{{"type":"object","required":["status","item"],"properties":{{"status":{{"$ref":"#/definitions/Status"}},"item":{{"$ref":"#/definitions/Item"}}}}}},
               "Status":{{"type":"string","enum":[{values}]}},
               "Item":{{"oneOf":[{arms}]}}"##
        )
    };
    let text = r#"{"type":"object","title":"TextItem","required":["type","text"],"properties":{"type":{"type":"string","enum":["text"]},"text":{"type":"string"}}}"#;
    let text2 = r#"{"type":"object","title":"TextItem","required":["type","text"],"properties":{"type":{"type":"string","enum":["text"]},"text":{"type":"string"},"lang":{"type":"string"}}}"#;
    let image = r#"{"type":"object","title":"ImageItem","required":["type","url"],"properties":{"type":{"type":"string","enum":["image"]},"url":{"type":"string"}}}"#;
    let audio = r#"{"type":"object","title":"AudioItem","required":["type","data"],"properties":{"type":{"type":"string","enum":["audio"]},"data":{"type":"string"}}}"#;
    let old = stable("1", &["c a/x AxParams"], &defs(r#""a","b","in_progress""#, &format!("{text},{image}")));
    let new = stable("2", &["c a/x AxParams"], &defs(r#""a","c","inProgress""#, &format!("{text2},{audio}")));
    let r = report(&old, &new);
    let added = r.changes.iter().find(|c| c.kind == Kind::ValueAdded { value: "c".into() }).unwrap();
    assert_eq!((added.path.to_string().as_str(), added.severity), ("Status", Severity::Compatible));
    assert!(added.receives.as_ref().unwrap().why.contains("Unrecognized"));
    let removed = at(&r, "Status", "value_removed");
    assert_eq!(breaks(removed), (false, true));
    let respelled = at(&r, "Status", "value_renamed");
    assert_eq!(respelled.kind, Kind::ValueRenamed { old: "in_progress".into(), new: "inProgress".into() });
    let variant = at(&r, "Item", "variant_added");
    assert_eq!(variant.kind, Kind::VariantAdded { value: "audio".into(), payload: "AudioItem = { data }".into() });
    assert_eq!(variant.severity, Severity::Compatible);
    assert!(at(&r, "Item", "variant_removed").is_breaking());
    // A change inside a variant's inline payload is reported at the variant.
    assert_eq!(at(&r, "Item::text.lang", "field_added").severity, Severity::Compatible);
    assert!(!r.changes.iter().any(|c| matches!(c.path.rust_type(), Some("TextItem" | "AudioItem"))));
    let md = r.to_markdown();
    assert!(md.contains("- `Status`: new value `\"c\"`"), "{md}");
}

#[test]
fn response_and_shape_changes() {
    // `review/start` pairs with any JSON value while no `ReviewStartResponse` exists.
    let old = stable(
        "1",
        &["c review/start ReviewStartParams", "c a/x AxParams"],
        r#""ReviewStartParams":{"type":"object"},"AxParams":{"type":"object"},"AxResponse":{"type":"object","properties":{"a":{"type":"string"}}}"#,
    );
    let new = stable(
        "2",
        &["c review/start ReviewStartParams", "c a/x AxParams"],
        r#""ReviewStartParams":{"type":"object"},"ReviewStartResponse":{"type":"object"},"AxParams":{"type":"object"},"AxResponse":{"type":"string","enum":["a"]}"#,
    );
    let r = report(&old, &new);
    let response = at(&r, "review/start response", "type_changed");
    assert_eq!(response.kind, Kind::TypeChanged { old: "Value".into(), new: "ReviewStartResponse".into() });
    assert_eq!(breaks(response), (false, true));
    let shape = at(&r, "AxResponse", "shape_changed");
    assert_eq!(shape.kind, Kind::ShapeChanged { old: "struct".into(), new: "string enum".into() });
    assert_eq!(r.counts.methods_changed, 1);
}

#[test]
fn params_presence() {
    let old = stable(
        "1",
        &["c account/logout -", "c a/x AxParams"],
        &format!(r#""LogoutAccountResponse":{{"type":"object"}},{EMPTY_PAIR}"#),
    );
    let new = stable(
        "2",
        &["c account/logout ?LogoutAccountParams", "c a/x ?AxParams"],
        &format!(
            r#""LogoutAccountParams":{{"type":"object"}},"LogoutAccountResponse":{{"type":"object"}},{EMPTY_PAIR}"#
        ),
    );
    let r = report(&old, &new);
    let c = at(&r, "account/logout params", "params_changed");
    assert_eq!(c.kind, Kind::ParamsChanged { old: "none".into(), new: "Option<LogoutAccountParams>".into() });
    assert_eq!(c.severity, Severity::Compatible);
    assert_eq!(at(&r, "a/x params", "params_changed").severity, Severity::Compatible);
    // The other way round breaks senders.
    let back = report(&new, &old);
    assert_eq!(breaks(at(&back, "account/logout params", "params_changed")), (true, false));
    assert_eq!(breaks(at(&back, "a/x params", "params_changed")), (true, false));
}

#[test]
fn experimental_marks() {
    let methods = ["c a/x AxParams"];
    let old = with_experimental(
        stable(
            "1",
            &methods,
            r#""AxParams":{"type":"object","properties":{"f":{"type":"string"}}},"AxResponse":{"type":"object"}"#,
        ),
        &["c a/x AxParams", "c b/y ByParams"],
        r#""AxParams":{"type":"object","properties":{"f":{"type":"string"}}},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
    );
    let new = with_experimental(
        stable(
            "2",
            &["c a/x AxParams", "c b/y ByParams"],
            r#""AxParams":{"type":"object"},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
        ),
        &["c a/x AxParams", "c b/y ByParams"],
        r#""AxParams":{"type":"object","properties":{"f":{"type":"string"},"g":{"type":"string"}}},"AxResponse":{"type":"object"},"ByParams":{"type":"object"},"ByResponse":{"type":"object"}"#,
    );
    let r = report(&old, &new);
    let to_stable = at(&r, "b/y", "to_stable");
    assert_eq!((to_stable.severity, to_stable.experimental), (Severity::Compatible, false));
    assert_eq!(r.counts.methods_to_stable, 1);
    let to_exp = at(&r, "AxParams.f", "to_experimental");
    assert_eq!((to_exp.severity, to_exp.experimental, breaks(to_exp)), (Severity::Breaking, false, (true, false)));
    let g = at(&r, "AxParams.g", "field_added");
    assert!(g.experimental);
    // b/y, its two types, and g.
    assert_eq!((r.counts.compatible, r.counts.compatible_experimental), (4, 1));
    let md = r.to_markdown();
    assert!(md.contains("new optional field `AxParams.g`: `Option<String>` *(experimental)*"), "{md}");
    assert!(
        md.contains(
            "#### `b/y`\n\n- stable now, with its types `ByParams`, `ByResponse` — no experimental opt-in needed\n"
        ),
        "{md}"
    );
}

#[test]
fn inline_type_renumbered_by_the_generator() {
    let old = stable(
        "1",
        &["c a/x AxParams"],
        r#""AxParams":{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]}}},"AxResponse":{"type":"object"}"#,
    );
    // A new definition takes the name `AxParamsMode`: the inline enum becomes `AxParamsMode2`.
    let new = stable(
        "2",
        &["c a/x AxParams"],
        r##""AxParams":{"type":"object","properties":{"mode":{"type":"string","enum":["a","b","c"]},"other":{"$ref":"#/definitions/AxParamsMode"}}},
            "AxParamsMode":{"type":"object","properties":{"z":{"type":"string"}}},"AxResponse":{"type":"object"}"##,
    );
    let r = report(&old, &new);
    let renamed = at(&r, "AxParams.mode", "renamed");
    assert_eq!(renamed.kind, Kind::Renamed { old: "AxParamsMode".into(), new: "AxParamsMode2".into(), alias_of: None });
    assert_eq!(renamed.severity, Severity::RustApi);
    assert_eq!(
        r.changes.iter().find(|c| c.kind == Kind::ValueAdded { value: "c".into() }).unwrap().path.to_string(),
        "AxParams.mode"
    );
    // Inline types are never added or removed on their own.
    let added: Vec<String> =
        r.changes.iter().filter(|c| c.kind == Kind::TypeAdded).map(|c| c.path.to_string()).collect();
    assert_eq!(added, ["AxParamsMode"]);
    assert_eq!(r.counts.types_removed, 0);
}

#[test]
fn renamed_definitions_and_aliases() {
    let old = stable(
        "1",
        &["c a/x AxParams"],
        r##""AxParams":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}},
            "AxResponse":{"type":"object","properties":{"result":{"$ref":"#/definitions/CallToolResult"}}},
            "CallToolResult":{"type":"object","properties":{"content":{"type":"string"},"isError":{"type":"boolean"}}}"##,
    );
    let new = stable(
        "2",
        &["c a/x AxParams"],
        r##""AxParams":{"type":"object","required":["path"],"properties":{"path":{"$ref":"#/definitions/AbsolutePath"}}},
            "AbsolutePath":{"type":"string"},
            "AxResponse":{"type":"object","properties":{"result":{"$ref":"#/definitions/ToolCallResponse"}}},
            "ToolCallResponse":{"type":"object","properties":{"content":{"type":"string"},"isError":{"type":"boolean"}}}"##,
    );
    let r = report(&old, &new);
    let alias = at(&r, "AxParams.path", "renamed");
    assert_eq!(
        alias.kind,
        Kind::Renamed { old: "String".into(), new: "AbsolutePath".into(), alias_of: Some("String".into()) }
    );
    assert_eq!(alias.severity, Severity::RustApi);
    let def = at(&r, "ToolCallResponse", "renamed");
    assert_eq!(
        def.kind,
        Kind::Renamed { old: "CallToolResult".into(), new: "ToolCallResponse".into(), alias_of: None }
    );
    // The use site is covered by the rename; no removal or addition of either.
    assert!(!r.changes.iter().any(|c| c.path.rust_type() == Some("AxResponse")));
    assert_eq!((r.counts.types_renamed, r.counts.types_added, r.counts.types_removed), (1, 1, 0));
    assert_eq!(r.counts.breaking, 0);
}

#[test]
fn shared_types_have_both_directions() {
    let defs = |thing: &str| {
        format!(
            r##""AxParams":{{"type":"object","properties":{{"t":{{"$ref":"#/definitions/Thing"}}}}}},"AxResponse":{{"type":"object"}},
                "ByParams":{{"type":"object"}},"ByResponse":{{"type":"object","properties":{{"t":{{"$ref":"#/definitions/Thing"}}}}}},
                "Thing":{thing}"##
        )
    };
    let methods = ["c a/x AxParams", "c b/y ByParams"];
    let old = stable("1", &methods, &defs(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#));
    let new = stable(
        "2",
        &methods,
        &defs(r#"{"type":"object","required":["b"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}"#),
    );
    let r = report(&old, &new);
    let b = at(&r, "Thing.b", "field_added");
    assert_eq!(breaks(b), (true, true));
    assert_eq!(b.filed_under, FiledUnder::Shared { name: "Thing".into(), experimental: false });
    assert_eq!(r.types["Thing"], Usage { sends: true, receives: true, methods: vec!["a/x".into(), "b/y".into()] });
    let md = r.to_markdown();
    assert!(md.contains("#### `Thing` — sent and received; used by `a/x`, `b/y`"), "{md}");
    assert!(md.contains("breaks **senders** (the server requires it: set it) and **receivers**"), "{md}");
}

#[test]
fn envelope_members() {
    let notification = r#""ThingDoneNotification":{"type":"object"}"#;
    let old = stable("1", &["n thing/done ThingDoneNotification"], notification);
    let mut new = stable("2", &["n thing/done ThingDoneNotification"], notification);
    new.stable = new.stable.replacen(
        r#""ServerNotification":{"#,
        r#""ServerNotification":{"properties":{"emittedAtMs":{"type":"integer","format":"int64"}},"#,
        1,
    );
    let r = report(&old, &new);
    let c = at(&r, "ServerNotification.emittedAtMs", "field_added");
    assert_eq!((c.filed_under.clone(), c.severity), (FiledUnder::Envelope, Severity::Compatible));
    assert!(r.to_markdown().contains("#### Every notification"));
}

#[test]
fn json_and_markdown_shape() {
    let old = stable("0.1.0", &["c a/x AxParams"], EMPTY_PAIR);
    let new = stable(
        "0.2.0",
        &["c a/x AxParams"],
        r#""AxParams":{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}},"AxResponse":{"type":"object"}"#,
    );
    let r = report(&old, &new);
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["old_version"], "0.1.0");
    let change = &json["changes"][0];
    assert_eq!(change["kind"], "field_added");
    assert_eq!(change["severity"], "breaking");
    assert_eq!(
        change["filed_under"],
        serde_json::json!({"filed_under": "method", "direction": "ClientRequest", "method": "a/x", "experimental": false})
    );
    assert_eq!(change["sends"]["breaking"], true);
    assert!(change["receives"].is_null());
    let md = r.to_markdown();
    assert!(md.starts_with("# Protocol changes: codex 0.1.0 → 0.2.0\n\n**1 breaking**, 0 compatible.\n"), "{md}");
    assert!(md.contains("## Breaking changes (1)\n\n### Client requests\n\n#### `a/x`\n\n- new required field `AxParams.x`: `String` — breaks **senders**"), "{md}");
}

/// A path names a type as the schema does, not as the generator does (`ax_mode` is `AxMode` in
/// Rust); its root keeps the Rust name for code that looks for the Rust items.
#[test]
fn paths_speak_schema_names() {
    let mode = |values: &str| {
        format!(
            r##""AxParams":{{"type":"object","properties":{{"mode":{{"$ref":"#/definitions/ax_mode"}}}}}},
               "AxResponse":{{"type":"object"}},"ax_mode":{{"type":"string","enum":[{values}]}}"##
        )
    };
    let old = stable("1", &["c a/x AxParams"], &mode(r#""a""#));
    let new_defs =
        format!(r#"{},"by_params":{{"type":"object"}},"ByResponse":{{"type":"object"}}"#, mode(r#""a","b""#));
    let new = stable("2", &["c a/x AxParams", "c b/y by_params"], &new_defs);
    let r = report(&old, &new);
    let added = at(&r, "ax_mode", "value_added");
    assert_eq!(added.path.root, Root::Type { rust: "AxMode".into(), schema: "ax_mode".into() });
    assert!(added.path.is_whole_type());
    assert_eq!(at(&r, "by_params", "type_added").path.rust_type(), Some("ByParams"));
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let paths: Vec<&str> = json["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"ax_mode") && paths.contains(&"by_params"), "{paths:?}");
    let md = r.to_markdown();
    assert!(md.contains("- `ax_mode`: new value `\"b\"`"), "{md}");
    // The new method's params type is named on its line (by its Rust name), not again as a new type.
    assert!(md.contains("- new method: params `ByParams`, response `ByResponse`\n"), "{md}");
    assert!(!md.contains("new type: `by_params`"), "{md}");
}

/// A schema name two types share (a v1 definition at the top level next to the v2 one of its
/// name) does not tell them apart: the path prints the Rust name.
#[test]
fn a_shared_schema_name_is_printed_as_the_rust_name() {
    let defs = |values: &str| {
        format!(
            r##""AxParams":{{"type":"object","properties":{{"a":{{"$ref":"#/definitions/Mode"}},"b":{{"$ref":"#/definitions/v2/Mode"}}}}}},
               "AxResponse":{{"type":"object"}},"Mode":{{"type":"string","enum":["v1",{values}]}},
               "v2":{{"Mode":{{"type":"string","enum":[{values}]}}}}"##
        )
    };
    let old = stable("1", &["c a/x AxParams"], &defs(r#""x""#));
    let new = stable("2", &["c a/x AxParams"], &defs(r#""x","y""#));
    let r = report(&old, &new);
    let mut paths: Vec<(String, Option<&str>)> = r
        .changes
        .iter()
        .filter(|c| c.kind == Kind::ValueAdded { value: "y".into() })
        .map(|c| (c.path.to_string(), c.path.rust_type()))
        .collect();
    paths.sort();
    assert_eq!(paths, [("Mode".to_owned(), Some("Mode")), ("V1Mode".to_owned(), Some("V1Mode"))]);
}
