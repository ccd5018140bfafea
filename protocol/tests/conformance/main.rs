//! Schema-driven conformance: every definition of the vendored bundles, through instances
//! generated from the schema alone (`instances.rs`: every member, every enum value, every union
//! arm), each valid for the vendored schema (checked by a JSON Schema validator, so a wrong
//! generator cannot pass for a wrong decoder), decoded with the generated type and encoded
//! back to the same JSON value (an optional member given `null` may come back absent: the
//! crate's documented `null` rule).
//!
//! A definition finds its Rust type through the generator's own table
//! (`__for_each_generated_type!`, by the JSON pointer of the schema each type came from); the
//! method unions are read as whole messages, the JSON-RPC envelope definitions by both message
//! types, and a definition repeated in another namespace with the same shape by the type the
//! generator made for both. Coverage figures go to the test's output.

#[path = "../common/mod.rs"]
mod common;
mod instances;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use codex_app_protocol::{ClientMessage, ErrorObject, ServerMessage};
use serde_json::Value;

use instances::{Generator, Instance, Item, Kind};

/// Decodes a JSON text with one generated type and encodes it back.
type RoundTrip = fn(&str) -> Result<Value, String>;

fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(text: &str) -> Result<Value, String> {
    let value: T = serde_json::from_str(text).map_err(|e| format!("decode: {e}"))?;
    let back = serde_json::to_string(&value).map_err(|e| format!("encode: {e}"))?;
    serde_json::from_str(&back).map_err(|e| format!("re-encoding is not JSON: {e}"))
}

struct Table {
    /// Generated type by the JSON pointer of its schema.
    types: BTreeMap<&'static str, RoundTrip>,
    /// Message type by method union name.
    messages: BTreeMap<&'static str, RoundTrip>,
}

macro_rules! table {
    (
        stable { $($stable:literal => $stable_ty:ty,)* }
        experimental { $($experimental:literal => $experimental_ty:ty,)* }
        messages { $($union:literal => $message:ty,)* }
    ) => {
        fn table() -> Table {
            let mut types: BTreeMap<&'static str, RoundTrip> = BTreeMap::new();
            $( types.insert($stable, round_trip::<$stable_ty>); )*
            $(
                #[cfg(feature = "experimental")]
                types.insert($experimental, round_trip::<$experimental_ty>);
            )*
            let mut messages: BTreeMap<&'static str, RoundTrip> = BTreeMap::new();
            $(
                messages.insert($union, |text| {
                    let message = <$message>::from_line(text).map_err(|e| format!("decode: {e}"))?;
                    serde_json::from_str(&message.to_line()).map_err(|e| format!("re-encoding is not JSON: {e}"))
                });
            )*
            Table { types, messages }
        }
    };
}

codex_app_protocol::__for_each_generated_type!(table);

/// The JSON-RPC envelope definitions (`JSONRPCMessage`, `JSONRPCRequest`, ...), which the
/// generator leaves to the hand-written envelope: read by both message types.
fn envelope(text: &str) -> Result<Value, String> {
    let server = ServerMessage::from_line(text).map_err(|e| format!("ServerMessage decode: {e}"))?;
    let client = ClientMessage::from_line(text).map_err(|e| format!("ClientMessage decode: {e}"))?;
    let server: Value = serde_json::from_str(&server.to_line()).map_err(|e| e.to_string())?;
    let client: Value = serde_json::from_str(&client.to_line()).map_err(|e| e.to_string())?;
    if server != client {
        return Err(format!("ServerMessage writes {server}, ClientMessage writes {client}"));
    }
    Ok(server)
}

/// Members of the schema that decoding does not keep, by design, with the reason. An instance
/// that sets one must come back without exactly that member (so the entry has to go when the
/// limit does), and the member does not count as exercised. Members of the root object only
/// (of a definition, or of the definition a root union arm names).
const KNOWN_LIMITS: &[(&str, &str)] = &[(
    "#/definitions/JSONRPCRequest/properties/trace",
    "the envelope keeps `id`, `method`, `params` (and `emittedAtMs` on notifications); other \
     envelope members are skipped, and the drift check reports them (crate docs, \"What decoding keeps\")",
)];

/// Every definition of the bundle: `(pointer, name, schema)`, namespaces flattened.
fn definitions(bundle: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (name, schema) in bundle["definitions"].as_object().expect("definitions") {
        let is_namespace = schema.as_object().is_some_and(|o| o.values().all(Value::is_object))
            && !schema.as_object().unwrap().keys().any(|k| k == "type" || k.ends_with("Of") || k == "$ref" || k == "enum");
        if is_namespace {
            for (inner, schema) in schema.as_object().unwrap() {
                out.push((format!("#/definitions/{name}/{inner}"), inner.clone(), schema));
            }
        } else {
            out.push((format!("#/definitions/{name}"), name.clone(), schema));
        }
    }
    out
}

#[derive(Default)]
struct Report {
    definitions: usize,
    passed_definitions: usize,
    instances: usize,
    failures: Vec<String>,
    exercised: BTreeSet<Item>,
}

