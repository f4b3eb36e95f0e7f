#!/usr/bin/env bash
# Coverage-guided fuzzing of poolgrad's parsers with clang's libFuzzer (+ ASan, UBSan):
#   tools/fuzz_parsers.sh build              builds build-fuzz/{npy,problem,cli,conv_cli}_fuzz
#   tools/fuzz_parsers.sh run NAME SECONDS   fuzzes one of npy|problem|cli|conv_cli from fuzz/parsers/corpus/NAME;
#                                            new inputs go to build-fuzz/found-NAME, a crash to build-fuzz/
#   tools/fuzz_parsers.sh minimize NAME      merges corpus + finds down to a set cover of their coverage
# `meson test` replays each corpus without clang (fuzz/meson.build). On a shared machine run one
# at a time under nice: `nice -n 19 tools/fuzz_parsers.sh run npy 600`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. -Wno-unknown-pragmas)
declare -A sources=(
  [npy]="fuzz/parsers/npy_fuzz.cpp src/harness/npy.cpp src/harness/output_file.cpp"
  [problem]="fuzz/parsers/problem_fuzz.cpp src/model/problem.cpp src/model/parse_number.cpp src/model/problem_text.cpp reference/pool_reference.cpp"
  [cli]="fuzz/parsers/cli_fuzz.cpp src/cli/pool_options.cpp src/cli/parse_options.cpp src/harness/pool_plan.cpp src/harness/axis_options.cpp src/model/profile.cpp src/harness/npy.cpp src/harness/output_file.cpp src/model/problem.cpp src/model/parse_number.cpp src/model/problem_text.cpp src/harness/conv_plan.cpp src/model/conv_problem.cpp"
  [conv_cli]="fuzz/parsers/conv_cli_fuzz.cpp src/cli/pool_options.cpp src/cli/parse_options.cpp src/harness/pool_plan.cpp src/harness/axis_options.cpp src/model/profile.cpp src/harness/npy.cpp src/harness/output_file.cpp src/model/problem.cpp src/model/parse_number.cpp src/model/problem_text.cpp src/harness/conv_plan.cpp src/model/conv_problem.cpp"
)
case "${1:-}" in
  build)
    mkdir -p "$out"
    for name in npy problem cli conv_cli; do
      # shellcheck disable=SC2086
      clang++ "${flags[@]}" ${sources[$name]} -o "$out/${name}_fuzz" -lpthread
      echo "built $out/${name}_fuzz"
    done ;;
  run)
    name=$2 seconds=$3
    corpus=fuzz/parsers/corpus/$name
    mkdir -p "$corpus" "$out/found-$name"
    "$out/${name}_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$out/" "$out/found-$name" "$corpus" ;;
  minimize)
    name=$2
    corpus=fuzz/parsers/corpus/$name
    rm -rf "$out/min-$name" && mkdir -p "$out/min-$name"
    "$out/${name}_fuzz" -set_cover_merge=1 -max_len=4096 "$out/min-$name" "$corpus" "$out/found-$name"
    rm -f "$corpus"/* && cp "$out/min-$name"/* "$corpus"/ ;;
  *) echo "usage: tools/fuzz_parsers.sh build | run npy|problem|cli|conv_cli SECONDS | minimize NAME" >&2; exit 2 ;;
esac
