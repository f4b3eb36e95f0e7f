#!/usr/bin/env bash
# Runs on the GPU machine, from the staged .carry/ (tools/stage_gpu.sh). Writes logs and JSON
# under $OUT (at most 8 files come back: test logs go into one tests.log, failure cases into
# failures.tgz).
#   tests  the gpu suite: every test binary with --backend=gpu (default case counts)
#   long   the fuzz suite with POOLGRAD_FUZZ_CASES=${CASES:-10000} per variant
#   bench  the benchmark (JSON) and PyTorch's figures on the same GPU, same session
#          (BENCH_ARGS passes e.g. --benchmark_filter=max; SKIP_PYTORCH=1 skips PyTorch)
#   networks  `poolgrad bench --suite networks` (deterministic variants: the atomic scatter ones
#          lost every row of every earlier H100 run), PyTorch on the same rows in the same
#          session, then `poolgrad select` on the report (MIN_TIME sets seconds per benchmark;
#          benchmarks not started within MAX_SECONDS, default 420, are skipped and named, so the
#          whole mode stays under 9 minutes)
#   campaign  `poolgrad fuzz` for ${MINUTES:-5} minutes over every variant on the GPU and CPU
#          backends (BACKEND=all|gpu|cpu, JOBS, SEED): campaign.json, campaign.log, the case files
#          of any failure in cases.tgz
#   pace   the GPU fuzz pace, old and new binaries in one session: with OLD=path/to/an/older/poolgrad,
#          a ${SECONDS_GPU:-60} s `--backend gpu` campaign of each (old first), then a
#          ${SECONDS_ALL:-60} s `--backend all` campaign of each (its CPU lanes must not slow down);
#          --phases tables where the binary has them; BATCHES="1 16" adds a new --backend gpu
#          campaign per --batch value; pace_{old,new}_{gpu,all}.json/.log and the case files of
#          any failure in pace.tgz
#   all    tests, then bench
#   scale  tensors past 2^31 elements (tests/scale_test.cpp): max and avg, every variant that
#          reads dy or stored indices, f16, 130 planes and one 1D plane past 2^31; ~95 GB host
#          (FILTER=Scale.MaxOnePlane* runs one of the four problems, to stay within a call's limit)
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck and synccheck over every gpu test
#          binary, fuzz_conv included (BINS=REGEX picks binaries by name) (TOOLS picks some, e.g. TOOLS=racecheck; the fuzz properties run CASES=10 cases
#          each; each binary is stopped after LIMIT=150 s and reported as exit 124)
#   conv   the conv backward-data variants alone: `poolgrad check` per conv variant, the conv
#          fuzz properties (${CONV_CASES:-1000} cases per variant and property), conv_bench (JSON)
#          and cuDNN through PyTorch on the same rows (SKIP_PYTORCH=1 skips it)
#   cudnn  the cuDNN variant family (src/harness/cudnn_pool.cpp; libcudnn from POOLGRAD_CUDNN,
#          LD_LIBRARY_PATH or PyTorch's wheel): registered or why not, `poolgrad check -v` per
#          variant, the fuzz property with ${CASES:-10000} GPU cases per variant, and the baseline
#          suite timed for the cuDNN and poolgrad's gather/direct variants (cudnn_bench.json)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/bins.tar.xz" ] && { tar -C "$here" -xJf "$here/bins.tar.xz" && rm "$here/bins.tar.xz"; }
export LD_LIBRARY_PATH=$here/lib:${LD_LIBRARY_PATH:-}
export POOLGRAD_CORPUS=$here/../fuzz/corpus  # corpus_tests replays the committed cases
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

run_campaign() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  echo "host: $(nproc) cores"
  local jobs=()
  [ -n "${JOBS:-}" ] && jobs=(--jobs "$JOBS")
  "$here/bin/poolgrad" fuzz --minutes "${MINUTES:-5}" --backend "${BACKEND:-all}" --seed "${SEED:-20261123}" \
    ${jobs[@]+"${jobs[@]}"} --corpus "$out/cases" --report "$out/campaign.json" > "$out/campaign.log" 2>&1 || status=$?
  tail -n 70 "$out/campaign.log"
  [ -f "$out/campaign.json" ] && python3 - "$out/campaign.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for lane in r["lanes"]:
    by[lane["backend"]] = by.get(lane["backend"], 0) + lane["cases"]
print("cases/s by backend:", ", ".join(f"{b} {n / r['elapsed_s']:.0f}" for b, n in by.items()),
      f"| total {r['cases_per_s']:.0f} over {r['elapsed_s']:.0f} s, {r['jobs']} jobs")
