#!/usr/bin/env bash
# Seed corpora for the fuzz targets from the recorded fixtures and the vendored bundles, into
# fuzz/corpus/<target>/ (git-ignored; a fuzz run adds what it finds there). Safe to re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
repo=..
fixtures=("$repo"/traffic/fixtures/*/*.ndjson)
mkdir -p corpus/{decode_server,decode_client,line_reader,drift,codegen}

# One file per distinct wire line, by direction (the transcript's `line`, unescaped).
python3 - "$repo" "${fixtures[@]}" <<'PY'
import hashlib, json, sys
repo, files = sys.argv[1], sys.argv[2:]
for path in files:
    for raw in open(path, encoding="utf-8"):
        if not raw.strip():
            continue
        entry = json.loads(raw)
        target = "decode_server" if entry["dir"] == "s2c" else "decode_client"
        line = entry["line"].encode()
        name = hashlib.sha1(line).hexdigest()
        open(f"corpus/{target}/{name}", "wb").write(line)
PY

# Whole transcripts for the drift check; for the line reader, with 3 bytes of settings first
# (piece size, buffer capacity, maximum line length).
for f in "${fixtures[@]}"; do
    name="$(basename "$(dirname "$f")")-$(basename "$f" .ndjson)"
    cp "$f" "corpus/drift/$name"
    head -c 4000 "$f" | { printf '\x03\x05\x3f'; cat; } > "corpus/line_reader/$name"
done

# The construct schemas and the vendored bundles, whole; and a few mutation recipes.
cp "$repo"/codegen/tests/constructs/*.json corpus/codegen/
cp "$repo"/vendor-schemas/stable/codex_app_server_protocol.schemas.json corpus/codegen/bundle-stable.json
for i in 0 1 2 3 4 5 6 7 8; do printf "\x0$i\x0$i\x10\x20\x30\x0$i\x40\x50\x60" > "corpus/codegen/recipe-$i"; done
echo "seeded: $(for t in corpus/*; do printf '%s=%s ' "$(basename "$t")" "$(ls "$t" | wc -l)"; done)"
