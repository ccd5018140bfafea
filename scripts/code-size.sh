#!/usr/bin/env bash
# The machine code the stable surface compiles to: a count that, unlike the build's CPU time on
# a shared machine, is the same in every run, for telling what a change costs LLVM (which
# spends most of the release build) from the noise of `cargo xtask build-times`.
#
# For each tree given (default: this one), it builds that tree's protocol crate in release
# without features, as a user's project depends on it (a scratch package under the tree's
# `target/code-size/`, the tree's Cargo.lock), and prints for its rlib: the bytes of text
# (`size`), the functions and those of them that are drop code (`nm`, text symbols), and the
# largest families of functions. With two trees, the last column is the second's count over
# the first's.
#
#   scripts/code-size.sh                       # this tree
#   scripts/code-size.sh ../base .             # a worktree of another commit, then this
#   FEATURES=inspect scripts/code-size.sh      # with features (`inspect`: as the drift check's
#                                              # users build it)
#
# Needs binutils (`size`, `nm`) and python3; about a minute per tree after its dependencies.
set -euo pipefail

command -v size >/dev/null && command -v nm >/dev/null || { echo "size and nm not found: install binutils" >&2; exit 2; }
trees=("$@")
[ ${#trees[@]} -gt 0 ] || trees=("$(cd "$(dirname "$0")/.." && pwd)")
[ ${#trees[@]} -le 2 ] || { echo "usage: $0 [TREE [TREE]]" >&2; exit 2; }
# The protocol crate's features, comma-separated (none: the stable surface as it is by default).
features=$(echo "${FEATURES:-}" | sed -E 's/[^,]+/"&"/g')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for i in "${!trees[@]}"; do
    tree=$(cd "${trees[$i]}" && pwd)
    dir="$tree/target/code-size"
    mkdir -p "$dir/src"
    : >"$dir/src/lib.rs"
    cat >"$dir/Cargo.toml" <<EOF
# Written by scripts/code-size.sh: the protocol crate as a user's project depends on it.
[package]
name = "code-size"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
codex-app-protocol = { path = "$tree/protocol", features = [$features] }

[workspace]
EOF
    cp "$tree/Cargo.lock" "$dir/Cargo.lock"
    echo "building $tree ..." >&2
    # Only the protocol crate is compiled again: its fingerprints are forgotten.
    rm -rf "$dir"/target/release/.fingerprint/codex-app-protocol-*
    (cd "$dir" && CARGO_INCREMENTAL=0 cargo build --release --quiet --target-dir "$dir/target")
    rlib=$(ls -t "$dir"/target/release/deps/libcodex_app_protocol-*.rlib | head -1)
    mkdir -p "$out/$i" && (cd "$out/$i" && ar x "$rlib")
    size -t "$out/$i"/*.o | awk 'END {print $1}' >"$out/$i.text"
    nm -C -S --defined-only "$out/$i"/*.o >"$out/$i.nm" 2>/dev/null || true
done

python3 - "$out" "${trees[@]}" <<'EOF'
import collections, os, re, sys

out, trees = sys.argv[1], sys.argv[2:]

def family(name):
    """Functions of one generic item or trait method, whatever their type arguments."""
    if name.startswith("core::ptr::drop_in_place"):
        return "drop code (drop_in_place)"
    m = re.search(r" as ([\w:]+)(<[^>]*>)?>::(\w+)$", name)
    if m:
        return m.group(1).split("::")[-1] + "::" + m.group(3)
    return re.sub(r"<.*>", "<>", name)

rows = []
for i, tree in enumerate(trees):
    sizes, counts = collections.Counter(), collections.Counter()
    for line in open(f"{out}/{i}.nm"):
        parts = line.rstrip("\n").split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            key = family(parts[3])
            sizes[key] += int(parts[1], 16)
            counts[key] += 1
    text = int(open(f"{out}/{i}.text").read())
    rows.append((os.path.basename(os.path.abspath(tree)), text, sizes, counts))

def ratio(a, b):
    return f"{a / b:10.3f}" if b else ""

print(f"{'tree':<24} {'text bytes':>12} {'functions':>10} {'drop code':>10}")
for i, (name, text, sizes, counts) in enumerate(rows):
    drops = counts["drop code (drop_in_place)"]
    line = f"{name:<24} {text:>12,} {sum(counts.values()):>10,} {drops:>10,}"
    if i == 1:
        line += f"  text {ratio(text, rows[0][1])}, functions {ratio(sum(counts.values()), sum(rows[0][3].values()))}"
    print(line)

print("\nlargest families (bytes, functions)" + (", then the second tree's change" if len(rows) == 2 else ""))
last = rows[-1]
keys = sorted(last[2], key=lambda k: -last[2][k])[:15]
if len(rows) == 2:
    first = rows[0]
    changed = sorted(set(first[2]) | set(last[2]), key=lambda k: -abs(last[2][k] - first[2][k]))[:15]
    keys = keys + [k for k in changed if k not in keys]
for k in keys:
    line = f"{last[2][k]:>10,} {last[3][k]:>6}  {k[:110]}"
    if len(rows) == 2:
        line += f"   ({last[2][k] - rows[0][2][k]:+,} bytes, {last[3][k] - rows[0][3][k]:+} functions)"
    print(line)
EOF