PY
  if [ -d "$out/cases" ]; then tar -czf "$out/cases.tgz" -C "$out" cases && rm -rf "$out/cases"; fi
}

run_bench() {
  "$here/bin/pool_bench" --benchmark_out="$out/pool_bench.json" --benchmark_out_format=json \
    --benchmark_min_time=0.2 ${BENCH_ARGS:-} 2>&1 | tee "$out/pool_bench.log" | grep -vE "^-+$" | tail -n 120
  "$here/bin/poolgrad" bench --suite baseline --list --json > "$out/baseline_rows.json"
  [ -n "${SKIP_PYTORCH:-}" ] || python3 "$here/pytorch_baseline.py" --rows "$out/baseline_rows.json" \
    --out "$out/pytorch.json" 2>&1 | tail -n 20
}

run_networks() {
  local start=$SECONDS rows
  rows=$(mktemp)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$here/bin/poolgrad" bench --suite networks --list --json > "$rows"
  "$here/bin/poolgrad" bench --suite networks --variants '^(max|avg)\.(gather|direct)' \
    --min-time "${MIN_TIME:-0.05}" --max-seconds "${MAX_SECONDS:-420}" --out "$out/networks.json" > /dev/null 2> "$out/networks.log" || status=1
  grep -vE "^\[[0-9]+/[0-9]+\] .*ms, " "$out/networks.log" | tail -n 20
  echo "poolgrad bench: $((SECONDS - start)) s, $(grep -c 'time budget' "$out/networks.log") benchmarks skipped by MAX_SECONDS"
  python3 "$here/pytorch_baseline.py" --rows "$rows" --out "$out/networks_pytorch.json" \
    > "$out/networks_pytorch.log" 2>&1 || { status=1; tail -n 20 "$out/networks_pytorch.log"; }
  echo "pytorch: $((SECONDS - start)) s"
  "$here/bin/poolgrad" select "$out/networks.json" --out "$out/networks_selection.json" | tee "$out/networks_select.txt" | tail -n 60
}

# Kernel selection's data and checks (issue 23). PART=networks: the networks suite, every variant
# (atomic ones included); PART=rest: the baseline suite, bench/suites/unseen.rows and the cuDNN
# comparator rows (bench/suites/cudnn.rows), every variant; PART=coverage: bench/suites/coverage.rows,
# every variant; PART=check: see selection_check below.
# The perf-db is $OUT's, never the machine's.
run_selection() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  export POOLGRAD_PERFDB=$out/perfdb.json
  local p=$here/bin/poolgrad suites=$here/../bench/suites start=$SECONDS
  case "${PART:-}" in
    networks)
      "$p" bench --suite networks --min-time "${MIN_TIME:-0.02}" --max-seconds "${MAX_SECONDS:-530}" \
        --out "$out/networks.json" > /dev/null 2> "$out/networks.log" || status=1
      grep -vE "^\[[0-9]+/[0-9]+\] .*ms, " "$out/networks.log" | grep -v "^row done" | tail -n 20 ;;
    rest)
      local s
      for s in baseline unseen cudnn; do
        local src=(--suite baseline)
        [ "$s" = baseline ] || src=(--rows "$suites/$s.rows")
        "$p" bench "${src[@]}" --min-time "${MIN_TIME:-0.02}" --max-seconds "${MAX_SECONDS:-170}" \
          --out "$out/$s.json" > /dev/null 2> "$out/$s.log" || status=1
        grep -vE "^\[[0-9]+/[0-9]+\] .*ms, " "$out/$s.log" | grep -v "^row done" | tail -n 8
        echo "$s: $((SECONDS - start)) s, $(grep -c 'time budget' "$out/$s.log") benchmarks skipped by MAX_SECONDS"
      done ;;
    coverage)
      "$p" bench --rows "$suites/coverage.rows" --min-time "${MIN_TIME:-0.02}" --max-seconds "${MAX_SECONDS:-500}" \
        --out "$out/coverage.json" > /dev/null 2> "$out/coverage.log" || status=1
      grep -vE "^\[[0-9]+/[0-9]+\] .*ms, " "$out/coverage.log" | grep -v "^row done" | tail -n 8
      echo "coverage: $(grep -c 'time budget' "$out/coverage.log") benchmarks skipped by MAX_SECONDS" ;;
    check) selection_check ;;
    compare) selection_compare ;;
    *) echo "PART must be networks, rest, coverage, check or compare" >&2; status=2 ;;
  esac
  echo "selection $PART: $((SECONDS - start)) s"
}

