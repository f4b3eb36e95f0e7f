#!/usr/bin/env python3
"""Times cuDNN's convolution backward-data through PyTorch on the conv benchmark rows, on the
current GPU: torch.ops.aten.convolution_backward with output_mask [True, False, False] (dx
only), fp32 with TF32 off and bf16, CUDA events, median of 50 runs after 10 warm-ups (as
bench/pytorch_baseline.py times pooling). TFLOP/s are counted as the direct convolution, as
conv_bench counts them.

Row names match bench/conv_rows.cpp, so the two reports join on them.
Usage: python3 bench/pytorch_conv_baseline.py --out pytorch_conv.json
"""
import argparse
import datetime
import json

import torch
from torch_timing import time_ms


def row_name(x, k, groups, kernel, stride, pad, dtype, channels_last=False):
    dims = len(x) - 2
    name = f"conv{dims}d_bwd_data ({', '.join(map(str, x))}) K{k}"
    if groups > 1:
        name += f" g{groups}"
    name += f" k{kernel}s{stride}p{pad}"
    name += " bfloat16" if dtype == torch.bfloat16 else " float32"
    if channels_last:
        name += " NHWC"
    return name


SHAPES = [
    ((32, 128, 56, 56), 256, 1, 3, 1, 1),
    ((4, 64, 32, 32, 32), 64, 1, 3, 1, 1),
    ((32, 256, 28, 28), 512, 1, 3, 2, 1),
    ((32, 256, 56, 56), 256, 256, 3, 1, 1),
]
ROWS = [s + (dtype,) for dtype in (torch.float32, torch.bfloat16) for s in SHAPES]
# Channels-last, the layout bf16 training runs in, and fp32 2D (bench/conv_rows.cpp's last rows).
ROWS += [SHAPES[0] + (torch.bfloat16, True), SHAPES[3] + (torch.bfloat16, True), SHAPES[0] + (torch.float32, True)]
# fp32 3x3 stride-1 layers of other widths and sizes (bench/conv_rows.cpp's last rows).
ROWS += [(x, k, 1, 3, 1, 1, torch.float32) for x, k in
         (((32, 64, 56, 56), 64), ((32, 256, 14, 14), 256), ((32, 512, 7, 7), 512), ((16, 32, 112, 112), 32))]
# fp32 1D, a long sequence.
ROWS += [((32, 256, 2048), 256, 1, 3, 1, 1, torch.float32)]


def measure(x_shape, k, groups, kernel, stride, pad, dtype, channels_last=False):
    dims = len(x_shape) - 2
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(x_shape, device="cuda", dtype=dtype).to(memory_format=fmt)
    w = torch.randn((k, x_shape[1] // groups) + (kernel,) * dims, device="cuda", dtype=dtype).to(memory_format=fmt)
    y = torch.ops.aten.convolution(x, w, None, [stride] * dims, [pad] * dims, [1] * dims, False, [0] * dims, groups)
    dy = torch.randn_like(y).to(memory_format=fmt)
    fn = lambda: torch.ops.aten.convolution_backward(
        dy, x, w, None, [stride] * dims, [pad] * dims, [1] * dims, False, [0] * dims, groups, [True, False, False])
    ms = time_ms(fn)
    out_points = 1
    for s in y.shape[2:]:
        out_points *= s
    macs = x_shape[0] * k * out_points * (x_shape[1] // groups) * kernel ** dims
    return ms, 2 * macs / (ms * 1e-3) / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # cuDNN's own choice of algorithm per row, as frameworks run it
    rows = []
    for r in ROWS:
        ms, tflops = measure(*r)
        rows.append({"case": row_name(*r), "ms": ms, "tflops": tflops})
        print(f"{rows[-1]['case']:60s} {ms:8.3f} ms {tflops:7.2f} TFLOP/s", flush=True)
    report = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "tf32": False,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 bench/pytorch_conv_baseline.py --out " + args.out,
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
