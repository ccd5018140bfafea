//! The availability of methods and members by release, and the check of what an older
//! release lacks, on the generated tables (written against one release's members).

// Everything below is written against one release's types: after a regen from another release
// it is left out whole, imports and helpers included (nothing stays behind unused).
codex_app_protocol::__test_support::written_for_codex! { "0.171.0",
    use codex_app_protocol::availability::*;
    use serde_json::Value;

    /// JSON text as a check reads it: a `RawValue` serializes as the text it holds.
    fn text_of(text: &str) -> Box<serde_json::value::RawValue> {
        serde_json::value::RawValue::from_string(text.to_owned()).unwrap()
    }

    fn sorted(mut found: Vec<Unknown>) -> Vec<Unknown> {
        found.sort_by(|a, b| (&a.path, &a.item).cmp(&(&b.path, &b.item)));
        found
    }

    #[test]
    fn what_an_older_release_lacks_is_found_in_typed_params_in_a_value_and_in_text() {
        use codex_app_protocol::ThreadListParams;
        let check = Check::new(&Release::parse("0.169.0").unwrap());
        let text = r#"{"archived":false,"includedThreadIds":["a"],"limit":2,"cwd":"/x"}"#;
        let found = check.params("thread/list", &text_of(text)).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "params.includedThreadIds");
        assert_eq!(found[0].item, "ThreadListParams.includedThreadIds");
        assert_eq!(found[0].availability.since, "0.171.0");
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(check.params("thread/list", &value).unwrap(), found);
        let typed: ThreadListParams = serde_json::from_str(text).unwrap();
        assert_eq!(check.params("thread/list", &typed).unwrap(), found);
        // Without the member, nothing: an absent `Option` is not looked at.
        let without = ThreadListParams { included_thread_ids: None, ..typed };
        assert_eq!(check.params("thread/list", &without).unwrap(), vec![]);

        // The crate's own release and a newer one have what the crate added last, and lack
        // what codex removed before them; the floor lacks more.
        for newer in [codex_app_protocol::CODEX_VERSION, "9.0.0"] {
            let check = Check::new(&Release::parse(newer).unwrap());
            assert!(!check.lacks_nothing(), "{newer} lacks what codex removed");
            assert!(check.params("thread/list", &text_of(text)).unwrap().is_empty());
        }
        // The member (since 0.122.0) and its value, of a type as new.
        let sort = r#"{"sortDirection":"asc"}"#;
        let floor = Check::new(&Release::parse(FLOOR).unwrap());
        let at_floor = floor.params("thread/list", &text_of(sort)).unwrap();
        let items: Vec<(String, &str)> = at_floor.iter().map(|u| (u.path.to_string(), u.item.as_str())).collect();
        assert!(items.contains(&("params.sortDirection".into(), "ThreadListParams.sortDirection")), "{items:?}");
        assert!(at_floor.iter().all(|u| u.availability.since == "0.122.0"), "{at_floor:?}");
        let typed: ThreadListParams = serde_json::from_str(sort).unwrap();
        assert_eq!(sorted(floor.params("thread/list", &typed).unwrap()), sorted(at_floor), "typed and text agree");

        assert_eq!(method("currentTime/read").map(|a| (a.since, a.until)), Some(("0.142.0", Some("0.169.0"))));
        assert_eq!(member("ThreadListParams.includedThreadIds").map(|a| a.since), Some("0.171.0"));
        let path = codex_app_protocol::path::JsonPath::from_steps(&[
            codex_app_protocol::path::Step::Key("params"),
            codex_app_protocol::path::Step::Key("includedThreadIds"),
        ]);
        assert_eq!(at("thread/list", &path).map(|a| a.since), Some("0.171.0"));
    }

    /// An externally tagged union's arm whose key is a member of the object (`{"custom": …}`)
    /// is named as the arm it is, by the check and by `member`, as the schema (and the history)
    /// names it.
    #[test]
    fn an_external_unions_arm_is_named_as_an_arm() {
        let check = Check::new(&Release::parse("0.142.0").unwrap());
        let text = r#"{"threadId":"t","multiAgentMode":{"custom":"ask first"}}"#;
        let found = check.params("thread/settings/update", &text_of(text)).unwrap();
        let items: Vec<(String, &str)> = found.iter().map(|u| (u.path.to_string(), u.item.as_str())).collect();
        assert_eq!(items, [("params.multiAgentMode.custom".to_owned(), "MultiAgentMode::custom")]);
        assert_eq!(found[0].availability.since, "0.143.0");
        assert!(found[0].is_value, "an arm the release lacks, which it refuses");
        assert_eq!(member("MultiAgentMode::custom"), Some(found[0].availability));
        assert_eq!(member("MultiAgentMode.custom"), None, "one name for the arm");
        assert_eq!(member("ServerNotification.emittedAtMs").map(|a| a.since), Some("0.145.0"));
    }

    /// What codex removed is lacked by every release after it, the crate's own and newer ones
    /// included: a method, a member and an enum value, each as the schema names it.
    #[test]
    fn what_codex_removed_is_lacked_by_the_newest_release_and_newer_ones() {
        use codex_app_protocol::{AskForApproval, ThreadStartParams};
        let rollback = method("thread/rollback").unwrap();
        let pinned = member("ThreadListParams.isPinned").unwrap();
        let on_failure = member("AskForApproval::on-failure").unwrap();
        assert_eq!(on_failure.until, Some("0.142.5"));
        for newer in [codex_app_protocol::CODEX_VERSION, "0.172.0", "9.0.0"] {
            let release = Release::parse(newer).unwrap();
            assert!(!rollback.in_release(&release) && !pinned.in_release(&release) && !on_failure.in_release(&release));
            let check = Check::new(&release);
            let found = check.params("thread/list", &text_of(r#"{"isPinned":true,"limit":1}"#)).unwrap();
            assert_eq!(found.iter().map(|u| (u.path.to_string(), u.item.as_str())).collect::<Vec<_>>(), [("params.isPinned".to_owned(), "ThreadListParams.isPinned")]);
            let typed = ThreadStartParams { approval_policy: Some(AskForApproval::OnFailure), ..Default::default() };
            let found = check.params("thread/start", &typed).unwrap();
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!((found[0].path.to_string(), found[0].item.as_str(), found[0].is_value), ("params.approvalPolicy".to_owned(), "AskForApproval::on-failure", true));
        }
        // In the releases that had them, nothing is lacked.
        let old = Check::new(&Release::parse("0.142.5").unwrap());
        let typed = ThreadStartParams { approval_policy: Some(AskForApproval::OnFailure), ..Default::default() };
        assert!(old.params("thread/start", &typed).unwrap().is_empty());
        assert!(rollback.in_release(&Release::parse("0.150.0").unwrap()));
    }

    #[test]
    fn what_an_older_release_lacks_is_found_in_an_answer() {
        // An answer to `item/tool/call` with an audio item, which codex 0.145.0 added: a union's
        // arm is found at its object's path, in the text and in the typed answer.
        use codex_app_protocol::DynamicToolCallResponse;
        let result = r#"{"success":true,"contentItems":[{"type":"inputText","text":"a"},{"type":"inputAudio","audioUrl":"x"}]}"#;
        let check = Check::new(&Release::parse("0.140.0").unwrap());
        let found = check.result("item/tool/call", &text_of(result)).unwrap();
        assert_eq!(check.result_raw("item/tool/call", &text_of(result)).unwrap(), found);
        let items: Vec<(String, &str)> = found.iter().map(|u| (u.path.to_string(), u.item.as_str())).collect();
        assert_eq!(
            items,
            [
                ("result.contentItems[1]".into(), "DynamicToolCallOutputContentItem::inputAudio"),
                ("result.contentItems[1].audioUrl".into(), "DynamicToolCallOutputContentItem::inputAudio.audioUrl"),
            ],
            "an arm is found at its object, and its members at theirs"
        );
        assert!(found[0].is_value);
        let typed: DynamicToolCallResponse = serde_json::from_str(result).unwrap();
        assert_eq!(sorted(check.result("item/tool/call", &typed).unwrap()), sorted(found));
        let check = Check::new(&Release::parse("0.145.0").unwrap());
        assert!(check.result("item/tool/call", &text_of(result)).unwrap().is_empty());
    }

    /// On every release of the range: the typed walk of params, the walk of their `Value` and
    /// the one-pass read of their text find the same.
    #[test]
    fn typed_params_their_value_and_their_text_are_checked_alike() {
        use codex_app_protocol::{ThreadListParams, ThreadStartParams, TurnStartParams};
        let params = [
            ("thread/list", r#"{"sortDirection":"asc","includedThreadIds":["a"],"sourceKinds":["cli","exec"],"limit":1}"#),
            ("turn/start", r#"{"threadId":"t","input":[{"type":"text","text":"hi"},{"type":"image","url":"u"}]}"#),
            ("thread/start", r#"{"cwd":"/x","approvalPolicy":"never","sandbox":"read-only"}"#),
            // A union's tag after the arm's members, and a key written with an escape.
            ("turn/start", r#"{"input":[{"url":"u","type":"image"}],"threadId":"t"}"#),
            ("thread/list", r#"{"included\u0054hreadIds":["a"],"sortDirection":"asc"}"#),
        ];
        let mut compared = 0;
        for release in releases() {
            let check = Check::new(&Release::parse(release).unwrap());
            for (method, text) in params {
                let from_text = sorted(check.params(method, &text_of(text)).unwrap());
                assert_eq!(sorted(check.params_raw(method, &text_of(text)).unwrap()), from_text, "{method} at {release}, raw");
                let value: Value = serde_json::from_str(text).unwrap();
                // Each in the order it has the members: a `Value` sorts them, the text does not.
                assert_eq!(sorted(check.params(method, &value).unwrap()), from_text, "{method} at {release}");
                let typed = match method {
                    "thread/list" => check.params(method, &serde_json::from_str::<ThreadListParams>(text).unwrap()),
                    "turn/start" => check.params(method, &serde_json::from_str::<TurnStartParams>(text).unwrap()),
                    _ => check.params(method, &serde_json::from_str::<ThreadStartParams>(text).unwrap()),
                };
                assert_eq!(sorted(typed.unwrap()), from_text, "{method} at {release}, typed");
                compared += from_text.len();
            }
        }
        assert!(compared > 0, "the releases of the range lack some of these params");
    }
}

/// Each method's note in the generated docs (`*Since codex …*`, on its variant of
/// `ClientRequest` and the others) says what the availability table says of it: the generator
/// writes both from one fact, and nothing edits either apart. Read from the generated source,
/// whatever release it was generated from.
#[test]
fn every_methods_doc_note_says_what_the_availability_table_says() {
    use codex_app_protocol::availability::{method, FLOOR};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../protocol/src/generated/methods.rs");
    let source = std::fs::read_to_string(&path).unwrap();
    // A note's releases: `Since codex A`, `In codex A to B (…)`, `In codex releases up to B (…)`,
    // or no note (every release of the range).
    fn noted(head: &str) -> (&str, Option<&str>) {
        let note = head.split_once("#[doc = \" *").map(|(_, rest)| rest.split_once(".*\"]").unwrap().0);
        match note {
            None => (FLOOR, None),
            Some(note) => {
                if let Some(since) = note.strip_prefix("Since codex ") {
                    (since, None)
                } else if let Some(until) = note.strip_prefix("In codex releases up to ") {
                    (FLOOR, Some(until.split_once(' ').unwrap().0))
                } else {
                    let range = note.strip_prefix("In codex ").unwrap_or_else(|| panic!("an unknown note: {note}"));
                    let (since, rest) = range.split_once(" to ").unwrap();
                    (since, Some(rest.split_once(' ').unwrap().0))
                }
            }
        }
    }
    let mut checked = 0;
    // A method's row of the `wire_methods!` tables: `[notes] [cfg] Name = "wire" (…`.
    for line in source.lines() {
        let Some((before, _)) = line.split_once("\" (") else { continue };
        let Some((head, wire)) = before.rsplit_once(" = \"") else { continue };
        let table =
            method(wire).unwrap_or_else(|| panic!("{wire}: in the generated methods, not in the availability table"));
        assert_eq!(
            noted(head),
            (table.since, table.until),
            "{wire}: its doc note and its row of the availability table"
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} methods read from {}", path.display());
}

/// Tidy: each fact of the range is stated once in the generated code, and the rest of the
/// crate reads it from there. A release number outside the doc comments is one of:
///
/// - a row of the availability tables (`generated/availability.rs`), which spell "since the
///   floor" as `""`, never as the floor's number;
/// - a release of the range in `RELEASES`, once each, where the floor and the newest are named
///   by their constants, `FLOOR` and `CODEX_VERSION`, the one place that writes each;
/// - an arm of `written_for_codex!`, which keeps a test when its release is one of the range's:
///   a macro matches literals, not constants, so the arms are the range again, checked here to
///   list exactly its releases, in order.
///
/// The marker types' `SINCE` and `UNTIL` and the availability answers read the tables; the doc
/// notes are views of them, checked against them above.
#[test]
fn the_generated_code_states_each_release_once() {
    use codex_app_protocol::availability::{releases, Release, FLOOR};
    use codex_app_protocol::CODEX_VERSION;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../protocol/src/generated");
    // The string literals of a line's code: its doc comment and `#[doc = "…"]` attributes left out.
    fn literals(line: &str) -> Vec<&str> {
        let code = line.trim_start();
        if code.starts_with("//") {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut rest = code;
        while let Some(start) = rest.find('"') {
            let is_doc = rest[..start].ends_with("#[doc = ");
            let body = &rest[start + 1..];
            // The closing quote: the first one no backslash escapes.
            let mut escaped = false;
            let end = body
                .char_indices()
                .find(|&(_, c)| {
                    let closes = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closes
                })
                .map(|(i, _)| i)
                .unwrap_or_else(|| panic!("a literal that does not end on its line: {line}"));
            if !is_doc {
                out.push(&body[..end]);
            }
            rest = &body[end + 1..];
        }
        out
    }
    let (mut arms, mut listed, mut constants) = (Vec::<String>::new(), Vec::<String>::new(), Vec::new());
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut in_releases = false;
        for (n, line) in text.lines().enumerate() {
            let at = || format!("{file}:{}: {}", n + 1, line.trim());
            if line.starts_with("pub(crate) static RELEASES") {
                in_releases = true;
            }
            for literal in literals(line) {
                if Release::parse(literal).is_none() {
                    continue;
                }
                let trimmed = line.trim_start();
                let constant = ["pub const FLOOR: &str =", "pub const CODEX_VERSION: &str ="];
                if constant.iter().any(|c| trimmed.starts_with(c)) {
                    constants.push(literal.to_owned());
                } else if in_releases {
                    listed.push(literal.to_owned());
                } else if file == "methods.rs" && trimmed.starts_with(&format!("({literal:?}, $($item:item)*) =>")) {
                    arms.push(literal.to_owned());
                } else if file == "availability.rs" && (trimmed.starts_with("r(") || trimmed.starts_with("o(")) {
                    // A row's since, the cell after its name: `r("name", "since", …`, and
                    // the same in `m(` and `v(`.
                    let since_cell = ["r(", "m(", "v("]
                        .iter()
                        .any(|call| line.split(call).skip(1).any(|row| row.split('"').nth(3) == Some(literal)));
                    assert!(!(since_cell && literal == FLOOR), "{}: the tables spell the floor `\"\"`", at());
                } else {
                    panic!("{}: a release number outside the tables", at());
                }
            }
            if in_releases && line.starts_with("];") {
                in_releases = false;
            }
        }
    }
    constants.sort_unstable();
    let mut expected = vec![FLOOR.to_owned(), CODEX_VERSION.to_owned()];
    expected.sort_unstable();
    assert_eq!(constants, expected, "`FLOOR` and `CODEX_VERSION`, each written once");
    let range = releases();
    let inner = if range.len() > 1 { &range[1..range.len() - 1] } else { &[][..] };
    assert_eq!(listed, inner, "RELEASES writes each release between the floor and the newest once");
    assert_eq!(arms, range, "the arms of `written_for_codex!` and the range's releases");
}

/// Every method, member, enum value and union arm that the history (`vendor-schemas/history.json`,
/// written by the fold of the range) says is not in every release of the range is answered as
/// the history states it, by [`method`](codex_app_protocol::availability::method) for a method
/// (`ClientRequest:thread/list`) and [`member`](codex_app_protocol::availability::member) for the
/// rest: a fact kept in the history and left out of the tables would read as "every release has
/// it". Read at run time, whatever release the crate was generated from. What a release removed
/// from a type the range no longer has is not answered (the type's members are the range's).
#[test]
fn every_item_of_the_history_is_answered_as_the_history_states_it() {
    use codex_app_protocol::availability::{member, method, FLOOR};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../vendor-schemas/history.json");
    let history: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let unions = ["ClientRequest:", "ServerRequest:", "ServerNotification:", "ClientNotification:"];
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (key, fact) in history["items"].as_object().expect("the history's items") {
        let text = |name: &str| fact.get(name).and_then(serde_json::Value::as_str);
        let since = text("since").expect("every fact has a since");
        let until = text("until");
        let method_wire = unions.iter().find_map(|u| key.strip_prefix(u).filter(|rest| !rest.starts_with(':')));
        let answer = match method_wire {
            Some(wire) => method(wire),
            None => member(key),
        };
        if until.is_some() && answer.is_none() {
            continue;
        }
        // Since and until. When the newest release always sends a member is the generator's
        // reading of the types (optional in them, required in the newest release), not the
        // history's.
        let expected = (since != FLOOR || until.is_some()).then_some((since, until));
        let answered = answer.filter(|a| a.since != FLOOR || a.until.is_some()).map(|a| (a.since, a.until));
        if answered != expected {
            wrong.push(format!("{key}: the history says {expected:?}, `member` answers {answered:?}"));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{} of {checked} items answered otherwise:\n{}", wrong.len(), wrong.join("\n"));
    // Read at all: a range of more than one release has items that are not in every one.
    let range = codex_app_protocol::availability::releases().len();
    assert!(checked > 0 || range == 1, "no item read from {}", path.display());
}
