#!/usr/bin/env python3
"""Prints the reports the built-in selection tables are generated from: of the Google Benchmark
JSON pooling reports (runs of max./avg. variants; conv_bench's reports have none) in a results
folder, the latest (by the date in its context) of each suite on each device. Only reports that
record each variant's determinism (context "poolgrad_report" >= 2, written by `poolgrad bench`
since the perf-db) are taken; while a results folder has none, the latest H100 report of each suite
is. A report without a suite in its context is of the baseline suite; the held-out suite (fresh)
and reports of some variants only (--variants, --variant, --contenders) are never sources, nor are reports
with benchmarks that --max-seconds left unrun (their rows lack some variants' times). Meson runs it when it
configures; re-run `meson setup --reconfigure` after committing a new report.

Usage: python3 bench/latest_reports.py bench/results
"""
import json
import pathlib
import re
import sys

# Suites timed only to test kernel selection on shapes its table has not seen.
HELD_OUT = {"fresh"}
# A report of some variants only (a filter, one variant, the contenders of another report) is not
# a complete measurement of its rows.
PARTIAL = re.compile(r"\s--(variants?|contenders)[\s=]")
# What `poolgrad bench` records for a benchmark --max-seconds left unrun (bench/engine.cpp).
UNRUN = "the time budget (--max-seconds) was spent"


def main():
    latest, legacy = {}, {}
    for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
        if "benchmarks" not in doc:
            continue
        if not any(b.get("name", "").startswith(("max.", "avg.")) for b in doc["benchmarks"]):
            continue
        if any(b.get("error_occurred") and UNRUN in b.get("error_message", "") for b in doc["benchmarks"]):
            continue
        device, suite, date = ctx.get("device", ""), ctx.get("suite", "baseline"), ctx.get("date", "")
        if suite in HELD_OUT or PARTIAL.search(ctx.get("command", "")):
            continue
        if int(ctx.get("poolgrad_report", "1")) >= 2:
            chosen = latest
        elif "H100" in device:
            chosen = legacy
        else:
            continue
        key = (device, suite)
        if key not in chosen or date > chosen[key][0]:
            chosen[key] = (date, path)
    for key in sorted(latest or legacy):
        print((latest or legacy)[key][1].resolve())


if __name__ == "__main__":
    main()
