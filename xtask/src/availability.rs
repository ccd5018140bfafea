//! `cargo xtask availability [--json] [NAME...]`: when each method, member, enum value and
//! union arm of the supported range came and, where it went, the last release that had it:
//! the vendored schema with `vendor-schemas/history.json` applied, as regen generates it.

use std::collections::BTreeMap;

use codex_app_codegen::history::{keys, version_cmp, Availability, ItemKind};
use codex_app_codegen::ir::{Direction, Ir};

#[derive(clap::Args)]
pub struct Args {
    /// Print `{"methods": {...}, "members": {...}}` (wire names; `since`, `until`).
    #[arg(long)]
    json: bool,
    /// Only these methods (`thread/search`) and members (`ThreadListParams.includedThreadIds`,
    /// `Type::value` for an enum value or union arm); a type name lists its members.
    names: Vec<String>,
}

/// One row: what, which kind, when.
#[derive(Debug, Clone)]
pub struct Row {
    pub kind: ItemKind,
    pub name: String,
    /// Since, until and, for a member the newest release requires, since when every release
    /// sends it (the history's facts for the range).
    pub availability: Availability,
    pub experimental: bool,
}

/// Every method, member, enum value and union arm of the range's IR, in that order.
pub fn rows(ir: &Ir) -> Vec<Row> {
    let floor = ir.floor.clone().unwrap_or_default();
    codex_app_codegen::history::listing(ir)
        .into_iter()
        .map(|item| {
            let availability = ir.availability.get(&item.key).cloned().unwrap_or_else(|| Availability::since(&floor));
            // A method's row is named by its wire name alone.
            let name = match item.kind {
                ItemKind::Method(_) => item.wire,
                _ => item.key.to_string(),
            };
            Row { kind: item.kind, name, availability, experimental: item.experimental }
        })
        .collect()
}

/// The `--json` shape: one entry per method (both directions) and per member, each
/// `{"since": .., "until": ..}` (`until` is `null` for what the newest release has).
pub fn json(rows: &[Row]) -> serde_json::Value {
    let span = |a: &Availability| serde_json::json!({ "since": a.since, "until": a.until });
    let mut methods: BTreeMap<&str, Availability> = BTreeMap::new();
    let mut members = BTreeMap::new();
    for r in rows {
        match r.kind {
            ItemKind::Member => {
                members.insert(r.name.as_str(), span(&r.availability));
            }
            ItemKind::Value | ItemKind::Arm => {}
            ItemKind::Method(_) => {
                // A method of two directions under one name: the wider span (the earlier
                // since; no until when either direction is still there, else the later one).
                let a = &r.availability;
                let e = methods.entry(r.name.as_str()).or_insert_with(|| a.clone());
                if version_cmp(&a.since, &e.since).is_lt() {
                    e.since = a.since.clone();
                }
                e.until = match (&e.until, &a.until) {
                    (Some(x), Some(y)) => Some(if version_cmp(y, x).is_gt() { y } else { x }.clone()),
                    _ => None,
                };
            }
        }
    }
    let methods: BTreeMap<&str, serde_json::Value> = methods.iter().map(|(k, a)| (*k, span(a))).collect();
    serde_json::json!({ "methods": methods, "members": members })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let root = crate::root();
    let (ir, history) = crate::regen::range_ir(&root)?;
    let all = rows(&ir);
    let wanted = |r: &Row| {
        args.names.is_empty()
            || args.names.iter().any(|n| {
                r.name == *n
                    || r.name
                        .strip_prefix(n.as_str())
                        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("::"))
            })
    };
    let picked: Vec<Row> = all.into_iter().filter(wanted).collect();
    if picked.is_empty() {
        anyhow::bail!("no method, member, value or arm named {}", args.names.join(", "));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json(&picked))?);
        return Ok(());
    }
    println!(
        "supported range: codex {} to {} ({} releases); `since {}` means in every release of the range",
        ir.floor.as_deref().unwrap_or_default(),
        history.newest(),
        ir.releases.len(),
        ir.floor.as_deref().unwrap_or_default(),
    );
    let width = picked.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in &picked {
        let a = &r.availability;
        let mut line = format!("{:<20} {:<width$}  since {}", r.kind, r.name, a.since);
        if let Some(u) = &a.until {
            line.push_str(&format!(", until {u}"));
        }
        if let Some(a) = &a.always_since {
            line.push_str(&format!(", always sent since {a}"));
        }
        if r.experimental {
            line.push_str(" (experimental)");
        }
        println!("{line}");
    }
    Ok(())
}

