#!/usr/bin/env bash
# Runs every fuzz target of the module (every func FuzzXxx in a *_test.go
# file outside third_party/, found anew each time) for the given time each:
#
#   scripts/fuzz.sh [FUZZTIME]     # default 30s; make fuzz, make fuzz-smoke (3s)
#
# A failing target does not stop the others; the script lists the failures
# at the end and exits 1. Go writes a failing input to the package's
# testdata/fuzz/FuzzXxx/, where it stays as a regression seed that
# `go test` runs from then on (commit it with the fix).
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
go=${GO:-go}

targets=$(grep -rE --include='*_test.go' --exclude-dir=third_party --exclude-dir=.git \
  -o '^func Fuzz[A-Za-z0-9_]*\(' . | sed -E 's|^\./(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|' | sort -u)
if [ -z "$targets" ]; then
  echo "fuzz: no fuzz target found" >&2
  exit 1
fi
n=$(printf '%s\n' "$targets" | wc -l)
echo "fuzz: $n targets, $fuzztime each"
failed=()
while read -r dir name; do
  echo "== ./$dir $name"
  if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir"; then
    failed+=("./$dir $name")
  fi
done <<< "$targets"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of $n targets failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: all $n targets held for $fuzztime each"
