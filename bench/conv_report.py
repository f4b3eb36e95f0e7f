#!/usr/bin/env python3
"""Joins a conv_bench JSON report and a pytorch_conv_baseline JSON report (same GPU, same
session) into markdown: every conv variant on every row with ms, TFLOP/s (direct convolution)
and % of the same-run FP32 FMA ceiling, cuDNN beside it, and issue 13's targets for conv.gemm
(>= 60% of the FMA ceiling on both fp32 rows that cuDNN's figures are quoted for, >= 0.8x
cuDNN's speed on the 3D fp32 row).

Usage: python3 bench/conv_report.py CONV_BENCH.json PYTORCH_CONV.json > bench/results/DATE_GPU_conv.md
"""
import json
import sys
from collections import defaultdict

import bench_runs

TARGET_PCT = 60.0
ROW_2D = "conv2d_bwd_data (32, 128, 56, 56) K256 k3s1p1 float32"
ROW_3D = "conv3d_bwd_data (4, 64, 32, 32, 32) K64 k3s1p1 float32"


def main():
    bench = json.load(open(sys.argv[1]))
    torch = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {"rows": []}
    ctx = bench["context"]
    cudnn = {r["case"]: r for r in torch["rows"]}
    by_row = defaultdict(list)
    errors = bench_runs.errors(bench)
    for variant, row, b in bench_runs.runs(bench):
        by_row[row].append({"variant": variant, "ms": b["real_time"], "tflops": b["TFLOP/s"], "pct": b["pct_fma_peak"]})

    out = [f"# Conv backward-data benchmark: {ctx['device']}, {ctx['date']}\n",
           f"Command: `{ctx['command']}`; FP32 FMA ceiling measured in the same run: "
           f"**{float(ctx['fma_peak_TFLOPs']):.1f} TFLOP/s**. cuDNN: `{torch.get('command', '-')}` "
           f"(PyTorch {torch.get('torch', '?')}, cuDNN {torch.get('cudnn', '?')}, TF32 off, {torch.get('date', '?')}).\n",
           "| row | variant | ms | TFLOP/s | % FMA ceiling | cuDNN ms | cuDNN / variant |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for row, entries in by_row.items():
        t = cudnn.get(row)
        for e in sorted(entries, key=lambda e: e["ms"]):
            ratio = f"{t['ms'] / e['ms']:.2f}x" if t else "-"
            out.append(f"| {row} | `{e['variant']}` | {e['ms']:.3f} | {e['tflops']:.1f} | {e['pct']:.1f} | "
                       f"{t['ms'] if t else float('nan'):.3f} | {ratio} |")
    out.append("\n## Issue 13's targets for conv.gemm\n")
    gemm = {row: e for row, es in by_row.items() for e in es if e["variant"] == "conv.gemm"}
    for row in (ROW_2D, ROW_3D):
        e = gemm.get(row)
        if not e:
            out.append(f"- {row}: conv.gemm not timed")
            continue
        line = f"- {row}: {e['pct']:.1f}% of the FMA ceiling ({'met' if e['pct'] >= TARGET_PCT else 'MISSED'}, need 60%)"
        if row == ROW_3D and row in cudnn:
            speed = cudnn[row]["ms"] / e["ms"]
            line += f"; {speed:.2f}x cuDNN's speed ({'met' if speed >= 0.8 else 'MISSED'}, need 0.8x)"
        out.append(line)
    if errors:
        out.append("\n## Not timed (failed verification)\n")
        out += [f"- `{n}`: {m}" for n, m in errors]
    print("\n".join(out))


if __name__ == "__main__":
    main()
