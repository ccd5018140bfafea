fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let set = codex_app_codegen::SchemaSet::read_dir(&root.join("vendor-schemas"), "0.169.0").unwrap();
    let (files, summary) = codex_app_codegen::generate(&set, "cargo xtask regen").unwrap_or_else(|e| panic!("{e}"));
    for f in files { std::fs::write(root.join("protocol/src/generated").join(&f.path), f.contents).unwrap(); }
    eprintln!("{summary:?}");
}
