//! Doc comments from schema descriptions.
//!
//! Descriptions are Markdown written for TypeScript and JSON Schema readers. Rustdoc would
//! read `[UNSTABLE]` as an intra-doc link, `<foo>` as HTML, bare URLs as lint errors and
//! indented lines as doctests, so each is neutralised here; nothing else is changed.

use proc_macro2::TokenStream;
use quote::quote;

/// The note every experimental item's docs carry.
pub const EXPERIMENTAL_NOTE: &str = "**Experimental**: the server rejects this unless `initialize` sent \
`capabilities.experimentalApi: true`. Needs the `experimental` feature.";

/// `#[doc = ...]` attributes for a description, plus the experimental note when marked.
pub fn doc_attrs(doc: Option<&str>, experimental: bool) -> TokenStream {
    let lines = doc_lines(doc, experimental).into_iter().map(|l| if l.is_empty() { l } else { format!(" {l}") });
    quote! { #( #[doc = #lines] )* }
}

/// The lines of a doc comment for a description, plus the experimental note when marked.
/// An upstream section heading at its start is left out ([`without_heading`]). An
/// `@deprecated` note stays (it is also the note of the member's `#[deprecated]`).
pub fn doc_lines(doc: Option<&str>, experimental: bool) -> Vec<String> {
    let mut lines = doc.map(|d| sanitize(without_heading(d))).unwrap_or_default();
    if experimental {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(EXPERIMENTAL_NOTE.to_owned());
    }
    lines
}

/// A doc comment as source text, each line `///` and indented by `indent`.
pub fn doc_comment(lines: &[String], indent: &str) -> String {
    lines.iter().map(|l| if l.is_empty() { format!("{indent}///\n") } else { format!("{indent}/// {l}\n") }).collect()
}

/// The gate of every experimental item, member, value, arm and method row.
pub const EXPERIMENTAL_GATE: &str = "#[cfg(feature = \"experimental\")]";

/// The `#[cfg(feature = "experimental")]` gate, when marked.
pub fn gate(experimental: bool) -> TokenStream {
    if experimental {
        quote! { #[cfg(feature = "experimental")] }
    } else {
        TokenStream::new()
    }
}

/// The description without a section heading of the upstream source that leaked into it.
///
/// The schema's descriptions come from doc comments, and a comment that heads a group of
/// items in the upstream source (`// NEW APIs`, `// DEPRECATED APIs below`) ends up in the
/// description of the first item after it, run together with its first sentence: "NEW APIs
/// Sent when approval is requested ...", or the whole description ("NEW NOTIFICATIONS").
/// Such a heading is recognised by its shape, not by its words: at least two leading
/// all-capital words (a plural `s` allowed, `APIs`), then at most one lower-case word
/// (`below`), then either the end of the text or a capitalised word that starts the
/// sentence. Descriptions that merely start with an acronym ("URL of ...", "EXPERIMENTAL -
/// app metadata ...") do not have that shape.
pub fn without_heading(doc: &str) -> &str {
    let text = doc.trim_start();
    let is_caps = |w: &str| {
        let w = w.strip_suffix('s').filter(|r| r.len() >= 2).unwrap_or(w);
        w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase())
    };
    let is_lower = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase());
    let is_sentence_start = |w: &str| {
        let mut chars = w.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.clone().next().is_some_and(|c| c.is_ascii_lowercase())
    };
    let first_line = text.lines().next().unwrap_or_default();
    let words: Vec<&str> = first_line.split(' ').collect();
    let caps = words.iter().take_while(|w| is_caps(w)).count();
    if caps < 2 {
        return doc;
    }
    let mut heading = caps;
    if words.get(heading).is_some_and(|w| is_lower(w)) {
        heading += 1;
    }
    match words.get(heading) {
        None => text[first_line.len()..].trim_start(),
        Some(next) if is_sentence_start(next) => {
            let skip: usize = words[..heading].iter().map(|w| w.len() + 1).sum();
            &text[skip..]
        }
        Some(_) => doc,
    }
}

/// The `@deprecated` note of a description: the text after the marker, to the end of its
/// paragraph.
pub fn deprecation(doc: Option<&str>) -> Option<String> {
    let doc = doc?;
    let at = doc.find("@deprecated")?;
    let rest = &doc[at + "@deprecated".len()..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    let note = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if note.is_empty() { "deprecated upstream".to_owned() } else { note })
}

pub fn sanitize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for raw in text.trim().lines() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            // Fenced blocks in descriptions are never Rust: mark them as text.
            out.push(if in_fence { "```".to_owned() } else { "```text".to_owned() });
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            out.push(line.to_owned());
        } else {
            // Leading indentation would make an indented code block (a doctest).
            out.push(escape_inline(trimmed));
        }
    }
    if in_fence {
        out.push("```".to_owned());
    }
    out
}

/// Escapes link brackets and HTML outside code spans and wraps bare URLs in `<>`.
fn escape_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
            rest = &rest[1..];
            continue;
        }
        if !in_code {
            if rest.starts_with("https://") || rest.starts_with("http://") {
                let end =
                    rest.find(|c: char| c.is_whitespace() || c == ')' || c == '>' || c == '`').unwrap_or(rest.len());
                let url = rest[..end].trim_end_matches(['.', ',', ';', ':']);
                out.push('<');
                out.push_str(url);
                out.push('>');
                rest = &rest[url.len()..];
                continue;
            }
            if matches!(c, '[' | ']' | '<' | '>' | '*' | '_') && !(c == '*' && rest.starts_with("**")) && c != '_' {
                out.push('\\');
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if in_code {
        // An unclosed code span: close it so the next line is not swallowed.
        out.push('`');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaked_section_headings_are_left_out() {
        assert_eq!(without_heading("NEW APIs"), "");
        assert_eq!(without_heading("NEW NOTIFICATIONS"), "");
        assert_eq!(without_heading("NEW APIs Sent when approval is requested."), "Sent when approval is requested.");
        assert_eq!(without_heading("DEPRECATED APIs below Request to approve a patch."), "Request to approve a patch.");
        assert_eq!(without_heading("NEW APIs\n\nStarts a thread."), "Starts a thread.");
        // Not headings: one acronym, punctuation, or no sentence after the words.
        assert_eq!(without_heading("URL of the thread"), "URL of the thread");
        assert_eq!(without_heading("EXPERIMENTAL - app metadata."), "EXPERIMENTAL - app metadata.");
        assert_eq!(without_heading("MCP OAuth login"), "MCP OAuth login");
        assert_eq!(without_heading("JSON RPC error code"), "JSON RPC error code");
    }

    #[test]
    fn deprecation_notes() {
        assert_eq!(
            deprecation(Some("@deprecated Use `isBlocking` instead.")).as_deref(),
            Some("Use `isBlocking` instead.")
        );
        assert_eq!(deprecation(Some("A flag.\n\n@deprecated Ignored.\n\nMore.")).as_deref(), Some("Ignored."));
        assert_eq!(deprecation(Some("A flag.")), None);
    }

    #[test]
    fn neutralises_rustdoc_hazards() {
        assert_eq!(
            sanitize("[UNSTABLE] see https://x.dev/a#b. Use `a[0]` and <tag>.\n    indented"),
            vec!["\\[UNSTABLE\\] see <https://x.dev/a#b>. Use `a[0]` and \\<tag\\>.", "indented"]
        );
        assert_eq!(sanitize("a\n```\nlet x;\n```"), vec!["a", "```text", "let x;", "```"]);
    }
}
