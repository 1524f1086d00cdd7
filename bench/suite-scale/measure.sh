#!/usr/bin/env bash
# Times whole test-binary runs of ours and theirs over one generated suite, alternating them
# round by round so load from other processes hits both alike.
#
#   ./measure.sh ROUNDS SHAPE SUITE [extra test-binary args...]
#   SHAPE: model (tests/ours.rs vs tests/theirs.rs) or no-model (tests/ours_no_model.rs vs
#          tests/theirs_no_model.rs); SUITE: a generated suite folder, crate-relative.
#   SHAPE rubric: tests/ours_rubric.rs on SUITE (generated with `rubric`) against tests/ours.rs on
#          STRICT_SUITE (the same count generated with `model`: the same cases without the
#          rubric), each binary copied into a target folder of its own so that each has a report
#          of its own suite only (the report folder is the binary's `target/proposal-eval`).
#
# ONE=N runs only case N (`--exact NAME`, each side with its own test name); with NEXTEST=1 too,
# as nextest runs a test (its variables, `--nocapture`, one process per test).
#
# BEFORE_TARGET=DIR adds a third binary, `before`: the same test target as built in another target
# folder (another tree of this crate, say the commit before a change), alternated with the other
# two, so before, after and datatest-stable share one run's load.
#
# Each run goes through /usr/bin/time: one line per binary with the median, min and max wall
# seconds, the median CPU seconds (user + system) and the median and max peak RSS (MB).
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-7}; shape=${2:-model}; suite=${3:-generated/suite5k}; shift 3 || shift $#
case $shape in
  model) ours_t=ours; theirs_t=theirs ;;
  no-model) ours_t=ours_no_model; theirs_t=theirs_no_model ;;
  rubric) ours_t=ours_rubric; theirs_t=ours
    [ -f "${STRICT_SUITE:-}/proposal-eval.toml" ] || { echo "rubric: set STRICT_SUITE to the model-shape suite of the same count" >&2; exit 2; } ;;
  *) echo "shape: model, no-model or rubric" >&2; exit 2 ;;
esac
[ -f "$suite/proposal-eval.toml" ] || { echo "no suite at $suite (generate it first)" >&2; exit 2; }
cargo build --release --tests -q -p suite-scale-bench
bin() { # the newest test binary of a target, as cargo prints it
  cargo test --release -p suite-scale-bench --no-run --message-format=json --test "$1" -q 2>/dev/null |
    grep -o '"executable":"[^"]*/deps/'"$1"'-[^"]*"' | tail -1 | cut -d'"' -f4
}
ours=$(bin "$ours_t"); theirs=$(bin "$theirs_t")
names=(ours theirs)
declare -A suite_of=([ours]=$suite [theirs]=$suite [before]=$suite)
if [ "$shape" = rubric ]; then
  suite_of[theirs]=$STRICT_SUITE
  for name in ours theirs; do
    dir=$CARGO_TARGET_DIR/rubric-bench/$name/release/deps
    rm -rf "$CARGO_TARGET_DIR/rubric-bench/$name/proposal-eval"
    mkdir -p "$dir"
    cp "${!name}" "$dir/"
    printf -v "$name" '%s/%s' "$dir" "$(basename "${!name}")"
  done
fi
if [ -n "${BEFORE_TARGET:-}" ]; then
  before=$(ls -t "$BEFORE_TARGET"/release/deps/"$ours_t"-* | grep -v '\.d$' | head -1)
  rm -rf "$BEFORE_TARGET/proposal-eval"
  names=(ours before theirs)
