//! Test support shared by the generator's tests and the changelog's (`codex-app-changelog`):
//! schema bundles written in a few lines. Not for anything else.

use std::collections::BTreeMap;

/// A bundle. Each method is `"<c|s|n|k> <wire> <params>"`: client request, server request,
/// server notification, client notification; params is a definition name, `?Name` for
/// nullable params, or `-` for `params: null`. `defs` is the inside of `definitions`.
pub fn bundle(methods: &[&str], defs: &str) -> String {
    let mut unions: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for m in methods {
        let [dir, wire, params] = m.split(' ').collect::<Vec<_>>()[..] else { panic!("bad method spec {m}") };
        let union = match dir {
            "c" => "ClientRequest",
            "s" => "ServerRequest",
            "n" => "ServerNotification",
            "k" => "ClientNotification",
            _ => panic!("bad direction {dir}"),
        };
        let request = matches!(dir, "c" | "s");
        let (schema, required) = match params {
            "-" => (r#"{"type":"null"}"#.to_owned(), false),
            p if p.starts_with('?') => {
                (format!(r##"{{"anyOf":[{{"$ref":"#/definitions/{}"}},{{"type":"null"}}]}}"##, &p[1..]), false)
            }
            p => (format!(r##"{{"$ref":"#/definitions/{p}"}}"##), true),
        };
        let id = if request { r##""id":{"$ref":"#/definitions/RequestId"},"## } else { "" };
        let mut req = vec![r#""method""#];
        if request {
            req.push(r#""id""#);
        }
        if required {
            req.push(r#""params""#);
        }
        unions.entry(union).or_default().push(format!(
            r#"{{"type":"object","required":[{}],"properties":{{{id}"method":{{"type":"string","enum":["{wire}"]}},"params":{schema}}}}}"#,
            req.join(",")
        ));
    }
    let unions: Vec<String> =
        unions.iter().map(|(u, arms)| format!(r#""{u}":{{"oneOf":[{}]}}"#, arms.join(","))).collect();
    let sep = if defs.trim().is_empty() { "" } else { "," };
    format!(
        r#"{{"definitions":{{"RequestId":{{"anyOf":[{{"type":"string"}},{{"type":"integer"}}]}},{}{sep}{defs}}}}}"#,
        unions.join(",")
    )
}
