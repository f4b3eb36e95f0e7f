#!/usr/bin/env python3
"""Times PyTorch's native pooling-backward kernels on the baseline rows, on the current GPU,
the way bench/baselines/README.md did: CUDA events, median of 50 runs after 10 warm-ups,
plus a device-to-device copy ceiling (bytes read + written) measured in the same run.

Row names match bench/rows.cpp, so bench/report.py can join the two reports.
Usage: python3 bench/pytorch_baseline.py --out pytorch.json
"""
import argparse
import datetime
import json

import torch
import torch.nn.functional as F


def time_ms(fn, warmup=10, runs=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def copy_ceiling_gbs(nbytes=4 << 30):
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), warmup=3, runs=20)
    return 2 * nbytes / (ms * 1e-3) / 1e9


def row_name(op, shape, k, s, p, ceil, cl, dtype, cip):
    dims = len(shape) - 2
    name = f"{op}pool{dims}d_bwd ({', '.join(map(str, shape))}) k{k}s{s}p{p}"
    if op == "avg" and cip:
        name += " cip"
    if ceil:
        name += " ceil"
    if op == "avg" and not cip:
        name += " nopad"
    if cl:
        name += " CL"
    name += " float16" if dtype == torch.float16 else " float32"
    if op == "max":
        name += " idx=int64"
    return name


ROWS = [
    ("max", (64, 64, 112, 112), 3, 2, 1, False, False, torch.float32, True),
    ("max", (64, 64, 112, 112), 3, 2, 1, False, True, torch.float32, True),
    ("max", (32, 256, 56, 56), 2, 2, 0, False, False, torch.float32, True),
    ("max", (64, 64, 112, 112), 3, 2, 1, False, False, torch.float16, True),
    ("max", (64, 64, 112, 112), 3, 2, 1, True, False, torch.float32, True),
    ("max", (8, 64, 16, 56, 56), 3, 2, 1, False, False, torch.float32, True),
    ("max", (8, 64, 16, 56, 56), 2, 2, 0, False, False, torch.float32, True),
    ("max", (8, 64, 16, 56, 56), 3, 1, 1, False, False, torch.float32, True),
    ("avg", (16, 64, 16, 56, 56), 2, 2, 0, False, False, torch.float32, True),
    ("avg", (16, 64, 16, 56, 56), 2, 2, 0, False, True, torch.float32, True),
    ("avg", (8, 64, 16, 56, 56), 3, 1, 1, False, False, torch.float32, False),
    ("avg", (8, 64, 16, 56, 56), 3, 1, 1, False, False, torch.float32, True),
    ("avg", (2, 32, 128, 128, 128), 3, 2, 1, True, False, torch.float32, False),
    ("avg", (16, 64, 16, 56, 56), 2, 2, 0, False, False, torch.float16, True),
    ("avg", (64, 128, 56, 56), 3, 1, 1, False, False, torch.float32, True),
    ("avg", (64, 128, 56, 56), 2, 2, 0, False, False, torch.float32, True),
]


def measure(op, shape, k, s, p, ceil, cl, dtype, cip):
    dims = len(shape) - 2
    x = torch.randn(shape, device="cuda", dtype=dtype)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last if dims == 2 else torch.channels_last_3d)
    if op == "max":
        pool = F.max_pool2d if dims == 2 else F.max_pool3d
        y, idx = pool(x, k, s, p, ceil_mode=ceil, return_indices=True)
        dy = torch.randn_like(y)
        bwd = torch.ops.aten.max_pool2d_with_indices_backward if dims == 2 else torch.ops.aten.max_pool3d_with_indices_backward
        fn = lambda: bwd(dy, x, [k] * dims, [s] * dims, [p] * dims, [1] * dims, ceil, idx)
        nbytes = dy.numel() * dy.element_size() + idx.numel() * 8 + x.numel() * x.element_size()
    else:
        pool = F.avg_pool2d if dims == 2 else F.avg_pool3d
        y = pool(x, k, s, p, ceil_mode=ceil, count_include_pad=cip)
        dy = torch.randn_like(y)
        bwd = torch.ops.aten.avg_pool2d_backward if dims == 2 else torch.ops.aten.avg_pool3d_backward
        fn = lambda: bwd(dy, x, [k] * dims, [s] * dims, [p] * dims, ceil, cip, None)
        nbytes = dy.numel() * dy.element_size() + x.numel() * x.element_size()
    ms = time_ms(fn)
    return ms, nbytes / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    copy = copy_ceiling_gbs()
    rows = []
    for r in ROWS:
        ms, gbs = measure(*r)
        rows.append({"case": row_name(*r), "ms": ms, "gbs": gbs, "frac": gbs / copy})
        print(f"{rows[-1]['case']:70s} {ms:8.3f} ms {gbs:8.1f} GB/s {100 * gbs / copy:5.1f}%", flush=True)
    report = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 bench/pytorch_baseline.py --out " + args.out,
        "copy_gbs": copy,
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
