#!/usr/bin/env bash
# Fuzzes every parser that reads a user's file, one target after the other.
#
#   fuzz/run.sh [--quick] [SECONDS] [TARGET...]
#
# SECONDS per target (default 300); TARGET among path, fixture, config, recording, dates, redact
# (default: all). `--quick`, what CI runs, builds without optimizations and without
# AddressSanitizer: a third of the build time, for slower runs, with plain cargo. The full build
# needs cargo-fuzz (`cargo install cargo-fuzz`), and uses the nightly toolchain when it is
# installed.
#
# Each target's corpus is seeded, at every run, from the repository's own files (fixtures,
# recordings, proposal-eval.toml files, the paths and date formats written in them) plus the
# small hand-written inputs in fuzz/seeds/; what libFuzzer finds on the way stays in
# fuzz/corpus/ (ignored by git), so a later run goes on from there. A crash stops that target,
# leaves its input in fuzz/artifacts/<target>/, and makes the script exit non-zero after the
# other targets have run.
set -euo pipefail

build=()
profile=release
if [ "${1:-}" = --quick ]; then
  build=(--dev --sanitizer none)
  profile=debug
  shift
fi
seconds=${1:-300}
shift || true
cd "$(dirname "$0")"
repo=$(cd .. && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(path fixture config recording dates redact)

# Every file of the repository with this name pattern, outside build output and fuzz/ itself.
repo_files() {
  find "$repo" \( -name target -o -name fuzz -o -name .git -o -name node_modules \
    -o -name generated \) -prune \
    -o -type f -name "$1" -print
}

# Copies files into a corpus, named by content so a file seeded twice is kept once.
add() {
  local dir=$1 f
  while IFS= read -r f; do
    cp "$f" "$dir/seed-$(sha1sum <"$f" | cut -c1-16)"
  done
}

# Adds each line of stdin as one corpus entry.
add_lines() {
  local dir=$1 line
  while IFS= read -r line; do
    printf '%s' "$line" >"$dir/seed-$(printf '%s' "$line" | sha1sum | cut -c1-16)"
  done
}

# The strings of the TOML lines whose key matches $1, one per line.
toml_strings() {
  repo_files proposal-eval.toml | { xargs -r grep -hE "^\s*($1)\s*=" || true; } |
    { grep -oE '"[^"]*"' || true; } | tr -d '"' | sort -u
}

seed() {
  local target=$1 dir=corpus/$1
  mkdir -p "$dir"
  case $target in
    path) toml_strings 'ignore_paths|ignore_request_paths|redact|path|apply_to|discriminator' |
      add_lines "$dir" ;;
    fixture) repo_files '*.json' | { grep -v '/recordings/' || true; } | add "$dir" ;;
    config) repo_files proposal-eval.toml | add "$dir" ;;
    recording) repo_files '*.json' | { grep '/recordings/' || true; } | add "$dir" ;;
    dates) toml_strings formats | add_lines "$dir" ;;
    # The query strings recorded in the repository's recordings (the seeds carry the rest).
    redact) repo_files '*.json' | { grep '/recordings/' || true; } |
      { xargs -r grep -hoE '"query": *"[^"]*"' || true; } | sed -E 's/^"query": *"(.*)"$/\1/' |
      sort -u | add_lines "$dir" ;;
    *) echo "unknown target $target (path, fixture, config, recording, dates, redact)" >&2; exit 2 ;;
  esac
}

# One build for every target, run straight from target/ (as `cargo fuzz run` does, without
# rebuilding before each target): all targets fuzz the same code even while the tree changes.
# The quick build runs on stable, as CI does where no other toolchain can be fetched; libFuzzer's
# flags are nightly-only, which RUSTC_BOOTSTRAP=1 allows. The full build prefers nightly (its
# sanitizer runtime) and falls back to the same.
toolchain=+nightly
if [ ${#build[@]} -gt 0 ] || ! rustup run nightly rustc -V >/dev/null 2>&1; then
  toolchain=+stable
  export RUSTC_BOOTSTRAP=1
fi
host=$(rustc "$toolchain" -vV | sed -n 's/^host: //p')
if [ ${#build[@]} -gt 0 ]; then
  # The quick build is plain cargo with the flags `cargo fuzz build --dev --sanitizer none`
  # passes (cargo-fuzz's src/project.rs): no cargo-fuzz to install, which on CI's two cores
  # took about 90 s. The target triple keeps the flags off build scripts, as cargo-fuzz does.
  flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
  flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
  flags+=" -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares"
  flags+=" -Cllvm-args=-simplifycfg-branch-fold-threshold=0 --cfg fuzzing -Clink-dead-code"
  [[ $host == *-linux-* ]] && flags+=" -Cllvm-args=-sanitizer-coverage-stack-depth"
  flags+=" -Cdebug-assertions"
  RUSTFLAGS="$flags ${RUSTFLAGS:-}" CARGO_FUZZ=1 CARGO_FUZZ_MANIFEST="$PWD/Cargo.toml" \
    cargo "$toolchain" build --manifest-path Cargo.toml --target "$host" --bins
else
  cargo "$toolchain" fuzz build "${build[@]}"
fi
bin=target/$host/$profile

failed=()
for target in "${targets[@]}"; do
  seed "$target"
  mkdir -p "artifacts/$target"
  corpora=("corpus/$target")
  [ -d "seeds/$target" ] && corpora+=("seeds/$target")
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="artifacts/$target/")
  [ -f "$target.dict" ] && options+=(-dict="$target.dict")
  echo "== fuzz $target for ${seconds}s"
  if ! "$bin/$target" "${options[@]}" "${corpora[@]}"; then
    failed+=("$target")
  fi
done
# The recording target's scratch files (only when it ran here: another run.sh may be using them).
if [[ " ${targets[*]} " == *" recording "* ]]; then
  rm -f /dev/shm/proposal-eval-fuzz-recording-*.json "${TMPDIR:-/tmp}"/proposal-eval-fuzz-recording-*.json
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found crashes in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
