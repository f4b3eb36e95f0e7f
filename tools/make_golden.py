#!/usr/bin/env python3
"""Builds the PyTorch golden set for the oracle: tests/golden/pytorch_pool.json.

Every case is a max or average pooling problem (1D-3D) run through torch.nn.functional on
the CPU: forward output, max indices, and the input gradient of a random grad_output, or the
first line of the error PyTorch raised. Tensors are stored as base64 of their little-endian
bytes (NaN and -inf survive, which JSON numbers cannot carry).

    python3 tools/make_golden.py --out tests/golden/pytorch_pool.json [--cases 600] [--seed 1]

Needs only torch (no numpy). tests/pytorch_golden_test.cpp reads the file.
"""
import argparse
import json
import random

import torch
import torch.nn.functional as F
from golden_encode import encode



def make_values(rng, shape, dtype, kind):
    count = 1
    for d in shape:
        count *= d
    if kind == "ints":  # small integers: exact sums and many ties
        top = rng.randint(1, 4)
        values = [float(rng.randint(0, top)) for _ in range(count)]
    elif kind == "special":  # ties plus NaN, -inf and +inf in first, middle and last places
        values = [float(rng.randint(-2, 2)) for _ in range(count)]
        for i in range(count):
            r = rng.random()
            if r < 0.10:
                values[i] = float("nan")
            elif r < 0.22:
                values[i] = float("-inf")
            elif r < 0.25:
                values[i] = float("inf")
    elif kind == "neginf":  # whole windows of -inf
        values = [float("-inf") if rng.random() < 0.8 else float(rng.randint(-3, 3)) for _ in range(count)]
    else:
        values = [rng.uniform(-1, 1) for _ in range(count)]
    return torch.tensor(values, dtype=dtype).reshape(shape)


def no_tap_windows(sizes, kernel, stride, padding, dilation, ceil_mode):
    """Whether some window has every tap in padding (possible with dilation): PyTorch then
    returns an index that is not a tap, and its backward would route to it."""
    dims = len(sizes)
    def axes(v):
        return v * dims if len(v) == 1 else v
    for L, k, s, p, d in zip(sizes, axes(kernel), axes(stride), axes(padding), axes(dilation)):
        span = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
        out = span // s + 1
        if ceil_mode and (out - 1) * s >= L + p:
            out -= 1
        for o in range(max(out, 0)):
            if not any(0 <= o * s - p + j * d < L for j in range(k)):
                return True
    return False


