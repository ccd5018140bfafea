//! The report as Markdown (`vendor-schemas/CHANGES.md`, a PR description).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::report::*;
use codex_app_codegen::ir::Direction;

impl Report {
    /// The report for a changelog or a PR description: headline counts, then breaking changes,
    /// compatible changes and Rust-API-only changes, each grouped by direction and method.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let (old, new) = (&self.old_version, &self.new_version);
        let _ = writeln!(out, "# Protocol changes: codex {old} → {new}\n");
        if self.is_empty() {
            out.push_str("No protocol changes: both schemas describe the same messages.\n");
            return out;
        }
        out.push_str(&self.headline());
        out.push('\n');
        out.push_str(LEGEND);
        let missing: Vec<&str> = [(self.old_has_experimental, old), (self.new_has_experimental, new)]
            .into_iter()
            .filter(|(has, _)| !has)
            .map(|(_, v)| v.as_str())
            .collect();
        if !missing.is_empty() {
            let _ = writeln!(
                out,
                "\nCodex {} printed no experimental schema: all of it counts as stable.",
                missing.join(" and ")
            );
        }
        for (severity, title) in [
            (Severity::Breaking, "Breaking changes"),
            (Severity::Compatible, "Compatible changes"),
            (Severity::RustApi, "Rust API only (same on the wire)"),
        ] {
            let changes: Vec<&Change> = self.changes.iter().filter(|c| c.severity == severity).collect();
            if changes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n## {title} ({})", changes.len());
            self.section(&mut out, &changes);
        }
        out
    }

    /// The counts: a sentence and a table.
    pub fn headline(&self) -> String {
        let c = &self.counts;
        let has_experimental = self.old_has_experimental || self.new_has_experimental;
        let split = |n: usize, exp: usize| match (n - exp, exp) {
            (0, 0) => String::new(),
            (_, 0) if has_experimental => " (all stable)".to_owned(),
            (_, 0) => String::new(),
            (0, _) => " (all experimental)".to_owned(),
            (stable, exp) => format!(" ({stable} stable, {exp} experimental)"),
        };
        let mut out = format!(
            "**{} breaking**{}, {} compatible{}",
            c.breaking,
            split(c.breaking, c.breaking_experimental),
            c.compatible,
            split(c.compatible, c.compatible_experimental),
        );
        if c.rust_api > 0 {
            let _ = write!(out, ", {} Rust API only (same on the wire)", c.rust_api);
        }
        out.push_str(".\n\n");
        out.push_str("| | added | removed | renamed | to stable | to experimental | changed |\n");
        out.push_str("|---|--:|--:|--:|--:|--:|--:|\n");
        let _ = writeln!(
            out,
            "| methods | {} | {} | – | {} | {} | {} |",
            c.methods_added, c.methods_removed, c.methods_to_stable, c.methods_to_experimental, c.methods_changed
        );
        let _ = writeln!(
            out,
            "| types | {} | {} | {} | – | – | {} |",
            c.types_added, c.types_removed, c.types_renamed, c.types_changed
        );
        out
    }

    fn section(&self, out: &mut String, changes: &[&Change]) {
        let mut groups: BTreeMap<(u8, &str), Vec<&Change>> = BTreeMap::new();
        for c in changes {
            let key = match &c.filed_under {
                FiledUnder::Method { direction, method, .. } => (direction_rank(*direction), method.as_str()),
                FiledUnder::Envelope => (direction_rank(Direction::ServerNotification), ""),
                FiledUnder::Shared { name, .. } => (4, name.as_str()),
                FiledUnder::Unused { name, .. } => (5, name.as_str()),
            };
            groups.entry(key).or_default().push(c);
        }
        // Types of their own whose only change is that they are new: one list, not a heading each.
        let only_new = |g: &[&Change]| g.iter().all(|c| matches!(c.kind, Kind::TypeAdded));
        let mut current_rank = None;
        for rank in 0..RANK_TITLES.len() as u8 {
            let in_rank: Vec<(&str, &Vec<&Change>)> =
                groups.iter().filter(|((r, _), _)| *r == rank).map(|((_, name), g)| (*name, g)).collect();
            if in_rank.is_empty() {
                continue;
            }
            if current_rank != Some(rank) {
                current_rank = Some(rank);
                let _ = writeln!(out, "\n### {}", RANK_TITLES[usize::from(rank)]);
            }
            if rank >= 4 {
                let new_types: Vec<&(&str, &Vec<&Change>)> = in_rank.iter().filter(|(_, g)| only_new(g)).collect();
                if !new_types.is_empty() {
                    out.push_str("\n#### New types\n\n");
                    for (name, g) in new_types {
                        let _ = writeln!(
                            out,
                            "- `{name}`{}{}",
                            self.usage_note(name),
                            if g[0].experimental { EXP } else { "" }
                        );
                    }
                }
            }
            for (name, group) in in_rank.iter().filter(|(_, g)| rank < 4 || !only_new(g)) {
                let filed_experimental = match &group[0].filed_under {
                    FiledUnder::Method { experimental, .. }
                    | FiledUnder::Shared { experimental, .. }
                    | FiledUnder::Unused { experimental, .. } => *experimental,
                    FiledUnder::Envelope => false,
                };
                if group[0].filed_under == FiledUnder::Envelope {
                    out.push_str("\n#### Every notification (members next to `method` and `params`)\n\n");
                } else {
                    let note = if rank < 4 { String::new() } else { self.usage_note(name) };
                    let _ = writeln!(out, "\n#### `{name}`{note}{}\n", if filed_experimental { EXP } else { "" });
                }
                render_group(out, group, !filed_experimental);
            }
        }
    }

    /// ` — received; used by `a`, `b`` (or `by 12 methods`) for a type's heading.
    fn usage_note(&self, name: &str) -> String {
        let Some(u) = self.types.get(name) else { return String::new() };
        let role = match (u.sends, u.receives) {
            (true, true) => "sent and received",
            (true, false) => "sent",
            (false, true) => "received",
            (false, false) => return " — no method uses it".to_owned(),
        };
        match u.methods.len() {
            0 => format!(" — {role}"),
            n if n <= 3 => {
                let names: Vec<String> = u.methods.iter().map(|m| format!("`{m}`")).collect();
                format!(" — {role}; used by {}", names.join(", "))
            }
            n => format!(" — {role}; used by {n} methods"),
        }
    }
}

