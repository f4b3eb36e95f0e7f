#!/usr/bin/env bash
# The cpu suite under AddressSanitizer + UndefinedBehaviorSanitizer (g++), in its own build
# directory so the release build is untouched:
#   tools/sanitize_cpu.sh [meson test args]
# Configures build-sanitize once (BUILD_DIR overrides), builds, and runs `meson test --suite cpu
# --setup sanitize` (meson.build): every UB report is fatal, leaks are reported, and the
# RapidCheck properties run POOLGRAD_FUZZ_CASES=100 cases each so the whole run stays well under
# CI's 30 minutes on 2 cores. .ci/run calls this after the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-sanitize}
if [ ! -f "$build/build.ninja" ]; then
  # -O1 with line tables (-g1), ASan's own advice: the max kernels' unit compiles in 355 s instead
  # of 658 s at debugoptimized's -O2 -g (2026-11-27), and reports still name file and line.
  # b_lundef=false: Meson requires it with b_sanitize on clang, harmless on g++.
  meson setup "$build" -Dgpu=none -Damd_check=disabled -Doptimization=1 -Ddebug=false -Db_ndebug=false \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args='-g1 -fno-sanitize-recover=undefined'
fi
ninja -C "$build"
exec meson test -C "$build" --suite cpu --setup sanitize --print-errorlogs "$@"
