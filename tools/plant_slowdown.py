#!/usr/bin/env python3
"""Plants a slowdown in a bench report, to show that `poolgrad compare` flags one: every timed
run (each repetition) of VARIANT is made FACTOR times slower; every other run is left as measured.

Usage: python3 tools/plant_slowdown.py REPORT.json VARIANT FACTOR OUT.json
"""
import json
import sys


def main():
    report, variant, factor, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    doc = json.load(open(report))
    planted = 0
    for b in doc["benchmarks"]:
        if b["name"].split("/")[0] == variant and b.get("run_type", "iteration") == "iteration":
            for key in ("real_time", "cpu_time"):
                b[key] *= factor
            planted += 1
    if not planted:
        sys.exit(f"plant_slowdown: {report} has no run of {variant}")
    doc["context"]["planted"] = f"{variant} x{factor} on {planted} runs (tools/plant_slowdown.py)"
    json.dump(doc, open(out, "w"), indent=1)
    print(f"planted: {variant} x{factor} on {planted} runs -> {out}")


if __name__ == "__main__":
    main()