fn check_bundle(folder: &str) -> Report {
    let bundle = common::bundle_of(folder);
    let table = table();
    let base_url = format!("file:///vendor-schemas/{folder}/bundle.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource(&base_url, bundle.clone()).expect("the bundle is a schema");
    let mut generator = Generator::new(&bundle);
    let mut report = Report::default();
    let by_last_segment: BTreeMap<&str, RoundTrip> =
        table.types.iter().map(|(pointer, f)| (pointer.rsplit('/').next().unwrap(), *f)).collect();

    for (pointer, name, schema) in definitions(&bundle) {
        report.definitions += 1;
        let decode = table
            .types
            .get(pointer.as_str())
            .or_else(|| table.messages.get(name.as_str()))
            .copied()
            // The envelope, written by hand: its error object, and the messages.
            .or_else(|| (name == "JSONRPCErrorError").then_some(round_trip::<ErrorObject> as RoundTrip))
            .or_else(|| name.starts_with("JSONRPC").then_some(envelope as RoundTrip))
            // The same definition in another namespace: the generator made one type of both.
            .or_else(|| by_last_segment.get(name.as_str()).copied());
        let Some(decode) = decode else {
            report.failures.push(format!("{pointer}: no generated type"));
            continue;
        };
        let instances = generator.instances(schema, &pointer);
        if instances.is_empty() {
            report.failures.push(format!("{pointer}: the generator built no instance"));
            continue;
        }
        let index = compiler.compile(&format!("{base_url}#{}", &pointer[1..]), &mut schemas).expect("compiles");
        let mut ok = true;
        for instance in &instances {
            report.instances += 1;
            let limits: Vec<&str> = KNOWN_LIMITS
                .iter()
                .filter(|(member, _)| {
                    let item = (Kind::Member, member.to_string());
                    instance.covers.contains(&item) || instance.borrowed.contains(&item)
                })
                .filter_map(|(member, _)| member.rsplit_once("/properties/").map(|(_, name)| name))
                .collect();
            match check_instance(instance, decode, &limits, |v| schemas.validate(v, index).map_err(|e| format!("{e}"))) {
                Ok(()) => report.exercised.extend(
                    instance.covers.iter().filter(|item| !KNOWN_LIMITS.iter().any(|(m, _)| item.1 == *m)).cloned(),
                ),
                Err(e) => {
                    ok = false;
                    report.failures.push(format!("{pointer}: {e}\n    instance: {}", instance.value));
                }
            }
        }
        report.passed_definitions += usize::from(ok);
    }

    let count = |kind: Kind, set: &BTreeSet<Item>| set.iter().filter(|(k, _)| *k == kind).count();
    let mut out = std::io::stderr().lock();
    let _ = writeln!(
        out,
        "conformance {folder}: {} instances; types {}/{}, members {}/{}, enum values {}/{}, union arms {}/{} exercised",
        report.instances,
        report.passed_definitions,
        report.definitions,
        count(Kind::Member, &report.exercised),
        count(Kind::Member, &generator.items),
        count(Kind::Value, &report.exercised),
        count(Kind::Value, &generator.items),
        count(Kind::Arm, &report.exercised),
        count(Kind::Arm, &generator.items),
    );
    for (member, reason) in KNOWN_LIMITS.iter().filter(|(m, _)| generator.items.contains(&(Kind::Member, m.to_string()))) {
        let _ = writeln!(out, "  not kept, by design: {member}: {reason}");
    }
    let missed: Vec<_> = generator
        .items
        .difference(&report.exercised)
        .filter(|item| !KNOWN_LIMITS.iter().any(|(m, _)| item.1 == *m))
        .collect();
    if !missed.is_empty() && report.failures.is_empty() {
        report.failures.push(format!("items no passing instance covers: {missed:?}"));
    }
    report
}

/// Valid for the schema, then decoded and encoded back to the same value, less the root
/// members of `limits` (which must be gone).
fn check_instance(
    instance: &Instance,
    decode: RoundTrip,
    limits: &[&str],
    validate: impl Fn(&Value) -> Result<(), String>,
) -> Result<(), String> {
    validate(&instance.value).map_err(|e| format!("generated instance is not valid for the schema (a generator bug): {e}"))?;
    let back = decode(&instance.value.to_string())?;
    let less_limits = |v: &Value| {
        let mut v = v.clone();
        for member in limits {
            v.as_object_mut().map(|o| o.remove(*member));
        }
        v
    };
    let (expected, expected_without_null) = (less_limits(&instance.value), instance.without_null.as_ref().map(less_limits));
    if back == expected || Some(&back) == expected_without_null.as_ref() {
        Ok(())
    } else {
        Err(format!("re-encoded differently: {back}"))
    }
}

fn assert_conforms(folder: &str) {
    let report = check_bundle(folder);
    if !report.failures.is_empty() {
        let shown: Vec<_> = report.failures.iter().take(25).collect();
        panic!("{} failures in the {folder} bundle; the first ones:\n{}", report.failures.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
    }
}

#[test]
fn every_type_of_the_stable_bundle_round_trips_its_schema_instances() {
    assert_conforms("stable");
}

#[cfg(feature = "experimental")]
#[test]
fn every_type_of_the_experimental_bundle_round_trips_its_schema_instances() {
    // Releases before the experimental API (0.60.1) print no experimental bundle.
    let path = format!("{}/../vendor-schemas/experimental/codex_app_server_protocol.schemas.json", env!("CARGO_MANIFEST_DIR"));
    if !std::path::Path::new(&path).exists() {
        let _ = writeln!(std::io::stderr(), "conformance experimental: SKIPPED, no experimental bundle vendored ({path})");
        return;
    }
    assert_conforms("experimental");
}
