#!/usr/bin/env bash
# Line coverage of the workspace's tests, counting what the tests reach in processes they start
# (the end-to-end tests' `cargo test` in copies of examples/payments-agent, the CLI binary, the
# tests that run themselves again). See docs/contributing.md, "Coverage".
#
#   eval "$(.ci/coverage.sh env)"   # prints the environment to export
#   cargo test --workspace           # any commands: everything cargo builds under it is instrumented
#   .ci/coverage.sh report           # prints the table; exits 1 under the threshold
#
#   .ci/coverage.sh run [COMMAND...] # the three steps in one (default: cargo test --workspace)
#
# It needs only rustup's llvm-tools component (added here when missing): rustc instruments the
# repository's crates (-C instrument-coverage, through the wrapper .ci/coverage-rustc), every
# process writes its counters (LLVM_PROFILE_FILE), llvm-profdata merges them and llvm-cov reads
# them against every binary built.
#
# The threshold (COVERAGE_MIN, default 90) applies to the lines of runtime/src, recording/src and engine/src
# together, with the report code that moved from the runtime to the CLI (cli/src/comparison/,
# cli/src/junit.rs); the table shows every file of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd -P)"

min="${COVERAGE_MIN:-90}"
# The instrumented build has a target folder of its own, so that it does not replace the plain
# build's artifacts (CI, which builds only once, points it at `target`).
target="${COVERAGE_TARGET_DIR:-$root/target/coverage}"
profiles="$target/profiles"

llvm_bin() {
  local sysroot host
  sysroot="$(rustc --print sysroot)"
  host="$(rustc -vV | sed -n 's/^host: //p')"
  echo "$sysroot/lib/rustlib/$host/bin"
}

tools() {
  local bin
  bin="$(llvm_bin)"
  if ! [ -x "$bin/llvm-cov" ]; then
    echo "coverage: adding rustup's llvm-tools component" >&2
    rustup component add llvm-tools >&2 || rustup component add llvm-tools-preview >&2
  fi
  echo "$bin"
}

env_lines() {
  tools >/dev/null
  # Counters of an earlier run would be counted again.
  rm -rf "$profiles"
  mkdir -p "$profiles"
  # %p: one file per process would be thousands of files here; %8m merges the processes of one
  # binary into at most eight files, under a lock.
  echo "export CARGO_TARGET_DIR='$target'"
  # Only the repository's own crates are instrumented (.ci/coverage-rustc): registry crates
  # build and run as fast as in a plain build.
  echo "export RUSTC_WRAPPER='$root/.ci/coverage-rustc'"
  echo "export LLVM_PROFILE_FILE='$profiles/%8m.profraw'"
  echo "export CARGO_INCREMENTAL=0"
  echo "export COVERAGE_TARGET_DIR='$target'"
}

# Every executable the run built: test binaries, the CLI, the examples' binaries, and the ones
# built in other target folders by processes the tests started (the end-to-end tests build into
# <target>/e2e, trybuild into <target>/tests).
objects() {
  find "$target" -path '*/debug/deps/*' -type f -perm -u+x ! -name '*.*' -print
  find "$target/debug" -maxdepth 1 -type f -perm -u+x ! -name '*.*' -print
}

# Lines found and lines run (LF, LH of the lcov export) of the files whose path matches $1.
line_total() {
  awk -v keep="$1" '
    /^SF:/ { counted = ($0 ~ keep) }
    counted && /^LF:/ { lines += substr($0, 4) }
    counted && /^LH:/ { hit += substr($0, 4) }
    END {
      if (lines == 0) { print "0 0 0.00"; exit }
      printf "%d %d %.2f\n", lines, lines - hit, 100 * hit / lines
    }'
}

report() {
  local bin first objs=() merged="$target/coverage.profdata"
  bin="$(tools)"
  shopt -s nullglob
  local raw=("$profiles"/*.profraw)
  if [ ${#raw[@]} -eq 0 ]; then
    echo "coverage: no counters in $profiles: run the tests under \`eval \"\$(.ci/coverage.sh env)\"\` first" >&2
    exit 2
  fi
  "$bin/llvm-profdata" merge -sparse "${raw[@]}" -o "$merged"
  while IFS= read -r f; do objs+=(-object "$f"); done < <(objects)
  first="${objs[1]}"
  # Only the workspace's own files: not the registry's, the standard library's, or the copies
  # of example crates the end-to-end tests make in the temporary folder.
  local select=("$first" "${objs[@]}" -instr-profile="$merged"
    -ignore-filename-regex='(/\.cargo/|/rustc/|/\.tmp[^/]*/|/target/)')
  echo "== line coverage, every file of the workspace ($(( ${#objs[@]} / 2 )) binaries, ${#raw[@]} counter files)"
  "$bin/llvm-cov" report "${select[@]}" -show-region-summary=false -show-branch-summary=false \
    -show-instantiation-summary=false 2>/dev/null
  read -r lines missed percent < <("$bin/llvm-cov" export "${select[@]}" -format=lcov \
    -skip-functions 2>/dev/null | line_total "^SF:$root/((runtime|recording|engine)/src/|cli/src/(comparison/|junit[.]rs))")
  echo "== line coverage of runtime/src, recording/src, engine/src and the CLI's comparison and junit: ${percent} % of ${lines} lines (${missed} not run; at least ${min} % required)"
  awk -v p="$percent" -v m="$min" 'BEGIN { exit !(p >= m) }'
}

case "${1:-}" in
  env) env_lines ;;
  report) report ;;
  run)
    shift
    [ $# -gt 0 ] || set -- cargo test --workspace
    eval "$(env_lines)"
    status=0
    "$@" || status=$?
    report || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: .ci/coverage.sh env | report | run [COMMAND...]" >&2
    exit 2
    ;;
esac
