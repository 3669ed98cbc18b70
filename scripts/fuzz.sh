#!/usr/bin/env bash
# Long fuzz runs of every fuzz target in the module (RELIABILITY.md §6,
# docs/reliability.md "Fuzzing").
#
#   scripts/fuzz.sh [duration] [package-or-target-filter]
#
# duration is a go test -fuzztime value (default 10m) given to EACH target;
# the optional filter is a regular expression matched against
# "<package dir> <FuzzName>", e.g. 'grammar|codec |ghevent'. Targets run one
# after another (fuzzing uses every core), and the script stops at the first
# failure: `go test` has then written the crasher to the package's
# testdata/fuzz/<FuzzName>/ — keep it there, it becomes a regression test.
#
# Environment: FUZZ_PARALLEL sets -parallel (default: all cores);
# FUZZ_MINIMIZE sets -fuzzminimizetime (default 5s: minimising a big input
# can otherwise eat the whole run).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10m}"
filter="${2:-.}"
minimize="${FUZZ_MINIMIZE:-5s}"
parallel=()
if [[ -n "${FUZZ_PARALLEL:-}" ]]; then
  parallel=(-parallel="$FUZZ_PARALLEL")
fi

targets=()
while IFS= read -r file; do
  dir=$(dirname "$file")
  while IFS= read -r fn; do
    targets+=("$dir $fn")
  done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file")
done < <(grep -rl --include='*_test.go' '^func Fuzz' internal cmd 2>/dev/null | sort)

ran=0
for t in "${targets[@]}"; do
  if ! grep -Eq -- "$filter" <<<"$t"; then
    continue
  fi
  dir=${t% *}
  fn=${t#* }
  echo "fuzz: ./$dir $fn for $duration (started $(date -u +%H:%M:%SZ))"
  start=$(date +%s)
  go test -run='^$' -fuzz="^${fn}\$" -fuzztime="$duration" -fuzzminimizetime="$minimize" "${parallel[@]}" "./$dir"
  echo "fuzz: ./$dir $fn ok after $(( $(date +%s) - start ))s"
  ran=$((ran + 1))
done
if [[ $ran -eq 0 ]]; then
  echo "fuzz: no target matches '$filter'" >&2
  exit 2
fi
echo "fuzz: $ran target(s) passed"
