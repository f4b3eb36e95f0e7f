#!/usr/bin/env bash
# The install flow of README "Test your own kernel in five minutes", as CI runs it: poolgrad
# installed from a build directory into a staging directory (DESTDIR), the out-of-tree example
# plugin (examples/plugin) built against it through pkg-config and a program on the C++ API
# (examples/api) through CMake's find_package, then the installed poolgrad: `check --plugin`
# passes the correct variant, `fuzz --plugin` finds the planted bug (exit 1) with a shrunk case
# file, and `replay` of that file fails the same way (exit 1).
#   tools/check_install.sh [BUILD_DIR]    default build (what ./bootstrap built); STAGE=/tmp/...
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
stage=${STAGE:-/tmp/poolgrad-stage}
work=$stage.work
rm -rf "$stage" "$work"
mkdir -p "$work"

step() { echo "check_install: $*"; }
expect_exit() {  # CODE COMMAND...: runs it, fails unless it exits CODE
  local want=$1 got=0
  shift
  "$@" || got=$?
  if [ "$got" -ne "$want" ]; then
    echo "check_install: FAIL: exit $got, wanted $want: $*" >&2
    exit 1
  fi
}

step "meson install -C $build --destdir $stage"
# A build directory configured before pkgconfig.relocatable became a default keeps the old value.
# Only then reconfigure: a reconfigure regenerates under this shell's PATH, where another nvcc may be
# found first, and that rebuilds every GPU unit (CI, 2026-11-24: /usr/local/bin/nvcc).
option() { meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
[ "$(option pkgconfig.relocatable)" = True ] || meson configure "$build" -Dpkgconfig.relocatable=true
meson install -C "$build" --destdir "$stage" --quiet
prefix=$(option prefix)
root=$stage$prefix
poolgrad=$root/bin/poolgrad
pcdir=$(dirname "$(find "$root" -name poolgrad.pc | head -1)")
"$poolgrad" --version

step "example plugin against pkg-config's poolgrad ($pcdir)"
PKG_CONFIG_PATH=$pcdir meson setup "$work/plugin" examples/plugin >"$work/plugin-setup.log" || {
  cat "$work/plugin-setup.log"
  exit 1
}
ninja -C "$work/plugin" >/dev/null
plugin=$work/plugin/libexample_plugin.so

step "C++ API program against find_package(poolgrad)"
cmake -S examples/api -B "$work/api" -DCMAKE_PREFIX_PATH="$root" >"$work/api-setup.log" || {
  cat "$work/api-setup.log"
  exit 1
}
cmake --build "$work/api" >/dev/null
(cd "$work" && POOLGRAD_FAILURE_DIR=failures "$work/api/verify_plugin" "$plugin" example.max.scatter)

cd "$work"
step "poolgrad variants / check --plugin"
"$poolgrad" variants --plugin "$plugin" | grep '^example\.'
"$poolgrad" check --plugin "$plugin" --variant example.max.scatter | tail -1

step "poolgrad fuzz --plugin: the planted bug"
expect_exit 1 "$poolgrad" fuzz --plugin "$plugin" --variants 'scatter\.bug$' --backend cpu --cases 300 --seed 1 \
  --jobs 2 --corpus cases
case_file=$(ls cases/*.json)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print("shrunk case:", c["problem"]); print("signature:", c["signature"])' "$case_file"

step "poolgrad replay $case_file"
expect_exit 1 "$poolgrad" replay "$case_file"
step "passed"
