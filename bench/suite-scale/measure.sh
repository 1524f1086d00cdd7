#!/usr/bin/env bash
# Times whole test-binary runs of `ours` and `theirs`, alternating them round by round so load
# from other processes hits both alike. Usage: ./measure.sh [rounds] [extra test-binary args...]
# Prints one line per binary: median, min, max wall seconds over the rounds.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-7}; shift || true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
cargo build --release --tests -q
bin() { # the newest test binary of a target, as cargo prints it
  cargo test --release --no-run --message-format=json --test "$1" -q 2>/dev/null |
    grep -o '"executable":"[^"]*/deps/'"$1"'-[^"]*"' | tail -1 | cut -d'"' -f4
}
ours=$(bin ours); theirs=$(bin theirs)
export CARGO_MANIFEST_DIR=$PWD CARGO_PKG_NAME=suite-scale-bench   # what cargo test sets; the harness resolves the suite from it
declare -A times
for name in ours theirs; do "${!name}" -q "$@" >/dev/null 2>&1 || { echo "$name failed"; exit 1; }; done  # warm the page cache
for ((r = 0; r < rounds; r++)); do
  for name in ours theirs; do
    start=$(date +%s%N)
    "${!name}" -q "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    times[$name]+="$(( (end - start) / 1000000 )) "
  done
done
for name in ours theirs; do
  echo "${times[$name]}" | tr ' ' '\n' | grep . | sort -n | awk -v n="$name" -v args="$*" '
    { t[NR] = $1 } END { printf "%-7s %-20s median %.3f s  min %.3f  max %.3f  (%d runs)\n",
      n, args, t[int((NR + 1) / 2)] / 1000, t[1] / 1000, t[NR] / 1000, NR }'
done
