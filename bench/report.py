#!/usr/bin/env python3
"""Joins a pool_bench JSON report and a pytorch_baseline JSON report (same GPU, same session)
into a markdown table: variant x row, ms, GB/s, % of the copy ceiling, % of a copy of the row's
own bytes (the ceiling at its size), the winner per row and how it compares with PyTorch, against
the targets of issues 4 and 5, and a summary against issue 25's bar (the best deterministic
variant of every row at 80% of the copy ceiling or more, their geomean at 88%, every row 2x PyTorch).

Usage: python3 bench/report.py POOL_BENCH.json PYTORCH.json [--plot PLOT.png] > bench/REPORT.md
With --plot, the picture bench/plot.py drew of the same report is embedded (the path as the
markdown file will see it).
"""
import argparse
import json
import math
from collections import defaultdict

import bench_runs

TARGET_PCT = 70.0
GOAL_PCT = 85.0
# Issue 25's bar, on the best deterministic variant of each row.
ROW_PCT = 80.0
GEOMEAN_PCT = 88.0
TORCH_SPEEDUP = 2.0


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def bar_summary(by_row, torch_rows):
    """Lines stating how the rows stand against issue 25's bar; atomic winners are named apart."""
    pcts, speedups, low, slow, atomic_wins = [], [], [], [], 0
    for row, entries in by_row.items():
        deterministic = [e for e in entries if e["deterministic"]]
        if not deterministic:
            continue
        best = min(deterministic, key=lambda e: e["ms"])
        atomic_wins += min(entries, key=lambda e: e["ms"]) is not best
        pcts.append(best["pct"])
        if best["pct"] < ROW_PCT:
            low.append((best["pct"], row, best["variant"]))
        t = torch_rows.get(row)
        if t:
            speedups.append(t["ms"] / best["ms"])
            if speedups[-1] < TORCH_SPEEDUP:
                slow.append((speedups[-1], row))
    out = ["## Against issue 25's bar (best deterministic variant per row)\n",
           f"- rows: {len(pcts)}; at {ROW_PCT:.0f}% of the copy ceiling or more: {len(pcts) - len(low)}; "
           f"geomean {geomean(pcts):.1f}% (bar {GEOMEAN_PCT:.0f}%)",
           f"- x PyTorch, geomean over {len(speedups)} rows: {geomean(speedups):.2f}x; "
           f"under {TORCH_SPEEDUP:g}x: {len(slow)}" + "".join(f"; {r} ({s:.2f}x)" for s, r in sorted(slow)),
           f"- rows an atomic variant wins: {atomic_wins}"]
    if low:
        out.append(f"- under {ROW_PCT:.0f}%, worst first:")
        out += [f"  - {pct:.1f}% `{variant}`: {row}" for pct, row, variant in sorted(low)]
    out.append("")
    return out


def at_size(entry):
    """% of the copy kernel moving the row's own bytes (reports before 2026-11-29 have none)."""
    return "-" if entry["at_size"] is None else f"{entry['at_size']:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("pytorch")
    ap.add_argument("--plot", help="PNG drawn by bench/plot.py from the same reports")
    args = ap.parse_args()
    bench = json.load(open(args.bench))
    torch = json.load(open(args.pytorch))
    ctx = bench["context"]
    ceiling = float(ctx["copy_ceiling_GBps"])
    torch_rows = {r["case"]: r for r in torch["rows"]}

    by_row = defaultdict(list)
    copies = []
    errors = bench_runs.errors(bench)
    for variant, row, b in bench_runs.runs(bench):
        entry = {"variant": variant, "ms": b["real_time"], "gbs": b["GB/s"], "pct": b["pct_copy"],
                 "at_size": b.get("pct_copy_at_size"), "deterministic": b.get("deterministic", 1.0) != 0}
        if variant == "copy":
            copies.append((row, entry))
        else:
            by_row[row].append(entry)

    out = []
    out.append(f"# Benchmark report: {ctx['device']}, {ctx['date']}\n")
    out.append(f"Suite `{ctx.get('suite', 'baseline')}`, built from commit `{ctx.get('commit', 'unrecorded')}`.\n")
    out.append(f"Command: `{ctx['command']}`; PyTorch figures: `{torch.get('command', args.pytorch)}` "
               f"(PyTorch {torch.get('torch', '?')}, {torch.get('date', '?')}, {torch.get('device', '?')}).\n")
    batch_timed = [n for v, n, b in bench_runs.runs(bench) if b.get("graph", 1) == 0 and v != "copy"]
    out.append(f"Timing: poolgrad {ctx.get('timing', 'batch')} (bench/timing.hpp)"
               + (f", {len(batch_timed)} benchmarks timed by batch as they could not be captured" if
                  ctx.get('timing') == 'replay' and batch_timed else "")
               + f"; PyTorch {torch.get('timing', 'batch')}"
               + (f" ({sum(1 for r in torch['rows'] if r.get('timing', 'replay') != 'replay')} rows by batch)"
                  if torch.get('timing') == 'replay' and any(r.get('timing') != 'replay' for r in torch['rows']) else "")
               + ".\n")
    out.append(f"Copy ceiling (hipMemcpy device-to-device, read + write): **{ceiling:.0f} GB/s**; "
               f"PyTorch's own 4 GiB copy in its run: {torch['copy_gbs']:.0f} GB/s.\n")
    for row, e in copies:
        out.append(f"- copy `{row}`: {e['ms']:.3f} ms, {e['gbs']:.0f} GB/s, {e['pct']:.1f}% of ceiling")
    out.append("")
    if args.plot:
        out.append(f"![% of the copy ceiling per variant per row, PyTorch beside it]({args.plot})\n")
    out += bar_summary(by_row, torch_rows)
    out.append("## Winners against PyTorch\n")
    out.append("| row | best variant | ms | GB/s | % copy | % copy at size | PyTorch ms | speed-up | target |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for row, entries in by_row.items():
        best = min(entries, key=lambda e: e["ms"])
        t = torch_rows.get(row)
        speed = t["ms"] / best["ms"] if t else float("nan")
        need = 5.0 if ("avgpool" in row and "k3s1p1" in row) else 1.0
        ok = best["pct"] >= TARGET_PCT and speed > need
        verdict = ("met" if ok else "MISSED") + (f" (goal {GOAL_PCT:.0f}%: met)" if best["pct"] >= GOAL_PCT else "")
        if not t:
            verdict = "no PyTorch figure"
        out.append(f"| {row} | `{best['variant']}` | {best['ms']:.3f} | {best['gbs']:.0f} | {best['pct']:.1f} | "
                   f"{at_size(best)} | "
                   f"{t['ms'] if t else float('nan'):.3f} | {speed:.2f}x (need > {need:g}x) | {verdict} |")
    out.append("")
    out.append("## Every variant on every row\n")
    out.append("| row | variant | ms | GB/s (own minimal bytes) | % copy | % copy at size |")
    out.append("|---|---|---:|---:|---:|---:|")
    for row, entries in by_row.items():
        for e in sorted(entries, key=lambda e: e["ms"]):
            out.append(f"| {row} | `{e['variant']}` | {e['ms']:.3f} | {e['gbs']:.0f} | {e['pct']:.1f} | {at_size(e)} |")
    if errors:
        out.append("\n## Not timed (failed verification, or not started within --max-seconds)\n")
        for name, msg in errors:
            out.append(f"- `{name}`: {msg}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