const EXP: &str = " *(experimental)*";

const RANK_TITLES: [&str; 6] = [
    "Client requests",
    "Server requests",
    "Server notifications",
    "Client notifications",
    "Types used by several methods",
    "Types no method uses",
];

fn direction_rank(d: Direction) -> u8 {
    match d {
        Direction::ClientRequest => 0,
        Direction::ServerRequest => 1,
        Direction::ServerNotification => 2,
        Direction::ClientNotification => 3,
    }
}

const LEGEND: &str = "\
How to read this:

- The client **sends** request params, client notifications and its answers to server requests; \
it **receives** responses, server requests and server notifications.
- *Breaking*: a client that upgrades its types has to change code or behaviour. For what it \
receives, that includes talking to an older codex, whose messages lack members the new types require.
- New enum values, union variants and notifications are compatible: until handled they arrive as \
the type's `Unrecognized` variant, or as an unknown notification.
- Not repeated below: every added field breaks Rust struct literals that list all fields, and \
every added variant breaks `match`es without a `_` arm.
- Paths are `Type.member`: the type by its schema name, the member by its wire name; `::value` \
is a union variant, `[]` an array item, `{}` a map value. *(experimental)*: only clients with \
the `experimentalApi` opt-in see it.
";

/// The bullets of one heading: method-level lines first, then by path; values added to or
/// removed from one enum share a line, and so do the types added or removed.
fn render_group(out: &mut String, group: &[&Change], tag_experimental: bool) {
    let exp = |c: &Change| if tag_experimental && c.experimental { EXP } else { "" };
    // Types that moved along with their method are named on the method's line.
    let is_move = |k: &Kind| matches!(k, Kind::ToStable | Kind::ToExperimental);
    let method_move = group.iter().find(|c| is_move(&c.kind) && c.path.is_method());
    let moved_along = |c: &Change| method_move.is_some_and(|m| m.kind == c.kind && c.path.is_whole_type());
    let mut i = 0;
    while i < group.len() {
        let c = group[i];
        // A run of values added (or removed) at one path, with the same experimental mark.
        let run = group[i..]
            .iter()
            .take_while(|d| d.path == c.path && d.experimental == c.experimental && same_list_kind(&d.kind, &c.kind))
            .count();
        if run > 1 {
            let values: Vec<String> = group[i..i + run]
                .iter()
                .map(|d| match &d.kind {
                    Kind::ValueAdded { value } | Kind::ValueRemoved { value } => format!("`\"{value}\"`"),
                    _ => unreachable!("same_list_kind"),
                })
                .collect();
            let what = if matches!(c.kind, Kind::ValueAdded { .. }) { "new values" } else { "values removed:" };
            let _ = writeln!(out, "- `{}`: {what} {}{}{}", c.path, values.join(", "), effects(c), exp(c));
            i += run;
            continue;
        }
        i += 1;
        if matches!(c.kind, Kind::TypeAdded | Kind::TypeRemoved) || moved_along(c) {
            continue; // listed at the end, or on the method's line
        }
        let mut text = describe(c);
        if method_move.is_some_and(|m| std::ptr::eq(*m, c)) {
            let types: Vec<String> = group.iter().filter(|d| moved_along(d)).map(|d| format!("`{}`", d.path)).collect();
            if !types.is_empty() {
                let _ = write!(text, ", with its type{} {}", if types.len() == 1 { "" } else { "s" }, types.join(", "));
            }
        }
        let _ = writeln!(out, "- {text}{}{}", effects(c), exp(c));
    }
    // A new method's params and response types are named on its own line.
    let named: Vec<&String> = group
        .iter()
        .filter_map(|c| match &c.kind {
            Kind::MethodAdded { params, response } => Some(params.iter().chain(response)),
            _ => None,
        })
        .flatten()
        .collect();
    for (kind, label) in [(Kind::TypeAdded, "new type"), (Kind::TypeRemoved, "removed type")] {
        let names: Vec<String> = group
            .iter()
            .filter(|c| c.kind == kind && !c.path.rust_type().is_some_and(|t| named.iter().any(|n| *n == t)))
            .map(|c| format!("`{}`{}", c.path, exp(c)))
            .collect();
        if !names.is_empty() {
            let _ = writeln!(out, "- {label}{}: {}", if names.len() == 1 { "" } else { "s" }, names.join(", "));
        }
    }
}