def random_case(rng):
    op = rng.choice(["max", "avg"])
    dims = rng.choice([1, 2, 2, 3])
    dtype = rng.choice([torch.float32, torch.float64])
    n = rng.choice([0, 1, 1, 2, 2]) if rng.random() < 0.1 else rng.choice([1, 2])
    c = rng.choice([1, 2, 3])
    top = {1: 9, 2: 7, 3: 5}[dims]
    sizes = [rng.randint(1, top) for _ in range(dims)]
    kernel = [rng.randint(1, 4) for _ in range(dims)]
    stride = [rng.randint(1, 3) for _ in range(dims)]
    padding = [rng.randint(0, k // 2) for k in kernel]
    dilation = [rng.choice([1, 1, 2, 3]) for _ in range(dims)] if op == "max" else [1] * dims
    case = {
        "op": "%s_pool%dd" % (op, dims), "n": n, "c": c, "sizes": sizes, "kernel_size": kernel,
        "stride": stride if rng.random() < 0.8 else [], "padding": padding, "dilation": dilation,
        "ceil_mode": rng.random() < 0.5, "count_include_pad": rng.random() < 0.6, "divisor_override": None,
        "unbatched": rng.random() < 0.08, "layout": "NHWC" if dims > 1 and rng.random() < 0.12 else "NCHW",
        "dtype": dtype, "kind": rng.choice(["ints", "ints", "special", "neginf", "real"]),
    }
    if op == "avg" and dims > 1 and rng.random() < 0.2:
        case["divisor_override"] = rng.choice([1, 2, 3, 5, -2])
    if rng.random() < 0.15:  # something PyTorch should refuse
        bad = rng.choice(["stride0", "negpad", "bigpad", "kernel0", "dilation0", "toobig", "div0"])
        axis = rng.randrange(dims)
        if bad == "stride0":
            case["stride"] = list(stride)
            case["stride"][axis] = 0
        elif bad == "negpad":
            case["padding"][axis] = -1
        elif bad == "bigpad":
            case["padding"][axis] = kernel[axis] // 2 + 1
        elif bad == "kernel0":
            case["kernel_size"][axis] = 0
        elif bad == "dilation0" and op == "max":
            case["dilation"][axis] = 0
        elif bad == "toobig":
            case["kernel_size"][axis] = sizes[axis] + 2 * case["padding"][axis] + 2
        elif bad == "div0" and op == "avg" and dims > 1:
            case["divisor_override"] = 0
    return case


def fixed_cases():
    """The edge cases of semantics.md with known answers, on top of the random ones."""
    base = {"n": 1, "c": 1, "stride": [], "padding": [0], "dilation": [1], "ceil_mode": False,
            "count_include_pad": True, "divisor_override": None, "unbatched": False, "layout": "NCHW",
            "dtype": torch.float64, "kind": "ints"}
    out = []
    def add(**kw):
        case = dict(base)
        case.update(kw)
        out.append(case)
    add(op="avg_pool1d", sizes=[5], kernel_size=[2], stride=[2], ceil_mode=True)          # divisor 1 at overhang
    add(op="avg_pool1d", sizes=[9], kernel_size=[7], stride=[3], padding=[3], ceil_mode=True)
    add(op="avg_pool1d", sizes=[1], kernel_size=[2], stride=[2], padding=[1], ceil_mode=True)
    add(op="max_pool1d", sizes=[1], kernel_size=[2], stride=[2], padding=[1], ceil_mode=True)
    add(op="max_pool1d", sizes=[2], kernel_size=[3], stride=[2], ceil_mode=True)          # negative span, 1 output
    add(op="avg_pool1d", sizes=[2], kernel_size=[3], stride=[2], ceil_mode=True)
    add(op="max_pool2d", sizes=[5, 4], kernel_size=[3, 2], stride=[1, 1], padding=[1, 1], dilation=[2, 3], kind="special")
    add(op="max_pool2d", sizes=[4, 4], kernel_size=[3, 3], stride=[1, 1], padding=[1, 1], kind="neginf")
    add(op="avg_pool3d", sizes=[2, 3, 3], kernel_size=[2, 2, 2], stride=[1, 1, 1], padding=[1, 1, 1])
    add(op="avg_pool3d", sizes=[2, 2, 2], kernel_size=[2, 2, 2])
    add(op="max_pool2d", n=0, sizes=[3, 3], kernel_size=[2])
    add(op="max_pool2d", sizes=[3, 3], kernel_size=[2], stride=[0])
    add(op="avg_pool2d", sizes=[3, 3], kernel_size=[2], divisor_override=0)
    add(op="avg_pool3d", sizes=[1, 3, 3], kernel_size=[2, 2, 2], padding=[1, 1, 1])     # input < kernel
    add(op="max_pool2d", sizes=[3, 3], kernel_size=[2, 2], padding=[1, 2])                # pad > k/2
    add(op="max_pool2d", sizes=[4, 4], kernel_size=[2, 2], padding=[2, 2], dilation=[3, 3])  # pad > k/2, <= k_eff/2
    add(op="max_pool2d", sizes=[2, 2], kernel_size=[5, 5])                                # output too small
    return out


def run(case, rng):
    dims = len(case["sizes"])
    fn = getattr(F, case["op"])
    shape = [case["n"], case["c"]] + case["sizes"]
    x = make_values(rng, shape, case["dtype"], case["kind"])
    record = {k: case[k] for k in ("op", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                   "count_include_pad", "divisor_override", "layout")}
    record["unbatched"] = case["unbatched"] and case["n"] == 1
    stride = case["stride"] or None
    channels_last = case["layout"] == "NHWC" and not record["unbatched"]
    record["layout"] = "NHWC" if channels_last else "NCHW"  # an unbatched input is (C, spatial...)
    fmt = (torch.channels_last if dims == 2 else torch.channels_last_3d) if channels_last else torch.contiguous_format
    def physical(t):  # NHWC cases are stored in channels-last element order
        if channels_last:
            return t.permute(0, *range(2, 2 + dims), 1)
        return t
    try:
        xin = x[0] if record["unbatched"] else x
        xin = xin.contiguous(memory_format=fmt)
        xin = xin.detach().requires_grad_(True)
        if case["op"].startswith("max"):
            y, idx = fn(xin, case["kernel_size"], stride, case["padding"], case["dilation"], case["ceil_mode"],
                        return_indices=True)
        elif dims == 1:
            y = fn(xin, case["kernel_size"], stride, case["padding"], case["ceil_mode"], case["count_include_pad"])
            idx = None
        else:
            y = fn(xin, case["kernel_size"], stride, case["padding"], case["ceil_mode"], case["count_include_pad"],
                   case["divisor_override"])
            idx = None
    except Exception as e:  # PyTorch refused the case: the oracle must refuse it too
        record["input"] = encode(physical(x[0] if record["unbatched"] else x))
        record["error"] = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return record
    record["no_tap_windows"] = case["op"].startswith("max") and no_tap_windows(
        case["sizes"], case["kernel_size"], list(stride or case["kernel_size"]), case["padding"],
        case["dilation"], case["ceil_mode"])
    dy = make_values(rng, list(y.shape), case["dtype"], "ints" if rng.random() < 0.5 else "real")
    if not record["no_tap_windows"]:  # PyTorch's index there is no tap; its backward would misroute
        y.backward(dy.contiguous(memory_format=fmt))
    record["input"] = encode(physical(xin))
    record["output"] = encode(physical(y))
    if idx is not None:
        record["indices"] = encode(physical(idx))
    record["grad_output"] = encode(physical(dy))
    if not record["no_tap_windows"]:
        record["grad_input"] = encode(physical(xin.grad))
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=800)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(1)  # one summation order: the oracle's
    rng = random.Random(args.seed)
    cases, crashed = [], 0
    pending = fixed_cases()
    while len(cases) < args.cases:
        case = pending.pop(0) if pending else random_case(rng)
        try:
            cases.append(run(case, rng))
        except Exception as e:  # outside the refusal path (e.g. in backward): report, go on
            crashed += 1
            print("case %r raised %s" % ({k: v for k, v in case.items() if k != "dtype"}, e))
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "seed": args.seed, "cases": cases}, f, separators=(",", ":"))
    refused = sum("error" in c for c in cases)
    print("wrote %d cases (%d refused by PyTorch, %d raised elsewhere) with torch %s to %s"
          % (len(cases), refused, crashed, torch.__version__, args.out))


if __name__ == "__main__":
    main()
