#!/usr/bin/env bash
# A consumer's first build: `cargo test --no-run` in a new crate whose tests use proposal-eval
# (no features; the guide's harness target), against the same in a crate using the crates a user
# would otherwise pick (datatest-stable + insta + assert-json-diff). Registry crates come from
# cargo's cache (offline), the target folder starts empty, and the two sides alternate round by
# round so that a change in the machine's load falls on both. Each build is timed with
# /usr/bin/time (wall; user + system CPU of cargo and rustc). Prints each round's ratios and the
# medians and their ratio.
#
# proposal-eval is a git dependency on this repository's HEAD commit, as the guide and the README
# tell a user to add it: cargo builds it as it builds the other side's registry crates (not
# incremental, lints capped). With --path it is a path dependency on the working tree instead,
# which cargo builds as a local crate (incremental, every lint): how this bench built it until
# 2026-12-06 (the README's first table).
#
# Usage: bench/cold-build/measure.sh [--path] [ROUNDS]   (default 3)
# The crates are made in a temporary folder; the workspace's Cargo.lock pins both sides' versions.
set -euo pipefail
cd "$(dirname "$0")"
repo=$(cd ../.. && pwd)
source=git
if [ "${1:-}" = --path ]; then
  source=path
  shift
fi
rounds=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What a consumer gets: cargo's defaults, not this repository's build settings.
unset CARGO_TARGET_DIR CARGO_PROFILE_DEV_DEBUG CARGO_INCREMENTAL RUSTFLAGS RUSTC_WRAPPER

consumer() { # name dev-dependencies test-source
  local dir=$work/$1
  mkdir -p "$dir/src" "$dir/tests" "$dir/fixtures/payments"
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde_json = "1"\n\n[dev-dependencies]\n%s\n[[test]]\nname = "evals"\nharness = false\n' \
    "$1" "$2" >"$dir/Cargo.toml"
  echo 'pub fn answer() -> serde_json::Value { serde_json::json!([]) }' >"$dir/src/lib.rs"
  printf '%s\n' "$3" >"$dir/tests/evals.rs"
  echo '{ "input": { "message": "hi" }, "expected": [] }' >"$dir/fixtures/payments/a.json"
  cp "$repo/Cargo.lock" "$dir/Cargo.lock"
}

if [ "$source" = git ]; then
  if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "note: the working tree has changes; the build is of HEAD, $(git -C "$repo" rev-parse --short HEAD)" >&2
  fi
  dependency="proposal-eval = { git = \"file://$repo\", rev = \"$(git -C "$repo" rev-parse HEAD)\" }"
else
  dependency="proposal-eval = { path = \"$repo/runtime\" }"
fi
consumer ours "$dependency" '
use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;

fn payments(_case: &Case, _llm: &mut Llm) -> proposal_eval::Result<Value> {
    Ok(ours::answer())
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/payments").run(payments)
}'

consumer theirs 'datatest-stable = "0.3"
insta = { version = "1", features = ["json"] }
assert-json-diff = "2"' '
use assert_json_diff::{assert_json_matches_no_panic, CompareMode, Config};
use serde_json::Value;

fn payments(_path: &datatest_stable::Utf8Path, contents: String) -> datatest_stable::Result<()> {
    let fixture: Value = serde_json::from_str(&contents)?;
    let actual = theirs::answer();
    assert_json_matches_no_panic(&actual, &fixture["expected"], Config::new(CompareMode::Strict))?;
    insta::assert_json_snapshot!(actual);
    Ok(())
}

datatest_stable::harness! {
    { test = payments, root = "fixtures/payments", pattern = r"^.*\.json$" },
}'

# Resolve each side once (offline, from the copied lock; the git dependency is fetched from this
# repository) so that the timed builds only build.
for side in ours theirs; do
  if [ "$side" = ours ] && [ "$source" = git ]; then
    (cd "$work/$side" && cargo fetch -q)
  else
    (cd "$work/$side" && { cargo fetch --offline -q 2>/dev/null || cargo update --offline -q; })
  fi
done

out=$work/times
build() { # side: appends "wall cpu" to $out-side
  rm -rf "$work/$1/target"
  (cd "$work/$1" && /usr/bin/time -f '%e %U %S' -o "$out.t" cargo test --no-run --offline -q)
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$out.t" >>"$out-$1"
}

for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order="ours theirs"; else order="theirs ours"; fi
  for side in $order; do build "$side"; done
  ratio=$(paste -d' ' <(tail -1 "$out-ours") <(tail -1 "$out-theirs") | awk '{ printf "%.2fx %.2fx", $1 / $3, $2 / $4 }')
  echo "round $round: ours $(tail -1 "$out-ours"), theirs $(tail -1 "$out-theirs"), ratio $ratio (wall cpu; load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m() { cut -d' ' -f"$2" "$out-$1" | median; }
printf '%-8s %9s %9s\n' side "wall s" "cpu s"
for side in ours theirs; do printf '%-8s %9.2f %9.2f\n' "$side" "$(m "$side" 1)" "$(m "$side" 2)"; done
awk -v ow="$(m ours 1)" -v tw="$(m theirs 1)" -v oc="$(m ours 2)" -v tc="$(m theirs 2)" \
  'BEGIN { printf "ratio ours/theirs: wall %.2fx, cpu %.2fx\n", ow / tw, oc / tc }'
echo "medians of $rounds rounds; proposal-eval as a $source dependency; load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