fn same_list_kind(a: &Kind, b: &Kind) -> bool {
    matches!(
        (a, b),
        (Kind::ValueAdded { .. }, Kind::ValueAdded { .. }) | (Kind::ValueRemoved { .. }, Kind::ValueRemoved { .. })
    )
}

impl Change {
    /// The change as one line of plain text, as the changelog lists it: what changed and, for
    /// a breaking change, whom it breaks (`field \`Project.position\` removed (was \`i64\`) — breaks
    /// receivers (...)`).
    pub fn sentence(&self) -> String {
        let experimental = if self.experimental { " (experimental)" } else { "" };
        format!("{}{}{experimental}", describe(self), effects(self)).replace("**", "")
    }
}

/// What changed, as a sentence fragment.
fn describe(c: &Change) -> String {
    let p = &c.path;
    let method_level = p.is_method();
    match &c.kind {
        Kind::MethodAdded { params, response } => {
            let params = params.as_ref().map_or_else(|| "no params".to_owned(), |t| format!("params `{t}`"));
            match response {
                Some(r) => format!("new method: {params}, response `{r}`"),
                None => format!("new method: {params}"),
            }
        }
        Kind::MethodRemoved => "method removed".to_owned(),
        Kind::ToStable if method_level => "stable now".to_owned(),
        Kind::ToExperimental if method_level => "experimental now".to_owned(),
        Kind::ToStable => format!("`{p}` is stable now"),
        Kind::ToExperimental => format!("`{p}` is experimental now"),
        Kind::ParamsChanged { old, new } => format!("params: `{old}` → `{new}`"),
        Kind::TypeAdded => format!("new type `{p}`"),
        Kind::TypeRemoved => format!("type `{p}` removed"),
        // A definition renamed (not another type at a place, such as an alias's target).
        Kind::Renamed { old, new, .. } if p.is_whole_type() && p.rust_type() == Some(new) => {
            format!("type `{old}` is now `{new}` (same shape)")
        }
        Kind::Renamed { old, new, alias_of } => {
            let note = match alias_of {
                Some(t) => format!(" (both are `{t}`)"),
                None => " (same shape)".to_owned(),
            };
            format!("`{p}`: `{old}` → `{new}`{note}")
        }
        Kind::ShapeChanged { old, new } => format!("`{p}` changed from {} to {}", article(old), article(new)),
        Kind::TypeChanged { old, new } => format!("`{p}`: `{old}` → `{new}`"),
        Kind::FieldAdded { ty, presence } => format!("new {} field `{p}`: `{ty}`", short_presence(presence)),
        Kind::FieldRemoved { ty, .. } => format!("field `{p}` removed (was `{ty}`)"),
        Kind::FieldRenamed { new, ty, .. } => format!("field `{p}` looks renamed to `{new}` (`{ty}`)"),
        Kind::PresenceChanged { old, new, old_ty, new_ty } => {
            format!("`{p}` is {new} now (was {old}): `{old_ty}` → `{new_ty}`")
        }
        Kind::ValueAdded { value } => format!("`{p}`: new value `\"{value}\"`"),
        Kind::ValueRemoved { value } => format!("`{p}`: value `\"{value}\"` removed"),
        Kind::ValueRenamed { old, new } => format!("`{p}`: `\"{old}\"` is spelled `\"{new}\"` now"),
        Kind::VariantAdded { value, payload } => format!("`{p}`: new variant `{value}`: `{payload}`"),
        Kind::VariantRemoved { value } => format!("`{p}`: variant `{value}` removed"),
        Kind::TagChanged { old, new } => format!("`{p}`: tag member `{old}` → `{new}`"),
        Kind::ExtraChanged { old, new } => match (old, new) {
            (None, Some(t)) => format!("`{p}`: undeclared members are kept now (`{t}`)"),
            (Some(t), None) => format!("`{p}`: undeclared members are not kept any more (was `{t}`)"),
            _ => format!("`{p}`: undeclared members changed"),
        },
    }
}

