#!/usr/bin/env python3
"""Draws a poolgrad benchmark report as % of the same-run copy ceiling: one line per row, one
marker per verified variant (the row's fastest ringed), PyTorch's native kernel beside it as
a black cross (% of the copy ceiling PyTorch measured in its own run).

Usage: python3 bench/plot.py REPORT.json [--pytorch PYTORCH.json]... --out PLOT.png
Needs Debian's python3-matplotlib (/usr/bin/python3 has it).
"""
import argparse
import json
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def read_report(path):
    doc = json.load(open(path))
    rows = defaultdict(dict)  # row -> variant -> pct of copy
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name = b["name"].split("/manual_time")[0]
        variant, row = name.split("/", 1)
        if variant != "copy":
            rows[row][variant] = b["pct_copy"]
    return doc["context"], rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--pytorch", action="append", default=[], help="pytorch_baseline.py JSON (rows joined by name)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    ctx, rows = read_report(args.report)
    torch_pct, torch_label = {}, []
    for path in args.pytorch:
        t = json.load(open(path))
        torch_label.append(f"PyTorch {t.get('torch', '?')}, {t.get('date', '?')}")
        for r in t["rows"]:
            torch_pct[r["case"]] = 100.0 * r["frac"]

    names = list(rows)
    variants = sorted({v for r in rows.values() for v in r})
    colors = {v: plt.cm.tab20(i % 20) for i, v in enumerate(variants)}
    height = max(4.0, 0.32 * len(names) + 2.0)
    fig, ax = plt.subplots(figsize=(13, height))
    for y, row in enumerate(names):
        best = max(rows[row], key=rows[row].get)
        for v, pct in rows[row].items():
            ax.scatter(pct, y, color=colors[v], s=36, zorder=3)
            if v == best:
                ax.scatter(pct, y, facecolors="none", edgecolors="black", s=110, linewidths=1.2, zorder=4)
        if row in torch_pct:
            ax.scatter(torch_pct[row], y, marker="x", color="black", s=50, zorder=5)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 105)
    ax.axvline(100, color="grey", linewidth=0.8)
    ax.grid(axis="x", linestyle=":", zorder=0)
    ax.set_xlabel("% of the device-to-device copy ceiling measured in the same run (GB/s on minimal bytes)")
    ceiling = float(ctx["copy_ceiling_GBps"])
    ax.set_title(f"{ctx['device']}, {ctx['date']}: copy ceiling {ceiling:.0f} GB/s; ringed: fastest verified variant",
                 fontsize=9)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=colors[v], label=v) for v in variants]
    if torch_pct:
        handles.append(plt.Line2D([], [], marker="x", linestyle="", color="black",
                                  label="; ".join(sorted(set(torch_label))) + " (own copy ceiling)"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