fi
# Entries of another suite of the same test binary would stand in its report and be rebuilt
# with it: each measurement starts from an empty report.
rm -rf "$CARGO_TARGET_DIR/proposal-eval"
# What cargo test sets; the harness resolves the suite and keys its report entries by them.
export CARGO_MANIFEST_DIR=$PWD CARGO_PKG_NAME=suite-scale-bench
declare -A runs
declare -a ours_args theirs_args before_args
[ -n "${ONE:-}" ] && [ "$shape" = rubric ] && { echo "ONE: model or no-model only" >&2; exit 2; }
if [ -n "${ONE:-}" ]; then
  case_path=$(printf 'cases/g%02d/case_%05d' $((ONE / 100)) "$ONE")
  folder=$(basename "$suite" | sed 's/[^A-Za-z0-9_]/_/g')
  ours_args=(--exact "$folder::${case_path//\//::}")
  before_args=("${ours_args[@]}")
  theirs_args=(--exact "strict_case::$case_path.json")
  if [ -n "${NEXTEST:-}" ]; then
    export NEXTEST=1 NEXTEST_RUN_ID=00000000-0000-4000-8000-$(printf '%012d' $$) NEXTEST_EXECUTION_MODE=process-per-test
    ours_args+=(--nocapture); theirs_args+=(--nocapture); before_args+=(--nocapture)
  fi
fi
for name in "${names[@]}"; do
  a="${name}_args[@]"
  BENCH_SUITE=${suite_of[$name]} "${!name}" -q "$@" "${!a}" >/dev/null 2>&1 || { echo "$name failed"; exit 1; }  # warm the page cache
done
stats=$(mktemp)
for ((r = 0; r < rounds; r++)); do
  for name in "${names[@]}"; do
    a="${name}_args[@]"
    start=$EPOCHREALTIME
    BENCH_SUITE=${suite_of[$name]} /usr/bin/time -o "$stats" -f "%U %S %M" "${!name}" -q "$@" "${!a}" >/dev/null 2>&1
    end=$EPOCHREALTIME
    # Wall time from bash's microsecond clock (time's %e has 10 ms steps).
    wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f", e - s }')
    runs[$name]+="$wall $(cat "$stats");"
  done
done
rm -f "$stats"
for name in "${names[@]}"; do
  echo "${runs[$name]}" | tr ';' '\n' | grep . | awk -v n="$name" -v s="$shape ${suite_of[$name]} $* ${ONE:+one case}${NEXTEST:+ (nextest)}" '
    { wall[NR] = $1; cpu[NR] = $2 + $3; rss[NR] = $4 / 1024 }
    function median(a, k, i, j, t) { # sorts a copy of a[1..NR]
      for (i = 1; i <= NR; i++) k[i] = a[i]
      for (i = 2; i <= NR; i++) for (j = i; j > 1 && k[j - 1] > k[j]; j--) { t = k[j]; k[j] = k[j - 1]; k[j - 1] = t }
      lo = k[1]; hi = k[NR]; return k[int((NR + 1) / 2)]
    }
    END {
      w = median(wall); wmin = lo; wmax = hi; c = median(cpu); r = median(rss); rmax = hi
      printf "%-7s %-32s wall median %.4f s (min %.4f, max %.4f)  cpu %.3f s  peak RSS %.0f MB (max %.0f)  [%d runs]\n",
        n, s, w, wmin, wmax, c, r, rmax, NR
    }'
done
# Each round's ours / theirs (and with BEFORE_TARGET, before / theirs and ours / before), so a
# slow stretch of the machine, which both sides of a round share, leaves the ratio alone: the
# median and quartiles over the rounds (CPU in /usr/bin/time's 10 ms steps).
ratio() {
  paste -d' ' <(echo "${runs[$1]}" | tr ';' '\n' | grep .) <(echo "${runs[$2]}" | tr ';' '\n' | grep .) |
    awk -v label="$1 / $2" '{ w[NR] = $1 / $5; c[NR] = ($2 + $3) / ($6 + $7 > 0 ? $6 + $7 : 0.01) }
      function q(a, p, k, i, j, t) {
        for (i = 1; i <= NR; i++) k[i] = a[i]
        for (i = 2; i <= NR; i++) for (j = i; j > 1 && k[j - 1] > k[j]; j--) { t = k[j]; k[j] = k[j - 1]; k[j - 1] = t }
        return k[int((NR - 1) * p + 1.5)]
      }
      END { printf "%s, per round: wall %.3fx (quartiles %.3f-%.3f)  cpu %.3fx (quartiles %.3f-%.3f)\n", label,
        q(w, 0.5), q(w, 0.25), q(w, 0.75), q(c, 0.5), q(c, 0.25), q(c, 0.75) }'
}
ratio ours theirs
if [ -n "${BEFORE_TARGET:-}" ]; then
  ratio before theirs
  ratio ours before
fi
