#!/usr/bin/env python3
"""Times PyTorch's native pooling-backward kernels on a suite's rows, on the current GPU, the
way bench/baselines/README.md did: CUDA events, median of 50 runs after 10 warm-ups, plus a
device-to-device copy ceiling (bytes read + written) measured in the same run.

The rows come from poolgrad itself, so they are defined once (bench/rows.cpp, bench/networks.cpp):
    poolgrad bench --suite networks --list --json > rows.json
    python3 bench/pytorch_baseline.py --rows rows.json --out pytorch.json
Row names are the join key with the poolgrad report (bench/report.py, bench/plot.py). A row
PyTorch cannot express (asymmetric padding, a divisor rule it lacks, non-plane indices,
channels-last 1D, dilated average pooling) is listed under "skipped" with the reason.
"""
import argparse
import datetime
import json

import torch
from torch_timing import time_ms, timed

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


def copy_ceiling_gbs(nbytes=4 << 30):
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), warmup=3, runs=20, replay=False)
    return 2 * nbytes / (ms * 1e-3) / 1e9


def why_not_expressible(r):
    if r["padding"] != r["pad_end"]:
        return "asymmetric padding"
    if r["layout"] == "NHWC" and r["dims"] == 1:
        return "PyTorch has no channels-last 1D memory format"
    if r["op"] == "avg" and any(d != 1 for d in r["dilation"]):
        return "PyTorch's avg_pool has no dilation"
    if r["op"] == "avg" and r["divisor"] == "full_kernel" and "divisor_override" not in r:
        return "PyTorch has no full_kernel divisor rule"
    if r["op"] == "max" and r["indices"] != "plane/i64":
        return "PyTorch's indices are plane/i64"
    return None


def measure(r, replay):
    """PyTorch's 1D pooling runs as 2D on (N, C, 1, L); this does the same."""
    dims = r["dims"]
    as2d = dims == 1
    shape = list(r["shape"])
    k, s, p, d = r["kernel_size"], r["stride"], r["padding"], r["dilation"]
    if as2d:
        shape = shape[:2] + [1] + shape[2:]
        k, s, p, d = [1] + k, [1] + s, [0] + p, [1] + d
    nd = len(shape) - 2
    x = torch.randn(shape, device="cuda", dtype=DTYPES[r["dtype"]])
    if r["layout"] == "NHWC":
        x = x.contiguous(memory_format=torch.channels_last if nd == 2 else torch.channels_last_3d)
    ceil = r["ceil_mode"]
    if r["op"] == "max":
        fwd = torch.ops.aten.max_pool2d_with_indices if nd == 2 else torch.ops.aten.max_pool3d_with_indices
        y, idx = fwd(x, k, s, p, d, ceil)
        dy = torch.randn_like(y)
        bwd = torch.ops.aten.max_pool2d_with_indices_backward if nd == 2 else torch.ops.aten.max_pool3d_with_indices_backward
        fn = lambda: bwd(dy, x, k, s, p, d, ceil, idx)
        nbytes = dy.numel() * dy.element_size() + idx.numel() * 8 + x.numel() * x.element_size()
    else:
        cip = r["count_include_pad"]
        override = r.get("divisor_override")
        fwd = torch.ops.aten.avg_pool2d if nd == 2 else torch.ops.aten.avg_pool3d
        y = fwd(x, k, s, p, ceil, cip, override)
        dy = torch.randn_like(y)
        bwd = torch.ops.aten.avg_pool2d_backward if nd == 2 else torch.ops.aten.avg_pool3d_backward
        fn = lambda: bwd(dy, x, k, s, p, ceil, cip, override)
        nbytes = dy.numel() * dy.element_size() + x.numel() * x.element_size()
    ms, how = timed(fn, replay=replay)
    return ms, nbytes / (ms * 1e-3) / 1e9, how


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True, help="rows.json from `poolgrad bench --suite S --list --json`")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", choices=["replay", "batch"], default="replay",
                    help="replay (default): calls captured in a CUDA graph and replayed, as poolgrad bench times; "
                         "batch: events around each call")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    rows_in = json.load(open(args.rows))
    copy = copy_ceiling_gbs()
    rows, skipped = [], []
    for r in rows_in:
        why = why_not_expressible(r)
        if why:
            skipped.append({"case": r["name"], "why": why})
            print(f"{r['name']:90s} skipped: {why}", flush=True)
            continue
        ms, gbs, how = measure(r, args.timing == "replay")
        rows.append({"case": r["name"], "ms": ms, "gbs": gbs, "frac": gbs / copy, "timing": how})
        print(f"{r['name']:90s} {ms:8.3f} ms {gbs:8.1f} GB/s {100 * gbs / copy:5.1f}% ({how})", flush=True)
        torch.cuda.empty_cache()
    report = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"python3 bench/pytorch_baseline.py --rows {args.rows} --out {args.out} --timing {args.timing}",
        "timing": args.timing,
        "copy_gbs": copy,
        "rows": rows,
        "skipped": skipped,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
