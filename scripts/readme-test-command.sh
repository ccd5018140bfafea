#!/usr/bin/env bash
# Prints README's test command: the second line of its first code block, without its comment.
# `.ci/run` runs it; `scripts/test-command-cost.sh` measures it.
#
#   scripts/readme-test-command.sh [README]    # default: the README.md of this repository
set -euo pipefail
readme=${1:-"$(dirname "${BASH_SOURCE[0]}")/../README.md"}
command=$(awk '/^```/ { block++; next } block == 1 && ++line == 2 { print; exit }' "$readme")
command=${command%%#*}
[ -n "$command" ] || { echo "$readme: no second line in its first code block" >&2; exit 1; }
echo "${command%"${command##*[![:space:]]}"}"
