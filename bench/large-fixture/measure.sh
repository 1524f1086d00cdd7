#!/usr/bin/env bash
# Peak memory (max RSS) of recording and of replaying one large fixture, against its size.
# Usage: ./measure.sh [MEGABYTES]   (default 60)
set -euo pipefail
cd "$(dirname "$0")"
mb=${1:-60}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
cargo build --release --tests -q
bin=$(cargo test --release --no-run --message-format=json --test large -q 2>/dev/null |
  grep -o '"executable":"[^"]*/deps/large-[^"]*"' | tail -1 | cut -d'"' -f4)
export CARGO_MANIFEST_DIR=$PWD CARGO_PKG_NAME=large-fixture-bench

# The fixture: a document of printable text with escapes in it (quotes, newlines, non-ASCII),
# so parsing and writing it is not a straight copy.
rm -rf generated && mkdir -p generated/large
python3 - "$mb" <<'PY'
import json, sys
size = int(sys.argv[1]) * 1000 * 1000
line = 'Invoice 00042 "ACME GmbH", Müllerstraße 7: 3 × widget @ 12.50 EUR\n'
escaped = len(json.dumps(line, ensure_ascii=False).encode()) - 2
doc = line * ((size - 200) // escaped)
fixture = {"input": {"document": doc}, "expected": [{"op": "note", "length": len(doc.encode())}]}
with open("generated/large/big.json", "w", encoding="utf-8") as f:
    json.dump(fixture, f, ensure_ascii=False)
PY
size=$(stat -c %s generated/large/big.json)

run() { # label, env...: max RSS in kB of one run of the test binary
  local label=$1; shift
  env "$@" /usr/bin/time -f '%M %e' -o generated/time.txt "$bin" -q >generated/out.txt 2>&1 ||
    { cat generated/out.txt; echo "$label failed"; exit 1; }
  read -r rss secs <generated/time.txt
  awk -v l="$label" -v r="$rss" -v s="$secs" -v f="$size" 'BEGIN {
    printf "%-8s max RSS %7.1f MB  (%.2f x the %.1f MB fixture)  %5.2f s\n",
      l, r / 1000, r * 1000 / f, f / 1e6, s }'
}
run record RECORD=1
ls -l generated/large/recordings/big.json | awk '{ printf "recording: %.1f MB\n", $5 / 1e6 }'
run replay
run replay
