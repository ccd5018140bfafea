#!/usr/bin/env bash
# Where README's test command spends its CPU, on a fresh clone of a tree (nothing built; the
# crates downloaded before, as cargo keeps them): the command as `.ci/run` runs it
# (`scripts/readme-test-command.sh`), with cargo's `--timings` and each test binary run under
# `/usr/bin/time` (cargo's runner for the host). Prints the total (CPU and wall), the build by
# unit (a unit's time is its wall time, close to its CPU time on a machine whose cores are all
# busy) grouped as the dependencies and each build of a workspace crate, and the run of each test
# binary (CPU). What is left of the total is the doc tests and cargo itself.
#
#   scripts/test-command-cost.sh            # this tree's HEAD
#   scripts/test-command-cost.sh ../base    # another tree's HEAD (a worktree of another commit)
#
# Needs git, GNU time (`/usr/bin/time`) and python3; a few minutes (README's test command).
# `$CODEX_BIN` is unset, as on a machine with no codex: the tests install the pinned release.
set -euo pipefail

[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: install GNU time" >&2; exit 2; }
tree=$(cd "${1:-$(dirname "$0")/..}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q "$tree" "$scratch/clone"
cd "$scratch/clone"

command=$(scripts/readme-test-command.sh)
case "$command" in
    "cargo test "*) ;;
    *) echo "README's test command is not a cargo test: $command" >&2; exit 2 ;;
esac
command="cargo test --timings ${command#cargo test }"

# Each test binary under GNU time: its CPU, wall and name (the package folder it runs in, the
# binary without its hash), one line each in runs.txt.
cat >"$scratch/runner" <<'EOF'
#!/usr/bin/env bash
name="$(basename "$PWD") $(basename "$1" | sed 's/-[0-9a-f]*$//')"
exec /usr/bin/time -a -o "$TEST_COMMAND_RUNS" -f "%U %S %e $name" "$@"
EOF
chmod +x "$scratch/runner"
export TEST_COMMAND_RUNS="$scratch/runs.txt"
: >"$TEST_COMMAND_RUNS"
# Cargo's runner for the host (`CARGO_TARGET_<TRIPLE>_RUNNER`).
host=$(rustc -vV | sed -n 's/^host: //p')
runner_var="CARGO_TARGET_$(echo "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"

echo "$command" >&2
status=0
env -u CODEX_BIN -u CARGO_TARGET_DIR "$runner_var=$scratch/runner" \
    /usr/bin/time -o "$scratch/total.txt" -f "%U %S %e" bash -c "$command" >"$scratch/log.txt" 2>&1 || status=$?
if [ "$status" != 0 ]; then
    tail -40 "$scratch/log.txt" >&2
    echo "README's test command failed ($status)" >&2
    exit "$status"
fi

[ -s "$TEST_COMMAND_RUNS" ] || { echo "no test binary ran under $runner_var" >&2; exit 1; }

python3 - "$scratch" <<'EOF'
import json, re, sys
scratch = sys.argv[1]
user, sys_, wall = map(float, open(f"{scratch}/total.txt").read().split()[:3])
log = open(f"{scratch}/log.txt").read()
tests = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", log))
html = open(f"{scratch}/clone/target/cargo-timings/cargo-timing.html").read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
ours = lambda u: u["name"].startswith("codex-app") or u["name"] == "xtask"
build = {}
for u in units:
    if ours(u):
        key = f"{u['name']} {u['target'].strip() or 'lib'}"
    else:
        key = "dependencies"
    build[key] = build.get(key, 0) + u["duration"]
runs = []
for line in open(f"{scratch}/runs.txt"):
    parts = line.split()
    if len(parts) >= 5 and re.match(r"^[0-9.]+$", parts[0]):
        runs.append((float(parts[0]) + float(parts[1]), float(parts[2]), " ".join(parts[3:])))
total = user + sys_
print(f"total: {total:.0f} CPU-s, {wall:.0f} s wall, {tests} tests")
print(f"build, by unit ({sum(build.values()):.0f} s in all):")
for key, s in sorted(build.items(), key=lambda kv: -kv[1]):
    if s >= 0.5:
        print(f"  {s:6.1f}  {key}")
ran = sum(cpu for cpu, _, _ in runs)
print(f"test binaries run ({ran:.0f} CPU-s in all):")
small = [r for r in runs if r[0] < 0.5]
for cpu, w, name in sorted((r for r in runs if r[0] >= 0.5), key=lambda r: -r[0]):
    print(f"  {cpu:6.1f}  {name} ({w:.0f} s wall)")
if small:
    print(f"  {sum(r[0] for r in small):6.1f}  {len(small)} others (the doc tests' programs among them)")
print(f"the build, the doc tests and cargo (the total less the test binaries): {total - ran:.0f} CPU-s")
EOF
