//! The availability of methods and members by release, and the check of what an older
//! release lacks, on the generated tables (written against one release's members).

use codex_app_protocol::availability::*;
use serde_json::Value;

codex_app_protocol::__test_support::pinned_to_codex! { "0.171.0",
    #[test]
    fn what_an_older_release_lacks_is_found_in_the_text_and_in_the_value() {
        let release = Release::parse("0.169.0").unwrap();
        let params = r#"{"archived":false,"includedThreadIds":["a"],"limit":2,"cwd":"/x"}"#;
        let found = unknown_in_text(&release, "thread/list", params).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "params.includedThreadIds");
        assert_eq!(found[0].item, "ThreadListParams.includedThreadIds");
        assert_eq!(found[0].availability.since, "0.171.0");
        let value: Value = serde_json::from_str(params).unwrap();
        assert_eq!(unknown_to(&release, "thread/list", &value), found);
        // The crate's own release and a newer one lack nothing; the floor lacks more.
        assert!(unknown_in_text(&Release::parse(codex_app_protocol::CODEX_VERSION).unwrap(), "thread/list", params).unwrap().is_empty());
        assert!(unknown_in_text(&Release::parse("9.0.0").unwrap(), "thread/list", params).unwrap().is_empty());
        let sorted = r#"{"sortDirection":"asc"}"#;
        // The member (since 0.122.0) and its value, of a type as new.
    let at_floor = unknown_in_text(&Release::parse(FLOOR).unwrap(), "thread/list", sorted).unwrap();
    let items: Vec<(&str, &str)> = at_floor.iter().map(|u| (u.path.as_str(), u.item.as_str())).collect();
    assert!(items.contains(&("params.sortDirection", "ThreadListParams.sortDirection")), "{items:?}");
    assert!(at_floor.iter().all(|u| u.availability.since == "0.122.0"), "{at_floor:?}");
        assert!(unknown_in_text(&release, "thread/list", "{not json").is_err());
        assert_eq!(method("currentTime/read").map(|a| (a.since, a.until)), Some(("0.142.0", Some("0.169.0"))));
        assert_eq!(member("ThreadListParams.includedThreadIds").map(|a| a.since), Some("0.171.0"));
        assert_eq!(at("thread/list", "params.includedThreadIds").map(|a| a.since), Some("0.171.0"));
    }

#[test]
fn what_an_older_release_lacks_is_found_in_an_answer() {
    // An answer to `item/tool/call` with an audio item, which codex 0.145.0 added.
    let result = r#"{"success":true,"contentItems":[{"type":"inputText","text":"a"},{"type":"inputAudio","data":"x"}]}"#;
    let found = unknown_in_result(&Release::parse("0.140.0").unwrap(), "item/tool/call", result).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "result.contentItems[1]", "an arm is found at its object");
    assert_eq!(found[0].item, "DynamicToolCallOutputContentItem::inputAudio");
    assert!(found[0].is_value);
    assert!(unknown_in_result(&Release::parse("0.145.0").unwrap(), "item/tool/call", result).unwrap().is_empty());
}

}
