//! One small hand-written schema per construct (`tests/constructs/*.json`), and the Rust the
//! generator emits for it as an insta snapshot. Inputs are a bundle, or
//! `{"stable": bundle, "experimental": bundle}` for the experimental marks.
//! What the generator could not type faithfully is listed first (`==== warnings`, each with
//! its JSON pointer). Each error case (`tests/errors/*.json`: schemas that are not valid JSON
//! Schema, and decisions to make) snapshots the error message, which names the JSON pointer.

use crate::common::schema_set;
use codex_app_codegen::decisions::Decisions;
use codex_app_codegen::ir::Ty;
use codex_app_codegen::{build_ir_with, generate, generate_with, Settings};

#[test]
fn constructs() {
    insta::glob!("constructs/*.json", |path| {
        let set = schema_set(path, "test");
        let has_methods = ["ClientRequest", "ServerRequest", "ServerNotification"]
            .iter()
            .any(|u| set.stable.contains(&format!("\"{u}\"")));
        // The constructs' members are not in vendor-schemas/decisions.json: they take the
        // proposals read from their descriptions.
        let (files, summary) = generate_with(&set, "test", &Settings::codex().unwrap().proposing())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = String::new();
        if !summary.warnings.is_empty() {
            out.push_str("==== warnings\n");
            for w in &summary.warnings {
                out.push_str(&format!("{w}\n"));
            }
        }
        for file in files {
            let name = file.path.file_name().unwrap().to_str().unwrap();
            let wanted = match name {
                "types.rs" => true,
                // The client's server-request handler: its methods and their default answers
                // (none but `other` for a bundle without server requests).
                "methods.rs" | "access.rs" | "handler.rs" => has_methods,
                "experimental.rs" => set.experimental.is_some(),
                // The type table for the conformance tests: a list of the types above.
                _ => false,
            };
            if wanted {
                // Skip the header (hashes of the input): the snapshot is about the code.
                let body: String = file
                    .contents
                    .lines()
                    .skip_while(|l| l.starts_with("//") || l.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push_str(&format!("==== {name}\n{body}\n"));
            }
        }
        insta::assert_snapshot!(out);
    });
}

#[test]
fn undecided_null_member_is_an_error_listing_the_entry_to_add() {
    let set = schema_set(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/constructs/struct_members.json")),
        "test",
    );
    let err = generate(&set, "test").expect_err("Widget.branch is not decided");
    assert!(err.message.contains("vendor-schemas/decisions.json"), "{err}");
    assert!(
        err.message.contains(
            r#""Widget.branch": {"distinct": true, "why": "description: Omit to leave unchanged, set to `null` to clear it."},"#
        ),
        "{err}"
    );
}

/// Every decision a schema needs comes in one error (the members' and the responses'), each
/// with its proposal, as entries to paste; `Undecided::Propose` takes the same proposals.
#[test]
fn every_missing_decision_is_listed_in_one_error() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/errors/undecided_member_and_unpaired_requests.json"
    ));
    let set = schema_set(path, "test");
    let undecided = Settings::with_decisions(Decisions::from_json("{}").unwrap());
    let err = build_ir_with(&set, &undecided).expect_err("three decisions are missing");
    let missing = err.missing_decisions.as_deref().expect("the error carries the missing decisions");
    let responses: Vec<_> =
        missing.responses.iter().map(|r| (r.method.as_str(), r.direction, r.proposal.as_str())).collect();
    assert_eq!(
        responses,
        [("gadget/tune", "ClientRequest", "TuneGadgetResponse"), ("gadget/reset", "ClientRequest", "any")]
    );
    let members: Vec<_> = missing.null_distinct_from_absent.iter().map(|n| (n.key.as_str(), n.proposal)).collect();
    assert_eq!(members, [("GadgetTuneParams.label", true)]);
    assert_eq!(missing.len(), 3);
    for entry in [
        r#""gadget/tune": "TuneGadgetResponse","#,
        r#""gadget/reset": "any","#,
        r#""GadgetTuneParams.label": {"distinct": true, "why": "description: "#,
    ] {
        assert!(err.message.contains(entry), "{entry} not in:\n{err}");
    }

    // Pasted as told (each block at the top of its object) into a decisions file that has
    // entries already, they are all the decisions the schema needs.
    let file = "{\n  \"responses\": {\n    \"other/method\": \"any\"\n  },\n  \"null_distinct_from_absent\": {\n    \"Other.member\": false\n  }\n}\n";
    let decided = Decisions::from_json(&paste(file, &missing.entries())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(decided.responses.len(), 3);
    let ir = build_ir_with(&set, &Settings::with_decisions(decided)).unwrap_or_else(|e| panic!("{e}"));
    let proposed = build_ir_with(&set, &undecided.proposing()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ir.client_requests, proposed.client_requests);
    assert_eq!(ir.client_requests[0].response, Some(Ty::Named("TuneGadgetResponse".into())));
    assert_eq!(ir.client_requests[1].response, Some(Ty::Any));
}

