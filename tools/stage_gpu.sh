#!/usr/bin/env bash
# Stages what the GPU machine needs into .carry/ (ignored by git): the test, fuzz and benchmark
# binaries built here with nvcc (static CUDA runtime), the shared libraries the GPU image lacks,
# and the scripts that run there. Then: device run with carry [".carry"] and
#   bash .carry/run_gpu.sh tests|long|bench|networks|campaign|all|scale|sanitize|conv
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
[ -x "$build/src/poolgrad" ] || { echo "stage_gpu: build $build first" >&2; exit 2; }
if ! ar t "$build/src/harness/libpoolgrad_harness.a" | grep -q "gpu_backend.cu"; then
  echo "stage_gpu: $build has no GPU backend (configure with nvcc on PATH or -Dgpu=cuda)" >&2
  exit 2
fi
if "$build/src/poolgrad" variants | grep -q "no gpu in this build"; then
  echo "stage_gpu: some variants are missing from the GPU unit; rebuild $build" >&2
  exit 2
fi
carry=${CARRY_DIR:-.carry}
rm -rf "$carry" && mkdir -p "$carry/bin" "$carry/lib"
cp "$build/src/poolgrad" "$build/tests/backend_tests" "$build/fuzz/fuzz_variants" "$build/fuzz/corpus_tests" \
  "$build/fuzz/fuzz_conv" "$build/bench/pool_bench" "$build/bench/conv_bench" "$carry/bin/"
for t in "$build"/tests/*_kernel_tests "$build/tests/scale_tests"; do [ -x "$t" ] && cp "$t" "$carry/bin/"; done
ldd "$build/bench/pool_bench" | awk '/libbenchmark/ {print $3}' | xargs -r cp -L -t "$carry/lib/"
strip "$carry"/bin/*
# Every binary holds the same GPU code (~11 MB each): packed, the staging fits the device
# machine's 64 MiB carry limit; run_gpu.sh unpacks it there. -9's 64 MiB dictionary finds the
# copies across binaries (2026-12-02: 199 MB of binaries, 57 MB at -1, 12 MB at -9 in 104 s on two
# cores), which leaves room for an older build's binaries beside them.
tar -C "$carry" -cf - bin lib | xz -9 -T2 > "$carry/bins.tar.xz"
rm -rf "$carry/bin" "$carry/lib"
cp tools/run_gpu.sh "$carry/run_gpu.sh"
cp bench/pytorch_baseline.py bench/pytorch_conv_baseline.py bench/torch_timing.py tools/plant_slowdown.py "$carry/"
du -sh "$carry"
