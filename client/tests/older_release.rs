//! The client against a real codex older than the crate's newest release, inside the supported
//! range: it is told only what that release knows. codex 0.169.0 silently ignores a params
//! member it does not know (`thread/list` with `includedThreadIds`, added in 0.171.0, answers
//! with the unfiltered list), so the client refuses such a request before sending it.
//!
//! The release is installed on first use into `.codex-bin/releases/0.169.0/` (npm, through
//! `scripts/install-codex.sh`).

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",

use std::path::PathBuf;
use std::process::Command;

use codex_app_client::protocol::*;
use codex_app_client::*;
use crate::common::*;

/// `version` of codex, installed into the workspace's `.codex-bin/releases/` once.
fn release(version: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let out = Command::new("bash")
        .arg(root.join("scripts/install-codex.sh"))
        .env("CODEX_VERSION", version)
        .env("CODEX_INSTALL_DIR", root.join(".codex-bin/releases").join(version))
        .output()
        .unwrap_or_else(|e| panic!("running scripts/install-codex.sh: {e}"));
    assert!(out.status.success(), "installing codex {version}: {}", String::from_utf8_lossy(&out.stderr));
    let path = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().trim().to_owned();
    PathBuf::from(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary: installs codex 0.169.0 with npm"]
async fn codex_0_169_is_sent_only_what_it_knows() {
    let setup = Setup::new(release("0.169.0"));
    let client = setup.connect(Client::builder()).await;
    assert_eq!(client.server_version().map(|r| r.to_string()).as_deref(), Some("0.169.0"));
    assert!(client.version_check().unwrap().matches(), "0.169.0 is in the supported range");

    // A member 0.169.0 does not know: refused locally, naming it and the release that has it.
    let filtered = ThreadListParams { included_thread_ids: Some(vec!["no-such-thread".into()]), ..Default::default() };
    let refused = client.request::<request::ThreadList>(filtered.clone()).await.unwrap_err();
    let ClientError::UnknownToServer { method, server, items } = &refused else { panic!("{refused:?}") };
    assert_eq!((method.as_str(), server.as_str()), ("thread/list", "0.169.0"));
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].item, "ThreadListParams.includedThreadIds");
    assert_eq!(items[0].path, "params.includedThreadIds");
    assert_eq!(items[0].availability.since, "0.171.0");
    let text = refused.to_string();
    assert!(text.contains("includedThreadIds") && text.contains("0.171.0") && text.contains("nothing was sent"), "{text}");

    // Without it, the server answers.
    client.request::<request::ThreadList>(ThreadListParams::default()).await.expect("thread/list answered");

    // A method 0.169.0 does not have: refused locally, naming the release that introduced it.
    let unavailable = client
        .request_raw("modelProvider/default/set", serde_json::json!({"provider": "openai"}))
        .await
        .unwrap_err();
    let ClientError::Unavailable { method, availability, server } = &unavailable else { panic!("{unavailable:?}") };
    assert_eq!((method.as_str(), availability.since, server.as_str()), ("modelProvider/default/set", "0.171.0", "0.169.0"));
    client.shutdown(std::time::Duration::from_secs(5)).await;

    // Stripped instead of refused: sent without the member, and answered.
    let client = setup.connect(Client::builder().unknown_to_server(UnknownItemPolicy::Strip)).await;
    client.request::<request::ThreadList>(filtered).await.expect("answered without includedThreadIds");
    client.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary: installs codex 0.100.0 with npm"]
async fn codex_0_100_below_the_floor_warn_connects_and_error_names_the_range() {
    let setup = Setup::new(release("0.100.0"));
    // Its `initialize` result is only `userAgent`: read before anything has to decode.
    let client = setup.connect(Client::builder().client_info("My App", "1.0")).await;
    let check = client.version_check().unwrap();
    assert_eq!(check.server.as_deref(), Some("0.100.0"));
    assert_eq!(check.support(), Some(availability::Support::Older));
    assert!(client.initialize_response().is_none(), "0.100.0 lacks `codexHome`");
    assert!(client.initialize_result().unwrap()["userAgent"].as_str().unwrap().starts_with("My App/0.100.0 "));
    // The session goes on as far as 0.100.0's messages allow: `thread/start` is answered.
    let started = client.request_raw("thread/start", serde_json::json!({})).await.expect("thread/start answered");
    assert!(started["thread"]["id"].is_string(), "{started}");
    client.shutdown(std::time::Duration::from_secs(5)).await;

    let refused = Client::builder().version_policy(VersionPolicy::Error).spawn(&setup.command).await.unwrap_err();
    let ClientError::VersionMismatch(check) = &refused else { panic!("{refused:?}") };
    assert_eq!(check.server.as_deref(), Some("0.100.0"));
    let range = format!("codex {} to {}", availability::FLOOR, CODEX_VERSION);
    assert!(refused.to_string().contains(&range), "{refused}");
}

}
