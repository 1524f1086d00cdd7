#!/usr/bin/env bash
# `cargo package --workspace`, with verification, for the crates that are published (naming,
# engine, recording, macros, runtime, cli). cargo packages every member it is given, `publish = false` or
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

# What a registry page shows, checked before the build: every package carries the license texts
# its manifest names, and its README links only to absolute addresses (a relative link resolves
# in the repository, not on a registry page).
cargo metadata --no-deps --format-version 1 | python3 -c '
import json, os, re, subprocess, sys
bad = []
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        continue
    name = p["name"]
    listed = subprocess.run(["cargo", "package", "--list", "--allow-dirty", "-p", name],
                            capture_output=True, text=True, check=True).stdout.split()
    for license in ("LICENSE-MIT", "LICENSE-APACHE"):
        if license not in listed:
            bad.append(f"{name}: the package has no {license} (link ../{license} into its folder)")
    if p.get("readme"):
        readme = os.path.relpath(os.path.join(os.path.dirname(p["manifest_path"]), p["readme"]))
        for link in re.findall(r"\]\(([^)#][^)]*)\)", open(readme).read()):
            if not re.match(r"[a-z]+://", link):
                bad.append(f"{readme}: relative link ({link}): on a registry page it leads nowhere; write https://github.com/proposal-eval/proposal-eval/blob/HEAD/{link}")
if bad:
    sys.exit("\n".join(bad))
'

# Verification unpacks each package into $CARGO_HOME/registry/src/<a hash of the temporary
# registry's path>/ and reuses a folder that is already there: a second run from the same clone
# (a developer's, or CI's on a machine that ran it before) would build the first run's sources,
# whatever changed since (it did, when the runtime's files moved to recording/). The crates are
# not on crates.io, so every unpacked copy of them is such a leftover.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/{proposal-eval,proposal-eval-*,cargo-proposal-eval}-[0-9]*

cargo package --workspace "${excludes[@]}" "$@"
