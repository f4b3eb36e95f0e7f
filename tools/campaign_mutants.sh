#!/usr/bin/env bash
# Plants bugs from a mutant list (tools/mutants.txt format) one at a time and runs a `poolgrad
# fuzz` campaign over every variant against each: does the campaign exit 1, after how long is the
# first failing case found, and does `poolgrad replay` reproduce the case file it wrote? Work
# happens in a plain copy of HEAD (git archive) with its own CPU-only build, so the checkout is
# never touched. Usage:
#   tools/campaign_mutants.sh MUTANTS_FILE N...
#     (N: a mutant's number as tools/mutation_check.sh counts them, 1 = the first)
# Env: MUTANT_DIR (default /tmp/poolgrad-campaign-mutants), MINUTES (default 1), JOBS, SEED.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
list=$(realpath "${1:?usage: tools/campaign_mutants.sh MUTANTS_FILE N...}")
shift
work=${MUTANT_DIR:-/tmp/poolgrad-campaign-mutants}
if [ ! -d "$work/build" ]; then
  mkdir -p "$work"
  git -C "$repo" archive HEAD | tar -x -C "$work"
  meson setup "$work/build" "$work" -Dgpu=none -Damd_check=disabled >/dev/null
fi
jobs=()
[ -n "${JOBS:-}" ] && jobs=(--jobs "$JOBS")
printf '%-3s %-5s %-9s %-7s %s\n' "#" "exit" "first(s)" "replay" "mutant"
mapfile -t mutants < <(grep -v '^#' "$list" | grep -v '^$')
for n in "$@"; do
  IFS='|' read -r file pattern replacement what <<<"${mutants[$((n - 1))]}"
  cp -p "$work/$file" "$work/$file.orig"
  if ! python3 "$repo/tools/apply_mutant.py" "$work/$file" "$pattern" "$replacement"
  then printf '%-3s %-5s %-9s %-7s %s\n' "$n" "n/a" "" "" "$what (did not apply)"; mv "$work/$file.orig" "$work/$file"; continue; fi
  out="$work/mutant-$n"
  rm -rf "$out" && mkdir -p "$out"
  if ninja -C "$work/build" src/poolgrad >"$out/build.log" 2>&1; then
    "$work/build/src/poolgrad" fuzz --minutes "${MINUTES:-1}" --backend cpu --seed "${SEED:-20261123}" ${jobs[@]+"${jobs[@]}"} \
      --corpus "$out/cases" --report "$out/report.json" >"$out/campaign.log" 2>&1
    rc=$?
    first=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=[f['first_s'] for l in r['lanes'] for f in l['failures']]; print('%.1f' % min(t) if t else '-')" "$out/report.json")
    replay=-
    for c in "$out"/cases/*.json; do
      [ -f "$c" ] || continue
      "$work/build/src/poolgrad" replay "$c" >>"$out/replay.log" 2>&1
      r=$?
      if [ "$replay" = - ] || [ "$replay" = 1 ]; then replay=$r; fi
    done
    printf '%-3s %-5s %-9s %-7s %s\n' "$n" "$rc" "$first" "$replay" "$what"
  else
    printf '%-3s %-5s %-9s %-7s %s\n' "$n" "build" "" "" "$what (does not compile)"
  fi
  mv "$work/$file.orig" "$work/$file"
  touch "$work/$file"  # the next build drops the mutant from its objects
done
