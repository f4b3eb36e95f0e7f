#!/usr/bin/env bash
# Plants one-line bugs in kernels/, one at a time, and reports which checks catch each: the
# property fuzz alone, and the whole cpu suite (`meson test`). A bug the fuzz misses marks a gap
# in a generator or a domain. Usage:
#   tools/mutation_check.sh MUTANTS_FILE [CASES]
# MUTANTS_FILE: one mutant per line, `file|python-regex|replacement|description[|gtest-filter]`
# (the regex must match exactly once in file; the filter, where given, narrows that mutant's fuzz
# to the properties that run its code). Work happens in a scratch worktree (MUTANT_DIR, default
# /tmp/poolgrad-mutants) with its own CPU-only build, so the checkout is never touched.
# FUZZ_FILTER (a gtest filter, e.g. '*conv_gemm_tma*') narrows the fuzz of the mutants without a
# filter of their own to the mutated variant's properties: the whole conv fuzz at 300 cases takes
# about 15 minutes a mutant on 2 cores.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
list=${1:?usage: tools/mutation_check.sh MUTANTS_FILE [CASES]}
cases=${2:-300}
work=${MUTANT_DIR:-/tmp/poolgrad-mutants}
if [ ! -d "$work" ]; then
  git -C "$repo" worktree add --detach "$work" HEAD >/dev/null
  meson setup "$work/build" "$work" -Dgpu=none -Damd_check=disabled >/dev/null
fi
git -C "$work" checkout -q --detach "$(git -C "$repo" rev-parse HEAD)"
printf '%-4s %-6s %-6s %s\n' "#" "fuzz" "suite" "mutant"
n=0
while IFS='|' read -r file pattern replacement what filter; do
  [ -z "$file" ] || [ "${file:0:1}" = "#" ] && continue
  n=$((n + 1))
  filter=${filter:-${FUZZ_FILTER:-*}}
  git -C "$work" checkout -q -- .
  if ! python3 "$repo/tools/apply_mutant.py" "$work/$file" "$pattern" "$replacement"
  then printf '%-4s %-6s %-6s %s\n' "$n" "n/a" "n/a" "$what (did not apply)"; continue; fi
  if ! ninja -C "$work/build" >"$work/build.log" 2>&1; then
    printf '%-4s %-6s %-6s %s\n' "$n" "build" "build" "$what (does not compile)"; continue
  fi
  # The property fuzz of the mutant's family: pooling (fuzz_variants) or conv (fuzz_conv, and for
  # the GPU-only conv.gemm its block steps run on the host: conv_gemm_host_tests).
  fuzz=caught
  if [[ $file == kernels/conv/* ]]; then
    POOLGRAD_FAILURE_DIR="$work/failures" POOLGRAD_FUZZ_DEFAULT=$cases timeout 900 \
      "$work/build/fuzz/fuzz_conv" --backend=cpu --gtest_filter="$filter" >"$work/fuzz-$n.log" 2>&1 &&
      RC_PARAMS="max_success=$cases" timeout 900 "$work/build/tests/conv_gemm_host_tests" >>"$work/fuzz-$n.log" 2>&1 &&
      fuzz=missed
  else
    POOLGRAD_FAILURE_DIR="$work/failures" POOLGRAD_FUZZ_DEFAULT=$cases timeout 900 \
      "$work/build/fuzz/fuzz_variants" --backend=cpu --gtest_filter="$filter" >"$work/fuzz-$n.log" 2>&1 && fuzz=missed
  fi
  # The suite runs the same fuzz, so it only needs running when the fuzz alone missed.
  suite=caught
  if [ $fuzz = missed ]; then
    timeout 1800 meson test -C "$work/build" --suite cpu >"$work/suite-$n.log" 2>&1 && suite=missed
  fi
  printf '%-4s %-6s %-6s %s\n' "$n" "$fuzz" "$suite" "$what"
done <"$list"
git -C "$work" checkout -q -- .
