#!/usr/bin/env bash
# Line coverage of the workspace's tests, counting what the tests reach in processes they start
# (the end-to-end tests' `cargo test` in copies of examples/payments-agent, the CLI binary, the
# tests that run themselves again). See docs/contributing.md, "Coverage".
#
#   eval "$(.ci/coverage.sh env)"   # installs what is missing, prints the environment to export
#   cargo test --workspace           # any command: everything cargo builds under it is instrumented
#   .ci/coverage.sh report           # prints the table; exits 1 under the threshold
#
#   .ci/coverage.sh run [COMMAND...] # the three steps in one (default: cargo test --workspace)
#
# The threshold (COVERAGE_MIN, default 90) applies to the lines of runtime/src and engine/src
# together; the table shows every crate of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

min="${COVERAGE_MIN:-90}"
# The end-to-end tests build copies of an example crate in the temporary folder: their objects
# bring the copies' own files, which are not the project's code.
tmp="$(dirname "$(mktemp -u)")"
copies="^${tmp%/}/"
# Only the runtime and the engine count towards the threshold.
others="${copies}|(^|/)(cli|macros|naming|fixtures|bench)/"

install() {
  if ! cargo llvm-cov --version >/dev/null 2>&1; then
    echo "coverage: installing cargo-llvm-cov" >&2
    cargo install cargo-llvm-cov --locked >&2
  fi
  if [ -z "${LLVM_COV:-}" ] && ! rustup component add llvm-tools-preview >/dev/null 2>&1; then
    # rustup could not fetch the component: Debian's llvm-22 is the LLVM rustc 1.95 is built on.
    echo "coverage: llvm-tools-preview unavailable, using Debian's llvm-22" >&2
    if ! [ -x /usr/lib/llvm-22/bin/llvm-cov ]; then
      sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
      { $sudo apt-get update -qq && $sudo apt-get install -y -qq llvm-22; } >&2
    fi
    echo "export LLVM_COV=/usr/lib/llvm-22/bin/llvm-cov"
    echo "export LLVM_PROFDATA=/usr/lib/llvm-22/bin/llvm-profdata"
  fi
}

env_lines() {
  install
  # Profiles of an earlier run would be counted again.
  cargo llvm-cov clean --profraw-only >&2
  cargo llvm-cov show-env --sh 2>/dev/null
}

# Test binaries built in other target folders by processes the tests started (the end-to-end
# tests build into <target>/e2e): cargo-llvm-cov looks only in <target>/debug and trybuild's
# folder, so they are handed to llvm-cov as extra objects.
extra_objects() {
  local target="${CARGO_LLVM_COV_TARGET_DIR:-target}" dir
  for dir in "$target"/*/debug/deps; do
    [ -d "$dir" ] || continue
    case "$dir" in "$target"/tests/*) continue ;; esac
    find "$dir" -maxdepth 1 -type f -perm -u+x ! -name '*.*' -printf ' -object=%p'
  done
}

report() {
  local objects
  # The report reads the profiles where show-env pointed the tests, wherever it is called from.
  [ -n "${CARGO_LLVM_COV_TARGET_DIR:-}" ] || eval "$(cargo llvm-cov show-env --sh 2>/dev/null)"
  objects="$(extra_objects)"
  export LLVM_COV_FLAGS="${LLVM_COV_FLAGS:-}${objects}"
  echo "== line coverage, every crate (extra objects from subprocess builds:$(echo "$objects" | wc -w))"
  cargo llvm-cov report --ignore-filename-regex "$copies"
  echo "== line coverage of runtime/src and engine/src (at least ${min} %)"
  cargo llvm-cov report --summary-only --ignore-filename-regex "$others" --fail-under-lines "$min"
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
    report
    exit "$status"
    ;;
  *)
    echo "usage: .ci/coverage.sh env | report | run [COMMAND...]" >&2
    exit 2
    ;;
esac