/// A gadget's tune params in two releases: 1.0.0 has `label` (its description speaks of `null`
/// and omission: a candidate) and `tier` (no description), 1.1.0 adds `budget` (no description)
/// and `note` (a description that does not speak of `null`).
fn gadget_release(version: &str, newer: bool) -> codex_app_codegen::SchemaSet {
    let added = if newer {
        r#", "budget": {"type": ["integer", "null"], "format": "int64"}, "note": {"type": ["string", "null"], "description": "A note kept with the gadget."}"#
    } else {
        ""
    };
    let stable = format!(
        r##"{{"definitions": {{
  "ClientRequest": {{"oneOf": [{{"type": "object", "required": ["id", "method", "params"], "properties": {{"id": {{"type": "integer"}}, "method": {{"enum": ["gadget/tune"], "type": "string"}}, "params": {{"$ref": "#/definitions/GadgetTuneParams"}}}}}}]}},
  "GadgetTuneParams": {{"type": "object", "required": ["id"], "properties": {{
    "id": {{"type": "string"}},
    "label": {{"type": ["string", "null"], "description": "Omit to keep the label, set to `null` to remove it."}},
    "tier": {{"type": ["string", "null"]}}{added}}}}},
  "GadgetTuneResponse": {{"type": "object", "properties": {{}}}}}}}}"##
    );
    codex_app_codegen::SchemaSet { stable, experimental: None, codex_version: version.to_owned() }
}

/// A decision holds for any optional nullable member, whether its description hints at it
/// (`label`) or only codex's declaration says so (`tier`); a member without either is
/// `Option<T>` and does not stop the generator.
#[test]
fn a_decision_holds_for_a_member_no_description_hints_at() {
    let decisions = Decisions::from_json(
        r#"{"null_distinct_from_absent": {
            "GadgetTuneParams.label": {"distinct": false, "why": "description: Omit to keep the label, set to `null` to remove it."},
            "GadgetTuneParams.tier": {"distinct": true, "why": "codex declares Option<Option<String>> with double-option helpers"}
        }}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        decisions.null_distinct_from_absent["GadgetTuneParams.tier"].why,
        "codex declares Option<Option<String>> with double-option helpers"
    );
    let settings = Settings::with_decisions(decisions);
    let set = gadget_release("1.1.0", true);
    let (files, _) =
        generate_with(&set, "test", &settings).unwrap_or_else(|e| panic!("undecided members stopped it: {e}"));
    let types = &files.iter().find(|f| f.path.ends_with("types.rs")).expect("types.rs").contents;
    for field in [
        "pub tier: Option<Option<String>>",
        "pub label: Option<String>",
        "pub budget: Option<i64>",
        "pub note: Option<String>",
    ] {
        assert!(types.contains(field), "{field} not in:\n{types}");
    }

    // The first format of the file, a bare boolean, still reads.
    let bare = Decisions::from_json(r#"{"null_distinct_from_absent": {"GadgetTuneParams.tier": true}}"#).unwrap();
    assert!(bare.null_distinct_from_absent["GadgetTuneParams.tier"].distinct);
    assert!(bare.null_distinct_from_absent["GadgetTuneParams.tier"].why.is_empty());
    // A reasoned entry takes no other member.
    assert!(Decisions::from_json(
        r#"{"null_distinct_from_absent": {"T.m": {"distinct": true, "why": "", "other": 1}}}"#
    )
    .is_err());
}

