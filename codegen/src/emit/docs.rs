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
    let mut lines = doc.map(sanitize).unwrap_or_default();
    if experimental {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(EXPERIMENTAL_NOTE.to_owned());
    }
    let lines = lines.into_iter().map(|l| if l.is_empty() { l } else { format!(" {l}") });
    quote! { #( #[doc = #lines] )* }
}

/// The `#[cfg(feature = "experimental")]` gate, when marked.
pub fn gate(experimental: bool) -> TokenStream {
    if experimental {
        quote! { #[cfg(feature = "experimental")] }
    } else {
        TokenStream::new()
    }
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
                let end = rest.find(|c: char| c.is_whitespace() || c == ')' || c == '>' || c == '`').unwrap_or(rest.len());
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
    fn neutralises_rustdoc_hazards() {
        assert_eq!(
            sanitize("[UNSTABLE] see https://x.dev/a#b. Use `a[0]` and <tag>.\n    indented"),
            vec!["\\[UNSTABLE\\] see <https://x.dev/a#b>. Use `a[0]` and \\<tag\\>.", "indented"]
        );
        assert_eq!(sanitize("a\n```\nlet x;\n```"), vec!["a", "```text", "let x;", "```"]);
    }
}