# The checks of kernel selection, one session: (1) the networks suite, the contenders of the committed
# networks report and auto's pick, then what auto picks against each row's fastest; (2) the held-out
# rows (bench/suites/fresh.rows), every variant, and auto's pick with the built-in table alone;
# (3) `bench --variant auto --tune` on them, then auto's pick again (now the perf-db's); CHECK picks
# some of networks, fresh and tune; CONTENDERS names the networks report in bench/results whose
# contenders are timed (default: the H100's). PART=compare:
# `poolgrad compare` on two runs of the same binary (9 repetitions), then on one with a planted 20%
# slowdown.
selection_check() {
  local p=$here/bin/poolgrad suites=$here/../bench/suites res=$here/../bench/results empty=$out/empty-perfdb.json
  local parts=" ${CHECK:-networks fresh tune} "
  if [[ $parts == *" networks "* ]]; then
  "$p" bench --suite networks --contenders "$res/${CONTENDERS:-2026-11-24_h100_selection_networks.json}" --perfdb "$empty" \
    --min-time "${MIN_TIME:-0.02}" --max-seconds 300 --out "$out/check_networks.json" > /dev/null 2> "$out/check_networks.log" || status=1
  "$p" select --holdout "$out/check_networks.json" --perfdb "$empty" > "$out/check_networks.txt" 2>&1 || status=1
  tail -n 2 "$out/check_networks.txt"; echo "networks: $((SECONDS - start)) s"
  fi
  if [[ $parts == *" fresh "* ]]; then
  "$p" bench --rows "$suites/fresh.rows" --min-time 0.02 --max-seconds 150 --out "$out/fresh.json" \
    > /dev/null 2> "$out/fresh.log" || status=1
  "$p" select --holdout "$out/fresh.json" --perfdb "$empty" > "$out/fresh_builtin.txt" 2>&1 || status=1
  tail -n 2 "$out/fresh_builtin.txt"; echo "fresh: $((SECONDS - start)) s"
  fi
  if [[ $parts == *" tune "* ]]; then
  "$p" bench --rows "$suites/fresh.rows" --variant auto --tune --perfdb "$out/perfdb.json" --min-time 0.05 \
    --out "$out/fresh_tuned_auto.json" > /dev/null 2> "$out/fresh_tune.log" || status=1
  "$p" select --holdout "$out/fresh.json" --perfdb "$out/perfdb.json" > "$out/fresh_tuned.txt" 2>&1 || status=1
  tail -n 2 "$out/fresh_tuned.txt"; echo "tune: $((SECONDS - start)) s"
  fi
}

