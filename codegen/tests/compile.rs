//! Every construct bundle (`tests/constructs/*.json`) generates a protocol crate that compiles,
//! with and without its features, and passes clippy with `-D warnings`: the protocol crate's
//! hand-written modules with the generated ones in place of the vendored schema's, one crate
//! per construct in a scratch workspace (`target/tmp/constructs/`), checked by one cargo
//! invocation per feature set (dependencies built once, offline, from the workspace's lock
//! file).
//!
//! Every construct is checked with its features. Without them, only the constructs whose
//! generated code is gated (see [`gated`]): for the others, what the features add is whole
//! trait impls that name their traits by path, and leaving those out can neither break the
//! build nor leave an import unused. That is checked here, line by line, not assumed; the
//! hand-written modules without features are checked in the workspace itself
//! (`codex-app-protocol-stable`).
//!
//! It runs when `CODEX_APP_CONSTRUCT_COMPILE=1` is set, and `.ci/run` sets it: it builds 25
//! scratch crates and their dependencies, a large part of README's test command on a fresh
//! clone (the figure: `docs/testing.md`), for a check that only a change of the generator or
//! of the protocol crate's hand-written modules can fail. Set it when you change either; without
//! it the test says it was skipped and how to run it.

use crate::common::schema_set;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use codex_app_codegen::{generate_with, Settings};

fn copy_dir(from: &Path, to: &Path, skip: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path == skip {
            continue;
        }
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target, skip);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// Writes the crate of one construct; returns its folder name.
fn write_crate(root: &Path, scratch: &Path, bundle: &Path) -> String {
    let stem = bundle.file_stem().unwrap().to_str().unwrap().replace('-', "_");
    let name = format!("c_{stem}");
    let dir = scratch.join(&name);
    let _ = std::fs::remove_dir_all(&dir);
    let protocol = root.join("protocol");
    copy_dir(&protocol.join("src"), &dir.join("src"), &protocol.join("src/generated"));
    let (files, _) = generate_with(&schema_set(bundle, "0.0.0-test"), "test", &Settings::codex().unwrap().proposing())
        .unwrap_or_else(|e| panic!("{}: {e}", bundle.display()));
    for file in files {
        let Ok(rel) = file.path.strip_prefix("protocol/src") else { continue };
        let path = dir.join("src").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, file.contents).unwrap();
    }
    let manifest = std::fs::read_to_string(protocol.join("Cargo.toml")).unwrap();
    // The `[lib]` section, whatever it holds, becomes the construct's: its name, and no tests
    // or doc examples (the crate's own tests are written against the vendored schema).
    let lib_start = manifest.find("\n[lib]\n").expect("protocol/Cargo.toml has a [lib] section") + 1;
    let lib_end = manifest[lib_start + 1..].find("\n[").map_or(manifest.len(), |i| lib_start + 1 + i + 1);
    assert!(
        manifest[lib_start..lib_end].contains("name = \"codex_app_protocol\"\n"),
        "protocol/Cargo.toml's [lib] section changed"
    );
    let manifest = format!(
        "{}[lib]\nname = \"{name}\"\ntest = false\ndoctest = false\n\n{}",
        &manifest[..lib_start],
        &manifest[lib_end..]
    )
    .replace("name = \"codex-app-protocol\"", &format!("name = \"{}\"", name.replace('_', "-")));
    let manifest = manifest.split("[dev-dependencies]").next().unwrap().to_owned();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    name
}

fn cargo(scratch: &Path, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(scratch)
        .args(args)
        .env("CARGO_TARGET_DIR", scratch.join("target"))
        // As the workspace builds (its `[profile.dev]`): a check from scratch costs less without
        // the incremental caches.
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "`cargo {}` in {} failed:\n{stderr}", args.join(" "), scratch.display());
}

#[test]
fn every_construct_compiles_with_and_without_features() {
    if !std::env::var("CODEX_APP_CONSTRUCT_COMPILE").is_ok_and(|v| !v.is_empty() && v != "0") {
        // Written to the process's stderr, which the test harness does not capture: the run
        // shows that this check was left out, and how to run it.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the construct crates are compiled when CODEX_APP_CONSTRUCT_COMPILE=1 is set (CI sets it): \
             CODEX_APP_CONSTRUCT_COMPILE=1 cargo test -p codex-app-codegen --test it compile"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("constructs");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut bundles: Vec<PathBuf> = std::fs::read_dir(root.join("codegen/tests/constructs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    bundles.sort();
    let members: Vec<String> = bundles.iter().map(|b| write_crate(&root, &scratch, b)).collect();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let shared: String =
        workspace.split("[workspace.package]").nth(1).unwrap().split("\n[profile").next().unwrap().to_owned();
    let manifest = format!(
        "[workspace]\nresolver = \"2\"\nmembers = [{}]\n\n[workspace.package]{shared}",
        members.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ")
    );
    std::fs::write(scratch.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), scratch.join("Cargo.lock")).unwrap();
    cargo(
        &scratch,
        &["clippy", "--offline", "--quiet", "--keep-going", "--workspace", "--all-features", "--", "-D", "warnings"],
    );
    let gated: Vec<String> =
        members.iter().filter(|m| gated(&scratch.join(m).join("src/generated"))).map(|m| m.replace('_', "-")).collect();
    assert!(
        gated.iter().any(|m| m == "c-experimental"),
        "the experimental construct must be checked without features too: {gated:?}"
    );
    let mut args = vec!["clippy", "--offline", "--quiet", "--keep-going"];
    for member in &gated {
        args.extend(["-p", member]);
    }
    args.extend(["--", "-D", "warnings"]);
    cargo(&scratch, &args);
}

/// Whether the generated code in `dir` holds a `cfg` other than one on a whole trait impl
/// named by path (`#[cfg(feature = "inspect")]` then `impl crate::inspect::Inspect for X`):
/// an experimental member, variant, type or method, which the crate without features must
/// build without.
fn gated(dir: &Path) -> bool {
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("//") || !line.contains("cfg") {
                continue;
            }
            let whole_impl = line.starts_with("#[cfg(feature = \"")
                && line.ends_with("\")]")
                && lines.get(i + 1).is_some_and(|next| next.starts_with("impl crate::"));
            if !whole_impl {
                return true;
            }
        }
    }
    false
}
