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
  # debugoptimized: -O2 keeps the kernel tests' running time near the release build's; the
  # sanitizers need no -O0. b_lundef=false: Meson requires it with b_sanitize on clang, harmless on g++.
  meson setup "$build" -Dgpu=none -Damd_check=disabled -Dbuildtype=debugoptimized -Db_ndebug=false \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args=-fno-sanitize-recover=undefined
fi
ninja -C "$build"
exec meson test -C "$build" --suite cpu --setup sanitize --print-errorlogs "$@"
