#!/usr/bin/env bash
# The report page of a whole no-model run in headless Chromium (issue 37): one run of
# tests/ours_no_model.rs over SUITE into an empty report folder, the sizes of what it left there,
# then page_first_screen.mjs (the first screen against a blank page's, ROUNDS rounds).
#
#   ./page.sh [ROUNDS] [SUITE] [COUNT]   SUITE: a no-model suite, crate-relative (default
#                                        generated/no-model100k), generated with COUNT cases
#                                        (default 100000) when missing
#
# Needs Chromium (/usr/bin/chromium: `apt-get install chromium`) and Node 20 or later.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}; suite=${2:-generated/no-model100k}; count=${3:-100000}
: "${CARGO_TARGET_DIR:=$(cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')}"
cargo build --release --tests --bins -q -p suite-scale-bench
[ -f "$suite/proposal-eval.toml" ] || "$CARGO_TARGET_DIR/release/generate" "$suite" "$count" no-model
bin=$(cargo test --release -p suite-scale-bench --no-run --message-format=json --test ours_no_model -q 2>/dev/null |
  grep -o '"executable":"[^"]*/deps/ours_no_model-[^"]*"' | tail -1 | cut -d'"' -f4)
report=$CARGO_TARGET_DIR/proposal-eval
rm -rf "$report"
export CARGO_MANIFEST_DIR=$PWD CARGO_PKG_NAME=suite-scale-bench
start=$(date +%s.%N)
BENCH_SUITE=$suite "$bin" -q >/dev/null 2>&1 || { echo "the run failed" >&2; exit 1; }
echo "run and fold: $(echo "$(date +%s.%N) - $start" | bc) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
for f in runs/*/journal.jsonl results.jsonl report.json report.html; do
  for path in "$report"/$f; do printf '%-14s %6.1f MB\n' "$(basename "$path")" "$(echo "$(stat -c %s "$path") / 1000000" | bc -l)"; done
done
node --experimental-websocket page_first_screen.mjs "$report/report.html" "$rounds"
