//! `cargo xtask availability [--json] [NAME...]`: when each method, member, enum value and
//! union arm of the supported range came and, where it went, the last release that had it:
//! the vendored schema with `vendor-schemas/history.json` applied, as regen generates it.

use std::collections::BTreeMap;

use codex_app_codegen::history::{keys, Availability};
use codex_app_codegen::ir::{Direction, Ir};
use serde::Serialize;

#[derive(clap::Args)]
pub struct Args {
    /// Print `{"methods": {...}, "members": {...}}` (wire names; `since`, `until`).
    #[arg(long)]
    json: bool,
    /// Only these methods (`thread/search`) and members (`ThreadListParams.includedThreadIds`,
    /// `Type::value` for an enum value or union arm); a type name lists its members.
    names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub since: String,
    pub until: Option<String>,
}

/// One row: what, which kind, when.
#[derive(Debug, Clone)]
pub struct Row {
    pub kind: &'static str,
    pub name: String,
    pub span: Span,
    pub experimental: bool,
    /// A member the newest release requires: since when every release sends it.
    pub always_since: Option<String>,
}

/// Every method, member, enum value and union arm of the range's IR, in that order.
pub fn rows(ir: &Ir) -> Vec<Row> {
    let floor = ir.floor.clone().unwrap_or_default();
    let get = |key: &str| -> (Span, Option<String>) {
        match ir.availability.get(key) {
            Some(Availability { since, until, always_since, .. }) => {
                (Span { since: since.clone(), until: until.clone() }, always_since.clone())
            }
            None => (Span { since: floor.clone(), until: None }, None),
        }
    };
    codex_app_codegen::history::listing(ir)
        .into_iter()
        .map(|item| {
            let (span, always) = get(&item.key);
            // A method's row is named by its wire name alone.
            let method = item.kind.ends_with("request") || item.kind.ends_with("notification");
            let name = if method { item.wire } else { item.key };
            Row { kind: item.kind, name, span, experimental: item.experimental, always_since: always }
        })
        .collect()
}

/// The `--json` shape: one entry per method (both directions) and per member.
pub fn json(rows: &[Row]) -> serde_json::Value {
    let mut methods = BTreeMap::new();
    let mut members = BTreeMap::new();
    for r in rows {
        match r.kind {
            "member" => {
                members.insert(r.name.clone(), r.span.clone());
            }
            "value" | "arm" => {}
            _ => {
                // A method of two directions under one name: the wider span.
                let e = methods.entry(r.name.clone()).or_insert_with(|| r.span.clone());
                if codex_app_codegen::history::version_cmp(&r.span.since, &e.since).is_lt() {
                    e.since = r.span.since.clone();
                }
            }
        }
    }
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
        let mut line = format!("{:<20} {:<width$}  since {}", r.kind, r.name, r.span.since);
        if let Some(u) = &r.span.until {
            line.push_str(&format!(", until {u}"));
        }
        if let Some(a) = &r.always_since {
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
        if codex_app_codegen::history::version_cmp(&entry.version, &floor).is_lt() {
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
