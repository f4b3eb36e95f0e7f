#!/usr/bin/env bash
# Runs on the GPU machine, from the staged .carry/ (tools/stage_gpu.sh). Writes logs and JSON
# under $OUT (at most 8 files come back: test logs go into one tests.log, failure cases into
# failures.tgz).
#   tests  the gpu suite: every test binary with --backend=gpu (default case counts)
#   long   the fuzz suite with POOLGRAD_FUZZ_CASES=${CASES:-10000} per variant
#   bench  the benchmark (JSON) and PyTorch's figures on the same GPU, same session
#          (BENCH_ARGS passes e.g. --benchmark_filter=max; SKIP_PYTORCH=1 skips PyTorch)
#   all    tests, then bench
#   conv   the conv backward-data variants alone: `poolgrad check` per conv variant, the conv
#          fuzz properties (${CONV_CASES:-1000} cases per variant and property), conv_bench (JSON)
#          and cuDNN through PyTorch on the same rows (SKIP_PYTORCH=1 skips it)
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

run_conv() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  "$here/bin/poolgrad" variants | grep -A1 "^conv\."
  for v in $("$here/bin/poolgrad" variants | awk '/^conv\./ {print $1}'); do
    "$here/bin/poolgrad" check --variant "$v" > "$out/conv_check_$v.log" 2>&1 || { status=1; echo "FAILED: check $v"; }
    grep -E "^conv\.|FAIL|replay:|passed" "$out/conv_check_$v.log" | head -n 30
  done
  POOLGRAD_FUZZ_CASES=${CONV_CASES:-1000} timeout 240 "$here/bin/fuzz_conv" --backend=gpu > "$out/fuzz_conv.log" 2>&1 ||
    { status=1; echo "FAILED: fuzz_conv"; }
  grep -E "^\[       OK|^\[  FAILED|^\[  SKIPPED|cases ran|^FAIL|replay:" "$out/fuzz_conv.log" | head -n 80
  timeout 300 "$here/bin/conv_bench" --benchmark_out="$out/conv_bench.json" --benchmark_out_format=json \
    --benchmark_min_time=0.2 ${BENCH_ARGS:-} 2>&1 | tee "$out/conv_bench.log" | grep -vE "^-+$" | tail -n 60
  [ -n "${SKIP_PYTORCH:-}" ] || timeout 120 python3 "$here/pytorch_conv_baseline.py" --out "$out/pytorch_conv.json" 2>&1 | tail -n 20
}

case "${1:-all}" in
  tests) run_tests ;;
  long) run_long ;;
  bench) run_bench ;;
  all) run_tests; run_bench ;;
  conv) run_conv ;;
  *) echo "usage: run_gpu.sh tests|long|bench|all|conv" >&2; exit 2 ;;
esac
if [ -n "$(ls -A "$failures")" ]; then tar -czf "$out/failures.tgz" -C "$failures" .; fi
exit $status
