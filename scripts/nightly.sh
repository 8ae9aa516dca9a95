#!/usr/bin/env bash
# The nightly job: what CI has no time for, in one command with one exit status.
#
#   bash scripts/nightly.sh [--out DIR] [--fuzz-seconds N] [--no-fuzz] [--no-regress]
#
# 1. The Release tree (scripts/setup.sh build) and the nightly regression suite against its goldens
#    (testbenches/regress/nightly.yaml: every shipped config, the NIC and each congestion control,
#    collectives, Chakra and text workloads, instruction counts): DIR/nightly.xml (JUnit),
#    DIR/nightly.json, DIR/nightly.txt; then the co-simulation of every RTL block against its model
#    and the validation rows against theory (ctest -L 'cosim|validation': DIR/ctest.xml, ctest.txt).
# 2. The fuzz tree (clang, libFuzzer) and every parser's fuzz target for N seconds (default 3600),
#    as many at once as there are cores; the corpus grows in DIR/../fuzz-corpus/<target> from night
#    to night (seeded from testbenches/fuzz/corpus). A finding (crash-, leak-, oom- or timeout-
#    file) is run again alone, without the fuzzer, in the replay program under a 10 s limit: a
#    timeout that then takes 10 s or more, and every crash, is a finding; a timeout that
#    ran in time was the machine's load (said, not counted). Logs: DIR/fuzz-<target>.log.
#
# Exit status: 0 all green; 1 a regression or a fuzz finding (each listed at the end, with the file
# that reproduces it: build-fuzz/testbenches/fuzz/fuzz_<target> FILE); 2 bad arguments.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/out/nightly/$(date -u +%Y-%m-%d)"
FUZZ_SECONDS=3600
DO_FUZZ=1
DO_REGRESS=1
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="${2:?--out needs a folder}"; shift 2 ;;
    --fuzz-seconds)
      FUZZ_SECONDS="${2:-}"
      [[ "$FUZZ_SECONDS" =~ ^[1-9][0-9]{0,5}$ ]] || {
        echo "nightly.sh: --fuzz-seconds '${2:-}': expected a whole number of seconds, 1 to 999999" >&2
        exit 2
      }
      shift 2 ;;
    --no-fuzz) DO_FUZZ=0; shift ;;
    --no-regress) DO_REGRESS=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "nightly.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT" || { echo "nightly.sh: --out $OUT: cannot create it" >&2; exit 2; }
OUT="$(cd "$OUT" && pwd)"
BUILD="${FABRICSIM_BUILD_DIR:-$ROOT/build}"
FUZZ_BUILD="${FABRICSIM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${FABRICSIM_JOBS:-$(nproc)}"
TARGETS=(config trace messages workload_text chakra)
failures=()

if [ "$DO_REGRESS" = 1 ]; then
  FABRICSIM_JOBS="$JOBS" bash "$ROOT/scripts/setup.sh" build || exit 1
  echo "nightly: regression suite (testbenches/regress/nightly.yaml)"
  "$BUILD/fabricsim" regress "$ROOT/testbenches/regress/nightly.yaml" -j "$JOBS" \
    --junit "$OUT/nightly.xml" --json "$OUT/nightly.json" > "$OUT/nightly.txt" 2>&1
  rc=$?
  tail -n 1 "$OUT/nightly.txt"
  [ "$rc" = 0 ] || failures+=("regression suite exited $rc: $OUT/nightly.txt")
  echo "nightly: co-simulation of every RTL block and the validation rows (ctest -L cosim|validation)"
  ctest --test-dir "$BUILD" -j "$JOBS" -L '^(cosim|validation)$' --output-on-failure \
    --output-junit "$OUT/ctest.xml" > "$OUT/ctest.txt" 2>&1
  rc=$?
  grep -E "tests passed|tests failed" "$OUT/ctest.txt" | tail -n 1
  [ "$rc" = 0 ] || failures+=("ctest -L cosim|validation exited $rc: $OUT/ctest.txt")
fi

if [ "$DO_FUZZ" = 1 ]; then
  cmake -S "$ROOT" -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFABRICSIM_FUZZ=ON \
    -DCMAKE_CXX_COMPILER=clang++-14 -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null || exit 1
  build_targets=()
  for t in "${TARGETS[@]}"; do build_targets+=("fuzz_$t" "fuzz_${t}_replay"); done
  cmake --build "$FUZZ_BUILD" -j "$JOBS" --target "${build_targets[@]}" || exit 1
  CORPUS="$(dirname "$OUT")/fuzz-corpus"
  echo "nightly: fuzzing ${TARGETS[*]} for ${FUZZ_SECONDS} s each, $JOBS at a time"
  running=0
  for t in "${TARGETS[@]}"; do
    mkdir -p "$CORPUS/$t" "$OUT/fuzz-$t"
    ASAN_OPTIONS=detect_leaks=1 "$FUZZ_BUILD/testbenches/fuzz/fuzz_$t" \
      -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
      -print_final_stats=1 -artifact_prefix="$OUT/fuzz-$t/" "$CORPUS/$t" \
      "$ROOT/testbenches/fuzz/corpus/$t" "$ROOT/testbenches/fuzz/regressions/$t" \
      > "$OUT/fuzz-$t.log" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
  for t in "${TARGETS[@]}"; do
    execs=$(grep -o 'number_of_executed_units: [0-9]*' "$OUT/fuzz-$t.log" | tail -n 1)
    echo "  fuzz_$t: ${execs:-no stats (see $OUT/fuzz-$t.log)}"
    for f in "$OUT/fuzz-$t"/*; do
      [ -e "$f" ] || continue
      case "$(basename "$f")" in
        slow-unit-*) continue ;;  # slow, not failing: libFuzzer's note
        timeout-*)
          if timeout 10 "$FUZZ_BUILD/testbenches/fuzz/fuzz_${t}_replay" "$f" >/dev/null 2>&1; then
            echo "  fuzz_$t: $(basename "$f") runs in time alone (the machine's load): not a finding"
            continue
          fi ;;
      esac
      failures+=("fuzz_$t found $f")
    done
  done
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "nightly: ${#failures[@]} problem(s):"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "nightly: all green ($OUT)"
