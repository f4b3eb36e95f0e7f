#!/usr/bin/env python3
"""Joins a pool_bench JSON report and a pytorch_baseline JSON report (same GPU, same session)
into a markdown table: variant x row, ms, GB/s, % of the copy ceiling, % of a copy of the row's
own bytes (the ceiling at its size), the winner per row and how it compares with PyTorch, against
the targets of issues 4 and 5.

Usage: python3 bench/report.py POOL_BENCH.json PYTORCH.json [--plot PLOT.png] > bench/REPORT.md
With --plot, the picture bench/plot.py drew of the same report is embedded (the path as the
markdown file will see it).
"""
import argparse
import json
from collections import defaultdict

import bench_runs

TARGET_PCT = 70.0
GOAL_PCT = 85.0


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
                 "at_size": b.get("pct_copy_at_size")}
        if variant == "copy":
            copies.append((row, entry))
        else:
            by_row[row].append(entry)

    out = []
    out.append(f"# Benchmark report: {ctx['device']}, {ctx['date']}\n")
    out.append(f"Suite `{ctx.get('suite', 'baseline')}`, built from commit `{ctx.get('commit', 'unrecorded')}`.\n")
    out.append(f"Command: `{ctx['command']}`; PyTorch figures: `{torch.get('command', args.pytorch)}` "
               f"(PyTorch {torch.get('torch', '?')}, {torch.get('date', '?')}, {torch.get('device', '?')}).\n")
    out.append(f"Copy ceiling (hipMemcpy device-to-device, read + write): **{ceiling:.0f} GB/s**; "
               f"PyTorch's own 4 GiB copy in its run: {torch['copy_gbs']:.0f} GB/s.\n")
    for row, e in copies:
        out.append(f"- copy `{row}`: {e['ms']:.3f} ms, {e['gbs']:.0f} GB/s, {e['pct']:.1f}% of ceiling")
    out.append("")
    if args.plot:
        out.append(f"![% of the copy ceiling per variant per row, PyTorch beside it]({args.plot})\n")
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