/// Where README's table of releases goes: between these lines, written by regen.
pub const README_START: &str = "<!-- releases: written by `cargo xtask regen` from vendor-schemas/history.json -->";
pub const README_END: &str = "<!-- releases: end -->";

/// README's table of the supported range: per release, the methods it added and removed.
pub fn release_table(ir: &Ir, history: &codex_app_codegen::history::History) -> String {
    let floor = ir.floor.clone().unwrap_or_default();
    let mut added: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut removed: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let releases: Vec<&str> = ir.releases.iter().map(String::as_str).collect();
    for direction in Direction::ALL {
        for m in ir.methods(direction) {
            let Some(a) = ir.availability.get(&keys::method(direction, &m.wire)) else { continue };
            let name = if m.experimental { format!("`{}`*", m.wire) } else { format!("`{}`", m.wire) };
            if a.since != floor {
                added.entry(a.since.as_str()).or_default().push(name.clone());
            }
            if let Some(until) = &a.until {
                // Removed in the release after the last one that had it.
                if let Some(next) = releases.iter().position(|r| r == until).and_then(|i| releases.get(i + 1)) {
                    removed.entry(next).or_default().push(name);
                }
            }
        }
    }
    let mut out = String::new();
    out.push_str(README_START);
    out.push_str("\n\n| codex | methods added | methods removed |\n|---|---|---|\n");
    for entry in &history.releases {
        if version_cmp(&entry.version, &floor).is_lt() {
            continue;
        }
        let v = entry.version.as_str();
        let cell = |m: &BTreeMap<&str, Vec<String>>| m.get(v).map(|l| l.join(", ")).unwrap_or_default();
        match &entry.skipped {
            Some(why) => out.push_str(&format!("| {v} | not covered: {why} | |\n")),
            None if v == floor => out.push_str(&format!("| {v} | (the floor: {} methods) | |\n", count(ir))),
            None => out.push_str(&format!("| {v} | {} | {} |\n", cell(&added), cell(&removed))),
        }
    }
    out.push_str("\n`*`: experimental (needs the `experimental` feature and the opt-in).\n\n");
    out.push_str(README_END);
    out
}

fn count(ir: &Ir) -> usize {
    let floor = ir.floor.clone().unwrap_or_default();
    Direction::ALL
        .into_iter()
        .flat_map(|d| ir.methods(d).iter().map(move |m| (d, m)))
        .filter(|(d, m)| ir.availability.get(&keys::method(*d, &m.wire)).is_none_or(|a| a.since == floor))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: ItemKind, name: &str, since: &str, until: Option<&str>) -> Row {
        let availability = Availability { until: until.map(str::to_owned), ..Availability::since(since) };
        Row { kind, name: name.to_owned(), availability, experimental: false }
    }

    #[test]
    fn a_method_of_two_directions_gets_the_wider_span_and_members_their_own() {
        let rows = [
            row(ItemKind::Method(Direction::ClientRequest), "x/y", "0.130.0", Some("0.140.0")),
            row(ItemKind::Method(Direction::ServerNotification), "x/y", "0.125.0", Some("0.135.0")),
            row(ItemKind::Method(Direction::ClientRequest), "gone/later", "0.120.0", Some("0.150.0")),
            row(ItemKind::Method(Direction::ServerRequest), "gone/later", "0.121.0", None),
            row(ItemKind::Member, "T.m", "0.122.0", None),
            row(ItemKind::Value, "E::v", "0.123.0", None),
        ];
        let json = json(&rows);
        assert_eq!(json["methods"]["x/y"], serde_json::json!({ "since": "0.125.0", "until": "0.140.0" }));
        assert_eq!(json["methods"]["gone/later"], serde_json::json!({ "since": "0.120.0", "until": null }));
        assert_eq!(json["members"], serde_json::json!({ "T.m": { "since": "0.122.0", "until": null } }));
    }
}
