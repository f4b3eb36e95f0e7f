#!/usr/bin/env python3
"""Prints the reports the built-in selection is generated from: of the Google Benchmark JSON
pooling reports (runs of max./avg. variants; conv_bench's reports have none) in a results folder
that ran on an H100, the latest (by the date in its context) of each
suite (a report without a suite in its context is of the baseline suite). Meson runs it when it
configures; re-run `meson setup --reconfigure` after committing a new report.

Usage: python3 bench/latest_reports.py bench/results
"""
import json
import pathlib
import sys


def main():
    latest = {}
    for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
        if "benchmarks" not in doc or "H100" not in ctx.get("device", ""):
            continue
        if not any(b.get("name", "").startswith(("max.", "avg.")) for b in doc["benchmarks"]):
            continue
        suite = ctx.get("suite", "baseline")
        if suite not in latest or ctx.get("date", "") > latest[suite][0]:
            latest[suite] = (ctx.get("date", ""), path)
    for suite in sorted(latest):
        print(latest[suite][1].resolve())


if __name__ == "__main__":
    main()