/// A release that adds optional nullable members no decision covers and no description settles
/// (`budget`, `note`): listed for a decision with their JSON pointers, and no longer once
/// decided; members the previous release had (`tier`) and candidates (`label`) are not.
#[test]
fn a_release_adding_undecided_nullable_members_lists_them_for_a_decision() {
    use codex_app_codegen::decisions::new_undecided_nullables_of_sets;
    let settings = Settings::with_decisions(
        Decisions::from_json(
            r#"{"null_distinct_from_absent": {"GadgetTuneParams.label": {"distinct": true, "why": "description"}}}"#,
        )
        .unwrap(),
    );
    let listed =
        new_undecided_nullables_of_sets(&gadget_release("1.0.0", false), &gadget_release("1.1.0", true), &settings)
            .unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<_> = listed.iter().map(|n| (n.key.as_str(), n.pointer.as_str(), n.doc.as_str())).collect();
    assert_eq!(
        listed,
        [
            ("GadgetTuneParams.budget", "#/definitions/GadgetTuneParams/properties/budget", ""),
            ("GadgetTuneParams.note", "#/definitions/GadgetTuneParams/properties/note", "A note kept with the gadget."),
        ]
    );

    let mut decided = settings.clone();
    decided.decisions = Decisions::from_json(
        r#"{"null_distinct_from_absent": {
            "GadgetTuneParams.label": {"distinct": true, "why": "description"},
            "GadgetTuneParams.budget": {"distinct": true, "why": "codex declares Option<Option<i64>>"}
        }}"#,
    )
    .unwrap();
    let listed =
        new_undecided_nullables_of_sets(&gadget_release("1.0.0", false), &gadget_release("1.1.0", true), &decided)
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.iter().map(|n| n.key.as_str()).collect::<Vec<_>>(), ["GadgetTuneParams.note"]);

    // The same release twice adds nothing.
    let same =
        new_undecided_nullables_of_sets(&gadget_release("1.1.0", true), &gadget_release("1.1.0", true), &settings)
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(same.is_empty(), "{same:?}");
}

/// Pastes each block of `entries` (an object's opening line, then its entries) right after the
/// same opening line in `file`.
fn paste(file: &str, entries: &str) -> String {
    let mut lines: Vec<String> = file.lines().map(str::to_owned).collect();
    let mut at = None;
    for line in entries.lines() {
        if line.ends_with('{') {
            at = Some(lines.iter().position(|l| l == line).unwrap_or_else(|| panic!("{line:?} not in the file")) + 1);
        } else {
            let i = at.expect("entries start with an object's opening line");
            lines.insert(i, line.to_owned());
            at = Some(i + 1);
        }
    }
    lines.join("\n")
}

#[test]
fn errors() {
    insta::glob!("errors/*.json", |path| {
        let err = generate(&schema_set(path, "test"), "test").expect_err("the schema is not supported");
        insta::assert_snapshot!(err.to_string());
    });
}

/// The generator's policies are [`Settings`]: another catch-all variant, other routes or other
/// decisions change what it writes.
#[test]
fn settings_change_the_output() {
    let construct = |name: &str| {
        schema_set(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/constructs").join(name), "test")
    };
    let file = |set: &codex_app_codegen::SchemaSet, settings: &Settings, name: &str| {
        let (files, _) = generate_with(set, "test", settings).unwrap_or_else(|e| panic!("{e}"));
        files.into_iter().find(|f| f.path.ends_with(name)).expect("generated").contents
    };
    let codex = Settings::codex().unwrap().proposing();

    // The value `Unrecognized` gives way to the catch-all variant, unless it is named otherwise.
    let names = construct("catch_all_names.json");
    assert!(file(&names, &codex, "types.rs").contains(r#"UnrecognizedValue = "Unrecognized","#));
    let other = Settings { catch_all: "Unknown".into(), ..codex.clone() };
    assert!(file(&names, &other, "types.rs").contains(r#"Unrecognized = "Unrecognized","#));

    // The routes a notification's row states.
    let methods = construct("methods_shared_and_paramless.json");
    assert!(file(&methods, &codex, "methods.rs").contains(" thread(thread_id),"));
    let unrouted = Settings { routes: Vec::new(), ..codex.clone() };
    assert!(!file(&methods, &unrouted, "methods.rs").contains(" thread(thread_id),"));

    // The decisions (`vendor-schemas/decisions.json` for regen) are one of the inputs.
    let members = construct("struct_members.json");
    assert!(file(&members, &codex, "types.rs").contains("pub branch: Option<Option<String>>"));
    let decided = Decisions::from_json(r#"{"null_distinct_from_absent": {"Widget.branch": false}}"#).unwrap();
    let two_states = Settings { decisions: decided, ..codex.clone() };
    assert!(file(&members, &two_states, "types.rs").contains("pub branch: Option<String>"));
}
