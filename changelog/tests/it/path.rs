//! How a changed item is named.

use codex_app_changelog::{Part, Path};

#[test]
fn printed_with_schema_names_and_wire_names() {
    let item = Path::ty("ChatgptLoginAccountParams", "LoginAccountParams::chatgpt");
    assert_eq!(item.member("tokens").item().map_value().to_string(), "LoginAccountParams::chatgpt.tokens[]{}");
    assert_eq!(
        Path::ty("ThreadItem", "ThreadItem").arm("commandExecution").member("status").to_string(),
        "ThreadItem::commandExecution.status"
    );
    assert_eq!(Path::ty("Config", "Config").extra().to_string(), "Config{..}");
    assert_eq!(Path::method("thread/start", Part::Method).to_string(), "thread/start");
    assert_eq!(Path::method("thread/start", Part::Params).member("cwd").to_string(), "thread/start params.cwd");
    assert_eq!(Path::method("thread/start", Part::Response).to_string(), "thread/start response");
    assert_eq!(Path::envelope().member("emittedAtMs").to_string(), "ServerNotification.emittedAtMs");
    assert_eq!(serde_json::to_value(item.member("x")).unwrap(), "LoginAccountParams::chatgpt.x");
}

#[test]
fn parts_are_read_from_the_value() {
    let p = Path::ty("ChatgptLoginAccountParams", "LoginAccountParams::chatgpt");
    assert!(p.is_whole_type() && !p.is_method());
    assert_eq!(p.rust_type(), Some("ChatgptLoginAccountParams"));
    let inner = p.member("a").arm("b").item();
    assert!(!inner.is_whole_type());
    assert_eq!(inner.last_member(), Some("a"));
    let m = Path::method("thread/start", Part::Params);
    assert!(m.is_method() && !m.is_whole_type());
    assert_eq!((m.method_wire(), m.rust_type()), (Some("thread/start"), None));
    assert_eq!(Path::envelope().rust_type(), Some("ServerNotification"));
}