/// ` — breaks **senders** (why)` for a breaking change; the hint, if any, for a compatible one.
fn effects(c: &Change) -> String {
    let breaking: Vec<String> = [("senders", &c.sends), ("receivers", &c.receives)]
        .into_iter()
        .filter_map(|(who, e)| e.as_ref().filter(|e| e.breaking).map(|e| (who, e)))
        .map(|(who, e)| if e.why.is_empty() { format!("**{who}**") } else { format!("**{who}** ({})", e.why) })
        .collect();
    if !breaking.is_empty() {
        return format!(" — breaks {}", breaking.join(" and "));
    }
    // The legend covers new values and variants, and Rust API changes say what they are.
    if c.severity != Severity::Compatible || matches!(c.kind, Kind::ValueAdded { .. } | Kind::VariantAdded { .. }) {
        return String::new();
    }
    let mut hints: Vec<&str> =
        [&c.sends, &c.receives].into_iter().flatten().map(|e| e.why.as_str()).filter(|w| !w.is_empty()).collect();
    hints.dedup();
    if hints.is_empty() {
        String::new()
    } else {
        format!(" — {}", hints.join("; "))
    }
}

/// `a struct`, `an alias`.
fn article(kind: &str) -> String {
    let an = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if an { "an" } else { "a" })
}

fn short_presence(p: &str) -> &str {
    match p {
        "required, nullable" => "required (nullable)",
        "optional, null distinct from absent" => "optional",
        other => other,
    }
}
