#!/usr/bin/env bash
# `cargo package --workspace`, with verification, for the crates that are published (engine,
# naming, macros, runtime, cli). cargo packages every member it is given, `publish = false` or
# not, so the members marked `publish = false` (examples, benches, the fixture corpus) are read
# from `cargo metadata` and excluded: a new example needs only its `publish = false`.
# Extra arguments go to cargo (`.ci/package.sh --allow-dirty` on a working tree with changes).
set -euo pipefail
cd "$(dirname "$0")/.."

excludes=()
while IFS= read -r name; do
  excludes+=(--exclude "$name")
done < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print(p["name"])
')

cargo package --workspace "${excludes[@]}" "$@"
