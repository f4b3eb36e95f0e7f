#!/usr/bin/env python3
"""Draws what --variant auto picked on held-out rows: one panel per set, a bar per row of the
pick's time over the row's fastest (the fastest deterministic variant where any ran: the default's
bar), coloured by the layer that decided, with the 3% and 10% lines. The sets are the JSON files
`poolgrad select ... --holdout R.json --holdout-json SET.json` writes.

Usage: /usr/bin/python3 bench/plot_selection.py LABEL=SET.json... --out PNG [--title TEXT]
(Debian's python3-matplotlib)
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"exact": "#4c72b0", "class": "#55a868", "model": "#dd8452", "perf-db": "#8172b3"}


def colour(layer):
    if layer.startswith("perf-db"):
        return COLOURS["perf-db"]
    for key in ("exact", "class", "model"):
        if key in layer:
            return COLOURS[key]
    return "#999999"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+", help="LABEL=FILE.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    sets = [(s.split("=", 1)[0], json.load(open(s.split("=", 1)[1]))) for s in a.sets]
    fig, axes = plt.subplots(len(sets), 1, figsize=(14, 2.6 * len(sets)), squeeze=False)
    for ax, (label, rows) in zip(axes[:, 0], sets):
        slow = [r["slowdown"] for r in rows]
        ax.bar(range(len(rows)), slow, color=[colour(r["layer"]) for r in rows])
        ax.axhline(1.03, color="black", lw=0.6, ls="--")
        ax.axhline(1.10, color="red", lw=0.6, ls="--")
        within10 = sum(s <= 1.10 for s in slow)
        ax.set_title(f"{label}: within 10% on {within10} of {len(rows)}, worst {max(slow):.2f}x", fontsize=9)
        ax.set_ylim(min(0.9, min(slow) * 0.95), max(1.3, max(slow) * 1.05))
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r["row"].split(":")[0][:28] for r in rows], rotation=75, fontsize=5)
        ax.set_ylabel("pick / fastest")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    fig.legend(handles, ["exact problem", "class", "model", "perf-db (tuned)"], loc="upper right", fontsize=8)
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
