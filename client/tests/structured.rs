//! Typed structured output and typed dynamic tools against the real codex (the `schemars`
//! feature; tools also need `experimental`).
//!
//! Written against the types of the vendored codex release; after a regen from a release out
//! of the range these tests are left out and one test says so (see `written_for_codex!`).
#![cfg(feature = "schemars")]

codex_app_client::protocol::__test_support::written_for_codex! { "0.171.0",


use std::time::Duration;

use codex_app_client::protocol::*;
use codex_app_client::*;
use codex_app_mock::ev;
use crate::common::*;
use serde::Deserialize;

#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    temperature: i64,
}

/// Whether `needle` occurs anywhere in `haystack` (as a sub-value).
fn contains(haystack: &serde_json::Value, needle: &serde_json::Value) -> bool {
    haystack == needle
        || match haystack {
            serde_json::Value::Array(items) => items.iter().any(|v| contains(v, needle)),
            serde_json::Value::Object(map) => map.values().any(|v| contains(v, needle)),
            _ => false,
        }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn structured_output_is_decoded_into_the_type() {
    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push_events(ev::assistant_message("resp-1", "msg-1", &[r#"{"city":"Paris","#, r#""temperature":21}"#]));
    setup.mock.push_events(ev::assistant_message("resp-2", "msg-2", &[r#"{"city":"Oslo","temperature":"cold"}"#]));
    let client = setup.connect(Client::builder()).await;
    let thread = start_thread(&client, ThreadStartParams::default()).await;
    let turn = client.start_structured_turn::<Forecast>(text_turn(&thread, "Weather?")).await.unwrap();
    assert_eq!(tokio::time::timeout(T, turn.result()).await.unwrap().unwrap(), Forecast { city: "Paris".into(), temperature: 21 });
    // The schema reached the model request.
    let requests = setup.mock.wait_for_requests(1, T).unwrap();
    let schema = codex_app_client::structured::schema_of::<Forecast>();
    assert!(contains(&requests[0].body, &schema["properties"]), "no schema in the model request: {}", requests[0].body["text"]);

    // A message that does not fit: the error names the type and the path.
    let turn = client.start_structured_turn::<Forecast>(text_turn(&thread, "Again?")).await.unwrap();
    match tokio::time::timeout(T, turn.result()).await.unwrap() {
        Err(ClientError::Decode(report)) => {
            assert_eq!(report.path.as_ref().map(ToString::to_string).as_deref(), Some("temperature"), "{report}");
            assert!(report.message.contains("Forecast"), "{report}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    client.shutdown(Duration::from_secs(5)).await;
}

#[cfg(feature = "experimental")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the codex binary (the pinned release, installed with npm on first use)"]
async fn a_typed_dynamic_tool_gets_decoded_arguments() {
    use codex_app_client::structured::Tools;
    use serde_json::json;

    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    struct WeatherArgs {
        /// The city.
        city: String,
        days: Option<u32>,
    }

    let codex = codex();
    let setup = Setup::new(codex);
    setup.mock.push_events(ev::tool_call("resp-1", "call-1", "lookup_weather", &json!({"city": "Paris", "days": 2})));
    setup.mock.push_events(ev::assistant_message("resp-2", "msg-1", &["It is sunny."]));
    setup.mock.push_events(ev::tool_call("resp-3", "call-2", "lookup_weather", &json!({"town": "Oslo"})));
    setup.mock.push_events(ev::assistant_message("resp-4", "msg-2", &["Sorry."]));
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let tools = Tools::new().tool("lookup_weather", "Current weather for a city.", move |args: WeatherArgs| {
        let seen_tx = seen_tx.clone();
        async move {
            let _ = seen_tx.send(format!("{}/{:?}", args.city, args.days));
            Ok::<_, String>(format!("sunny in {}, 24 C", args.city))
        }
    });
    let specs = tools.specs().unwrap();
    let client = setup.connect(Client::builder().experimental_api(true).handler(tools.handler(DefaultHandler))).await;
    let thread = start_thread(&client, ThreadStartParams { dynamic_tools: Some(specs), ..Default::default() }).await;
    let mut turn = client.start_turn(text_turn(&thread, "Weather in Paris?")).await.unwrap();
    assert_eq!(tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap().status, TurnStatus::Completed);
    assert_eq!(seen.recv().await.unwrap(), "Paris/Some(2)");
    let requests = setup.mock.wait_for_requests(2, T).unwrap();
    assert!(requests[0].tool_names().contains(&"lookup_weather".to_owned()));
    let schema = codex_app_client::structured::schema_of::<WeatherArgs>();
    let tool = requests[0].body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "lookup_weather").unwrap().clone();
    // codex passes the schema on (dropping the keywords the model API does not take, such
    // as `format` and `minimum`).
    let parameters = &tool["parameters"];
    assert_eq!(parameters["required"], schema["required"], "{tool}");
    assert_eq!(parameters["properties"]["city"], schema["properties"]["city"], "{tool}");
    assert_eq!(parameters["properties"]["days"]["type"], schema["properties"]["days"]["type"], "{tool}");
    let output = requests[1].function_output("call-1").unwrap().to_string();
    assert!(output.contains("sunny in Paris, 24 C"), "{output}");

    // Arguments that do not fit: the tool is not called, the model gets the reason.
    let mut turn = client.start_turn(text_turn(&thread, "And Oslo?")).await.unwrap();
    tokio::time::timeout(T, turn.wait()).await.unwrap().unwrap();
    let requests = setup.mock.wait_for_requests(4, T).unwrap();
    let output = requests[3].function_output("call-2").unwrap().to_string();
    assert!(output.contains("WeatherArgs") && output.contains("city"), "{output}");
    assert!(seen.try_recv().is_err());
    client.shutdown(Duration::from_secs(5)).await;
}

}
