#!/usr/bin/env bash
# Runs on the GPU machine, from the staged .carry/ (tools/stage_gpu.sh). Writes logs and JSON
# under $OUT (at most 8 files come back: test logs go into one tests.log, failure cases into
# failures.tgz).
#   tests  the gpu suite: every test binary with --backend=gpu (default case counts)
#   long   the fuzz suite with POOLGRAD_FUZZ_CASES=${CASES:-10000} per variant
#   bench  the benchmark (JSON) and PyTorch's figures on the same GPU, same session
#          (BENCH_ARGS passes e.g. --benchmark_filter=max; SKIP_PYTORCH=1 skips PyTorch)
#   all    tests, then bench
#   scale  tensors past 2^31 elements (tests/scale_test.cpp): max and avg, every variant that
#          reads dy or stored indices, f16, 130 planes and one 1D plane past 2^31; ~95 GB host
#          (FILTER=Scale.MaxOnePlane* runs one of the four problems, to stay within a call's limit)
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck and synccheck over every gpu test
#          binary (TOOLS picks some, e.g. TOOLS=racecheck; the fuzz properties run CASES=10 cases
#          each; each binary is stopped after LIMIT=150 s and reported as exit 124)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/bins.tar.xz" ] && { tar -C "$here" -xJf "$here/bins.tar.xz" && rm "$here/bins.tar.xz"; }
export LD_LIBRARY_PATH=$here/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/poolgrad-out}
mkdir -p "$out"
failures=$(mktemp -d)
export POOLGRAD_FAILURE_DIR=$failures
status=0

run_tests() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  "$here/bin/poolgrad" devices
  "$here/bin/poolgrad" check > "$out/check.log" 2>&1 || status=1
  tail -n 40 "$out/check.log"
  for t in "$here"/bin/*_tests "$here/bin/fuzz_variants"; do
    echo "=== $(basename "$t") --backend=gpu" >> "$out/tests.log"
    POOLGRAD_FUZZ_DEFAULT=1000 "$t" --backend=gpu >> "$out/tests.log" 2>&1 || { status=1; echo "FAILED: $t"; }
  done
  grep -E "^=== |^\[  (PASSED|FAILED)|^\[  SKIPPED|FAILED  \]" "$out/tests.log"
}

run_long() {
  POOLGRAD_FUZZ_CASES=${CASES:-10000} "$here/bin/fuzz_variants" --backend=gpu > "$out/fuzz_long.log" 2>&1 || { status=1; echo "FAILED: long fuzz"; }
  grep -E "^\[       OK|FAILED|cases ran|FAIL:" "$out/fuzz_long.log" | tail -n 80
}

run_bench() {
  "$here/bin/pool_bench" --benchmark_out="$out/pool_bench.json" --benchmark_out_format=json \
    --benchmark_min_time=0.2 ${BENCH_ARGS:-} 2>&1 | tee "$out/pool_bench.log" | grep -vE "^-+$" | tail -n 120
  [ -n "${SKIP_PYTORCH:-}" ] || python3 "$here/pytorch_baseline.py" --out "$out/pytorch.json" 2>&1 | tail -n 20
}

run_scale() {
  POOLGRAD_SCALE=1 "$here/bin/scale_tests" --backend=gpu ${FILTER:+--gtest_filter=$FILTER} > "$out/scale.log" 2>&1 ||
    { status=1; echo "FAILED: scale"; }
  grep -E "^scale:|OK \]|FAILED|SKIPPED|Failure" "$out/scale.log"
  free -g | head -2
}

run_sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1 || true)
  [ -n "$cs" ] || { echo "compute-sanitizer not found"; status=1; return; }
  for tool in ${TOOLS:-memcheck racecheck initcheck synccheck}; do
    for t in "$here"/bin/*_tests "$here/bin/fuzz_variants"; do
      [ "$(basename "$t")" = scale_tests ] && continue
      echo "=== $tool $(basename "$t")" >> "$out/sanitize.log"
      local start=$SECONDS
      POOLGRAD_FUZZ_CASES=${CASES:-10} timeout "${LIMIT:-150}" "$cs" --tool "$tool" --error-exitcode 97 \
        --print-limit 20 "$t" --backend=gpu >> "$out/sanitize.log" 2>&1
      local rc=$?
      # 97: the tool found errors; 124: stopped at LIMIT seconds (raise it, or run one TOOLS at a time).
      echo "$tool $(basename "$t"): exit $rc in $((SECONDS - start)) s"
      [ $rc -eq 0 ] || status=1
    done
  done
  grep -E "ERROR SUMMARY|========= (Invalid|Race|Uninitialized|Barrier)" "$out/sanitize.log" | sort | uniq -c | head -n 40
}

case "${1:-all}" in
  tests) run_tests ;;
  long) run_long ;;
  bench) run_bench ;;
  all) run_tests; run_bench ;;
  scale) run_scale ;;
  sanitize) run_sanitize ;;
  *) echo "usage: run_gpu.sh tests|long|bench|all|scale|sanitize" >&2; exit 2 ;;
esac
if [ -n "$(ls -A "$failures")" ]; then tar -czf "$out/failures.tgz" -C "$failures" .; fi
exit $status