selection_compare() {
  local p=$here/bin/poolgrad
  local cmp=(--suite baseline --variants '^(max\.gather\.fixed\.cf|avg\.gather\.box3|avg\.direct\.exact\.cf)$'
             --repetitions 9 --min-time 0.02)
  "$p" bench "${cmp[@]}" --out "$out/compare_a.json" > /dev/null 2> "$out/compare_a.log" || status=1
  "$p" bench "${cmp[@]}" --out "$out/compare_b.json" > /dev/null 2> "$out/compare_b.log" || status=1
  "$p" compare "$out/compare_a.json" "$out/compare_b.json" > "$out/compare_same.txt"; echo "compare, same binary: exit $?"
  python3 "$here/plant_slowdown.py" "$out/compare_b.json" max.gather.fixed.cf 1.2 "$out/compare_planted.json"
  "$p" compare "$out/compare_a.json" "$out/compare_planted.json" > "$out/compare_planted.txt"
  echo "compare, planted 20%: exit $?"; head -n 8 "$out/compare_planted.txt"; tail -n 3 "$out/compare_planted.txt"
  tail -n 3 "$out/compare_same.txt"
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
    for t in "$here"/bin/*_tests "$here/bin/fuzz_variants" "$here/bin/fuzz_conv"; do
      [ "$(basename "$t")" = scale_tests ] && continue
      [[ "$(basename "$t")" =~ ${BINS:-.} ]] || continue
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

run_cudnn() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  "$here/bin/poolgrad" variants | grep -A1 -E "^cudnn\.|^absent:"
  for v in $("$here/bin/poolgrad" variants | awk '/^cudnn\./ {print $1}'); do
    "$here/bin/poolgrad" check -v --variant "$v" > "$out/cudnn_check_$v.log" 2>&1 || { status=1; echo "FAILED: check $v"; }
    grep -E "^cudnn\.|FAIL|replay:|passed" "$out/cudnn_check_$v.log" | head -n 30
  done
  POOLGRAD_VENDOR=1 POOLGRAD_FUZZ_CASES=${CASES:-10000} timeout 300 "$here/bin/fuzz_variants" --backend=gpu --gtest_filter='*cudnn_*' \
    > "$out/cudnn_fuzz.log" 2>&1 || { status=1; echo "FAILED: cudnn fuzz"; }
  grep -E "^\[       OK|^\[  FAILED|cases ran|^FAIL|replay:" "$out/cudnn_fuzz.log" | head -n 40
  # The baseline rows are pytorch-profile problems (NaN propagates), which cudnn.max does not
  # take: the cuDNN family is timed on problems of the cudnn profile, beside every own variant
  # that takes them.
  local rows=("--op max_pool2d --input-size 64,64,112,112 --kernel-size 3 --stride 2 --padding 1"
              "--op max_pool2d --input-size 64,64,112,112 --kernel-size 3 --stride 2 --padding 1 --layout NHWC"
              "--op avg_pool2d --input-size 64,128,56,56 --kernel-size 3 --stride 1 --padding 1 --count-include-pad false"
              "--op avg_pool2d --input-size 64,128,56,56 --kernel-size 2 --stride 2"
              "--op max_pool3d --input-size 8,64,16,56,56 --kernel-size 3 --stride 2 --padding 1")
  local i=0
  for r in "${rows[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$here/bin/poolgrad" bench $r --profile cudnn --min-time "${MIN_TIME:-0.05}" --out "$out/cudnn_bench_$i.json" \
      > /dev/null 2> "$out/cudnn_bench_$i.log" || status=1
    grep -E "ms, " "$out/cudnn_bench_$i.log" | sed 's/^\[[0-9]*\/[0-9]*\] //' | cut -c1-150
  done
}

# One timed campaign: $1 the binary, $2 the label, $3 the backend, $4 seconds.
pace_campaign() {
  local bin=$1 label=$2 backend=$3 seconds=$4 phases=()
  shift 4  # the rest: more fuzz arguments
  "$bin" fuzz --help | grep -q -- --phases && phases=(--phases)
  "$bin" fuzz --minutes "$(python3 -c "print($seconds / 60)")" --backend "$backend" --seed "${SEED:-20261125}" \
    ${phases[@]+"${phases[@]}"} "$@" --corpus "$out/cases-$label" --report "$out/pace_$label.json" > "$out/pace_$label.log" 2>&1 || status=1
  python3 - "$out/pace_$label.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for lane in r["lanes"]:
    by[lane["backend"]] = by.get(lane["backend"], 0) + lane["cases"]
reached = sum(all(t in lane["tags"] for t in lane["admitted_tags"]) for lane in r["lanes"])
print(f"{sys.argv[2]}: " + ", ".join(f"{b} {n / r['elapsed_s']:.0f}/s" for b, n in by.items()),
      f"| {r['cases']} cases in {r['elapsed_s']:.1f} s, {r['jobs']} jobs, {r['distinct_failures']} failures,",
      f"{reached}/{len(r['lanes'])} lanes reached every tag")
PY
  grep -A3 "where the time went" "$out/pace_$label.log"
}

run_pace() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  echo "host: $(nproc) cores"
  [ -x "${OLD:-}" ] || { echo "pace: set OLD to an older poolgrad binary" >&2; status=2; return; }
  pace_campaign "$OLD" old_gpu gpu "${SECONDS_GPU:-60}"
  pace_campaign "$here/bin/poolgrad" new_gpu gpu "${SECONDS_GPU:-60}"
  for b in ${BATCHES:-}; do pace_campaign "$here/bin/poolgrad" "new_gpu_batch$b" gpu "${SECONDS_GPU:-60}" --batch "$b"; done
  if [ "${SECONDS_ALL:-60}" != 0 ]; then
    pace_campaign "$OLD" old_all all "${SECONDS_ALL:-60}"
    pace_campaign "$here/bin/poolgrad" new_all all "${SECONDS_ALL:-60}"
  fi
  # At most 8 files come back from a device call: the reports, logs and case files as one archive.
  (cd "$out" && shopt -s nullglob && tar -czf pace.tgz pace_* cases-* && rm -rf pace_* cases-*)
}

case "${1:-all}" in
  tests) run_tests ;;
  pace) run_pace ;;
  long) run_long ;;
  bench) run_bench ;;
  networks) run_networks ;;
  campaign) run_campaign ;;
  all) run_tests; run_bench ;;
  scale) run_scale ;;
  sanitize) run_sanitize ;;
  conv) run_conv ;;
  cudnn) run_cudnn ;;
  selection) run_selection ;;
  *) echo "usage: run_gpu.sh tests|long|bench|networks|campaign|pace|all|scale|sanitize|conv|cudnn|selection" >&2; exit 2 ;;
esac
if [ -n "$(ls -A "$failures")" ]; then tar -czf "$out/failures.tgz" -C "$failures" .; fi
exit $status
