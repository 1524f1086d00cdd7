#!/usr/bin/env bash
# Compile time of the test targets `ours` (#[proposal_eval]) and `theirs` (rstest's #[files]) over
# the same generated fixtures, and of `plain_ours` and `plain_theirs` (one plain test using the
# same crates) to subtract what is not the macros' (libtest, linking): a clean build of the target (its artifacts and
# incremental cache removed, dependencies built) and an incremental one (its file touched), each
# through /usr/bin/time (wall, user + system CPU of cargo and rustc), the three targets
# four targets alternating round by round; at the end, per build kind, each macro's added CPU time
# (target minus its plain one).
# Usage: ./measure.sh [ROUNDS] [FIXTURES]   (default 5 rounds, 1000 fixtures)
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
fixtures=${2:-1000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
if [ "$(ls generated/suite 2>/dev/null | wc -l)" != "$fixtures" ]; then
  python3 generate.py "$fixtures"
fi
cargo build --tests -q   # dependencies, and every target once
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build() { # kind target: appends "wall cpu" to $out/kind-target
  local kind=$1 target=$2
  if [ "$kind" = clean ]; then
    cargo clean -q -p macro-compile-bench
  else
    touch "tests/$target.rs"
  fi
  /usr/bin/time -f '%e %U %S' -o "$out/t" cargo build -q --test "$target"
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$out/t" >>"$out/$kind-$target"
}

for round in $(seq "$rounds"); do
  for target in plain_ours ours plain_theirs theirs; do build clean "$target"; done
  cargo build -q --tests   # each clean build above removed the others' artifacts
  for target in plain_ours ours plain_theirs theirs; do build incremental "$target"; done
  echo "round $round done (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-12s %-12s %9s %9s   %s\n' build target "cpu s" "wall s" "cpu s per round"
for kind in clean incremental; do
  for target in plain_ours ours plain_theirs theirs; do
    f="$out/$kind-$target"
    printf '%-12s %-12s %9.2f %9.2f   %s\n' "$kind" "$target" \
      "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f1 "$f" | median)" \
      "$(cut -d' ' -f2 "$f" | tr '\n' ' ')"
  done
done
for kind in clean incremental; do
  m() { cut -d' ' -f2 "$out/$kind-$1" | median; }
  awk -v k="$kind" -v o="$(m ours)" -v po="$(m plain_ours)" -v t="$(m theirs)" -v pt="$(m plain_theirs)" 'BEGIN {
    printf "%-12s added CPU: proposal_eval %.2f s, rstest #[files] %.2f s, ratio %.2f\n", k, o - po, t - pt, (o - po) / (t - pt) }'
done
echo "fixtures: $fixtures; medians of $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
