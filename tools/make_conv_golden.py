#!/usr/bin/env python3
"""Builds the PyTorch golden set for the convolution oracle: tests/golden/pytorch_conv.json.

Every case is one torch.nn.functional.conv1d/conv2d/conv3d problem on the CPU (no bias): the
forward output y, and the input gradient dx of a random grad_output dy (autograd, which is
torch.nn.grad.convNd_input), or the first line of the error PyTorch raised. Cases cover groups
(depthwise among them), dilation, stride, asymmetric sizes, padding as ints, 'same' (an even
kernel makes it asymmetric) and 'valid', asymmetric pads through F.pad (the CLI's --pads),
unbatched inputs, channels-last, f64 and f32.

Tensors are stored in the case's layout axis order, as the CLI reads and writes them (NHWC:
x (N, spatial..., C), w (K, kernel..., C/groups), y and dy (N, spatial..., K)), as base64 of
their little-endian bytes.

    python3 tools/make_conv_golden.py --out tests/golden/pytorch_conv.json [--cases 300] [--rejected 40] [--seed 1]

Needs only torch (no numpy). Before writing, it recomputes some cases with a naive loop written
from the definition (and 'same' padded as poolgrad pads it) and stops if PyTorch disagrees.
tests/conv_golden_test.cpp reads the file.
"""
import argparse
import itertools
import json
import random
import sys

import torch
import torch.nn.functional as F
from golden_encode import encode

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def values(rng, shape, dtype, kind):
    count = 1
    for d in shape:
        count *= d
    if kind == "ints":  # small integers: every sum exact in f64, whatever PyTorch's order
        data = [float(rng.randint(-3, 3)) for _ in range(count)]
    else:
        data = [rng.uniform(-1, 1) for _ in range(count)]
    return torch.tensor(data, dtype=DTYPES[dtype]).reshape(shape)


def per_axis(v, dims):
    return list(v) * dims if len(v) == 1 else list(v)


def resolved_pads(case):
    """(begins, ends) per axis as poolgrad pads them: 'same' puts dilation*(kernel-1) in all,
    the smaller half at the begin side; 'valid' nothing."""
    dims = len(case["kernel_size"])
    if case.get("pads"):
        return case["pads"][:dims], case["pads"][dims:]
    if case["padding"] == "valid":
        return [0] * dims, [0] * dims
    if case["padding"] == "same":
        total = [d * (k - 1) for d, k in zip(per_axis(case["dilation"], dims), case["kernel_size"])]
        return [t // 2 for t in total], [t - t // 2 for t in total]
    p = per_axis(case["padding"], dims)
    return p, p


def random_case(rng):
    dims = rng.choice([1, 2, 2, 3])
    groups = rng.choice([1, 1, 1, 2, 3])
    depthwise = groups > 1 and rng.random() < 0.4
    cpg = 1 if depthwise else rng.randint(1, 3)
    kpg = rng.choice([1, 2]) if depthwise else rng.randint(1, 3)
    kernel = [rng.randint(1, 3 if dims == 3 else 4) for _ in range(dims)]
    stride = [rng.randint(1, 3) for _ in range(dims)]
    dilation = [rng.choice([1, 1, 2, 3]) for _ in range(dims)]
    mode = rng.choice(["int", "int", "int", "same", "valid", "pads"])
    case = {
        "op": "conv%dd" % dims, "n": rng.choice([1, 2]), "c": groups * cpg, "k": groups * kpg, "groups": groups,
        "kernel_size": kernel, "dilation": dilation, "stride": stride, "padding": 0, "pads": None,
        "unbatched": rng.random() < 0.08,
        "layout": "NHWC" if dims > 1 and rng.random() < 0.2 else "NCHW",
        "dtype": rng.choice(["float32", "float64"]), "kind": rng.choice(["ints", "real"]),
    }
    if mode == "same":
        case["stride"] = [1] * dims
        case["padding"] = "same"
    elif mode == "valid":
        case["padding"] = "valid"
    elif mode == "pads":
        case["pads"] = [rng.randint(0, k + 1) for k in kernel] + [rng.randint(0, k + 1) for k in kernel]
    else:
        case["padding"] = [rng.randint(0, k) for k in kernel]
    # One value for all axes sometimes, as the CLI and PyTorch both accept.
    for key in ("stride", "dilation") + (("padding",) if mode == "int" else ()):
        if len(set(case[key])) == 1 and rng.random() < 0.5:
            case[key] = case[key][:1]
    begins, ends = resolved_pads(case)
    top = {1: 10, 2: 7, 3: 4}[dims]
    case["sizes"] = [max(1, d * (k - 1) + 1 - b - e) + rng.randint(0, top)
                     for d, k, b, e in zip(per_axis(case["dilation"], dims), kernel, begins, ends)]
    return case


# Each kind of refusal, with the word poolgrad's message must contain: the parameter it names.
REFUSALS = ["stride0", "stride_negative", "stride_count", "dilation0", "dilation_count", "padding_negative",
            "padding_count", "padding_string", "same_strided", "groups0", "groups_c", "groups_k",
            "weight_channels", "weight_rank", "kernel_too_big", "input_rank"]
CONCERNS = {"stride0": "stride", "stride_negative": "stride", "stride_count": "stride", "dilation0": "dilation",
            "dilation_count": "dilation", "padding_negative": "padding", "padding_count": "padding",
            "padding_string": "padding", "same_strided": "stride", "groups0": "groups", "groups_c": "groups",
            "groups_k": "groups", "weight_channels": "weight", "weight_rank": "weight", "kernel_too_big": "kernel",
            "input_rank": "input"}


def refused_case(rng, kind):
    """A case PyTorch must refuse: a valid random case with one thing broken."""
    while True:
        case = random_case(rng)
        dims = len(case["sizes"])
        if case["pads"] is None and not case["unbatched"] and (kind not in ("groups_c", "groups_k") or case["groups"] > 1):
            break
    case["dtype"] = "float64"
    case["layout"] = "NCHW"  # a tensor of the wrong rank has no channels-last format
    axis = rng.randrange(dims)
    case["stride"] = per_axis(case["stride"], dims)
    case["dilation"] = per_axis(case["dilation"], dims)
    if not isinstance(case["padding"], str):
        case["padding"] = per_axis(case["padding"], dims) if isinstance(case["padding"], list) else [0] * dims
    if kind == "stride0":
        case["stride"][axis] = 0
    elif kind == "stride_negative":
        case["stride"][axis] = -1
    elif kind == "stride_count":
        case["stride"] = case["stride"] + [1]
    elif kind == "dilation0":
        case["dilation"][axis] = 0
    elif kind == "dilation_count":
        case["dilation"] = case["dilation"] + [1]
    elif kind == "padding_negative":
        case["padding"] = [0] * dims
        case["padding"][axis] = -1
    elif kind == "padding_count":
        case["padding"] = [0] * (dims + 1)
    elif kind == "padding_string":
        case["padding"] = "full"
    elif kind == "same_strided":
        case["padding"] = "same"
        case["stride"][axis] = 2
    elif kind == "groups0":
        case["groups"] = 0
    elif kind == "groups_c":  # groups divides K but not C; the weight has C // groups channels
        case["c"] += 1
    elif kind == "groups_k":
        case["k"] += 1
    elif kind == "weight_channels":
        case["weight_channels"] = case["c"] // case["groups"] + 1
    elif kind == "weight_rank":
        case["weight_rank_drop"] = True
    elif kind == "kernel_too_big":
        case["padding"] = [0] * dims
        case["kernel_size"][axis] = case["sizes"][axis] + 1
        case["dilation"][axis] = 1
    elif kind == "input_rank":
        case["input_rank_add"] = True
    case["refusal"] = kind
    case["concerns"] = CONCERNS[kind]
    return case


def fixed_cases():
    """Named cases on top of the random ones."""
    base = {"n": 1, "c": 1, "k": 1, "groups": 1, "stride": [1], "padding": [0], "pads": None, "dilation": [1],
            "unbatched": False, "layout": "NCHW", "dtype": "float64", "kind": "ints"}
    out = []

    def add(**kw):
        case = dict(base)
        case.update(kw)
        out.append(case)
    add(op="conv1d", sizes=[5], kernel_size=[3])                                             # plain correlation
    add(op="conv1d", sizes=[7], kernel_size=[2], stride=[3])                                 # gaps: exact zeros
    add(op="conv1d", sizes=[5], kernel_size=[2], stride=[2], dilation=[2], pads=[1, 2])      # asymmetric pads
    add(op="conv1d", sizes=[6], kernel_size=[4], padding="same")                             # 1 before, 2 after
    add(op="conv2d", sizes=[5, 6], kernel_size=[2, 4], padding="same", dilation=[3, 1], c=2, k=3)
    add(op="conv2d", sizes=[5, 6], kernel_size=[3, 2], padding="valid", stride=[2, 1], c=2, k=2)
    add(op="conv2d", sizes=[6, 5], kernel_size=[3, 3], padding=[1], c=4, k=4, groups=4)   # depthwise
    add(op="conv2d", sizes=[6, 5], kernel_size=[3, 3], padding=[1], c=4, k=8, groups=4)   # depthwise, multiplier 2
    add(op="conv2d", sizes=[4, 4], kernel_size=[1, 1], c=6, k=4, groups=2, n=2)           # grouped 1x1
    add(op="conv2d", sizes=[4, 5], kernel_size=[2, 3], padding=[4, 4], c=2, k=2)          # windows all in padding
    add(op="conv2d", sizes=[5, 7], kernel_size=[3, 2], stride=[2, 3], dilation=[2, 2], c=3, k=6, groups=3,
        layout="NHWC", dtype="float32", kind="real")
    add(op="conv2d", sizes=[4, 4], kernel_size=[3, 3], padding=[1], c=2, k=2, unbatched=True)
    add(op="conv3d", sizes=[3, 4, 5], kernel_size=[2, 3, 2], padding="same", c=2, k=2)
    add(op="conv3d", sizes=[4, 3, 5], kernel_size=[2, 2, 3], stride=[2, 1, 2], padding=[1, 0, 1], c=2, k=4,
        groups=2, layout="NHWC", dtype="float32", kind="real")
    add(op="conv3d", sizes=[4, 4, 4], kernel_size=[3, 3, 3], padding=[1], c=3, k=3, groups=3,
        layout="NHWC")                                                                     # depthwise 3D
    return out


def physical(t, channels_last):
    """A logical (N, C, spatial...) or (K, C/g, kernel...) tensor in the layout's axis order."""
    if not channels_last:
        return t
    return t.permute(0, *range(2, t.dim()), 1)


def tensors(case, rng):
    dims = len(case["sizes"])
    x = values(rng, [case["n"], case["c"]] + case["sizes"], case["dtype"], case["kind"])
    groups = case["groups"] if case["groups"] > 0 else 1
    w_shape = [case["k"], case.get("weight_channels", case["c"] // groups)] + case["kernel_size"]
    if case.get("weight_rank_drop"):
        w_shape = w_shape[:-1]
    w = values(rng, w_shape, case["dtype"], case["kind"])
    return dims, x, w


def run(case, rng):
    dims, x, w = tensors(case, rng)
    fn = getattr(F, case["op"])
    record = {k: case[k] for k in ("op", "stride", "padding", "pads", "dilation", "groups", "layout", "kind")}
    record["unbatched"] = case["unbatched"] and case["n"] == 1
    channels_last = case["layout"] == "NHWC" and not record["unbatched"]
    record["layout"] = "NHWC" if channels_last else "NCHW"
    fmt = (torch.channels_last if dims == 2 else torch.channels_last_3d) if channels_last else torch.contiguous_format
    xin = x[0] if record["unbatched"] else x
    if case.get("input_rank_add"):
        xin = xin.unsqueeze(0)  # one axis too many
    xin = xin.contiguous(memory_format=fmt).detach().requires_grad_(True)
    wm = w.contiguous(memory_format=fmt)
    padding = case["padding"]
    if case["pads"]:
        pairs = []
        for a in reversed(range(dims)):  # F.pad takes the last axis first
            pairs += [case["pads"][a], case["pads"][dims + a]]
        padding = 0
    try:
        xp = F.pad(xin, pairs) if case["pads"] else xin
        y = fn(xp, wm, None, case["stride"], padding, case["dilation"], case["groups"])
    except Exception as e:  # PyTorch refused the case: poolgrad must refuse it too
        text = str(e).strip()
        record["error"] = text.splitlines()[0] if text else type(e).__name__
        record["refusal"] = case.get("refusal")
        record["concerns"] = case.get("concerns")
        record["input"] = encode(physical(xin.detach(), channels_last))
        record["weight"] = encode(physical(w, channels_last))
        return record, None
    if case.get("refusal"):
        print("note: PyTorch accepted the refusal %s (%s); kept as an accepted case" % (case["refusal"], case["op"]))
    dy = values(rng, list(y.shape), case["dtype"], case["kind"])  # ints stay exact through backward too
    y.backward(dy.contiguous(memory_format=fmt))
    record["input"] = encode(physical(xin.detach(), channels_last))
    record["weight"] = encode(physical(w, channels_last))
    record["output"] = encode(physical(y.detach(), channels_last))
    record["grad_output"] = encode(physical(dy, channels_last))
    record["grad_input"] = encode(physical(xin.grad, channels_last))
    return record, (xin.detach(), w, y.detach(), dy, xin.grad.detach())


def naive(case, x, w, dy):
    """y = conv(x, w) and dx = its adjoint applied to dy, by loops over the definition, in f64,
    with the padding resolved by resolved_pads()."""
    dims = len(case["sizes"])
    unbatched = x.dim() == dims + 1
    if unbatched:
        x, dy = x.unsqueeze(0), dy.unsqueeze(0)
    x, w, dy = x.double(), w.double(), dy.double()
    stride, dilation = per_axis(case["stride"], dims), per_axis(case["dilation"], dims)
    begins, ends = resolved_pads(case)
    n, c = x.shape[0], x.shape[1]
    k, cpg = w.shape[0], w.shape[1]
    kpg = k // case["groups"]
    sizes, kernel = list(x.shape[2:]), list(w.shape[2:])
    out = [(s + b + e - d * (kk - 1) - 1) // st + 1
           for s, b, e, d, kk, st in zip(sizes, begins, ends, dilation, kernel, stride)]
    y = torch.zeros([n, k] + out, dtype=torch.float64)
    dx = torch.zeros_like(x)
    for b_, kk in itertools.product(range(n), range(k)):
        g = kk // kpg
        for o in itertools.product(*[range(v) for v in out]):
            for cc, t in itertools.product(range(cpg), itertools.product(*[range(v) for v in kernel])):
                pos = [oa * sa - ba + ta * da for oa, sa, ba, ta, da in zip(o, stride, begins, t, dilation)]
                if all(0 <= p < s for p, s in zip(pos, sizes)):
                    xi = (b_, g * cpg + cc) + tuple(pos)
                    wi = (kk, cc) + tuple(t)
                    yi = (b_, kk) + tuple(o)
                    y[yi] += x[xi] * w[wi]
                    dx[xi] += dy[yi] * w[wi]
    if unbatched:
        y, dx = y[0], dx[0]
    return y, dx


def self_check(checks):
    """PyTorch against the naive loops, and autograd's dx against torch.nn.grad.convNd_input.
    Returns the failures as lines."""
    bad = []
    for case, (x, w, y, dy, dx) in checks:
        ny, ndx = naive(case, x, w, dy)
        tol = 1e-9 if x.dtype == torch.float64 else 1e-4
        for name, got, want in (("y", y, ny), ("dx", dx, ndx)):
            if got.shape != want.shape:
                bad.append("%s %s: shape %s, naive %s" % (case["op"], name, list(got.shape), list(want.shape)))
            elif (got.double() - want).abs().max().item() > tol * (1 + want.abs().max().item()):
                bad.append("%s %s differs from the naive loop: %r" % (case["op"], name,
                           {k: v for k, v in case.items() if k in ("sizes", "kernel_size", "stride", "padding",
                                                                    "pads", "dilation", "groups")}))
        if isinstance(case["padding"], list) and not case["pads"]:
            grad_input = getattr(torch.nn.grad, case["op"] + "_input")
            dims = len(case["sizes"])
            xb, dyb = (x, dy) if x.dim() == dims + 2 else (x.unsqueeze(0), dy.unsqueeze(0))
            alt = grad_input(list(xb.shape), w, dyb, per_axis(case["stride"], dims), per_axis(case["padding"], dims),
                             per_axis(case["dilation"], dims), case["groups"])
            if x.dim() != dims + 2:
                alt = alt[0]
            if (alt - dx).abs().max().item() > (1e-9 if x.dtype == torch.float64 else 1e-4) * (1 + dx.abs().max().item()):
                bad.append("%s: autograd dx differs from torch.nn.grad.%s_input" % (case["op"], case["op"]))
    return bad


def fit(records, max_bytes):
    """Drops the accepted cases with the largest tensors, refusals never, until the file fits
    max_bytes (the repository keeps data files under 1 MiB); returns (records, dropped)."""
    def size(r):
        return len(json.dumps(r, separators=(",", ":")))
    total = len(json.dumps({"cases": records}, separators=(",", ":"))) + 200
    by_size = sorted((i for i, r in enumerate(records) if "error" not in r), key=lambda i: -size(records[i]))
    drop = set()
    for i in by_size:
        if total <= max_bytes:
            break
        drop.add(i)
        total -= size(records[i]) + 1
    return [r for i, r in enumerate(records) if i not in drop], len(drop)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=300, help="accepted cases")
    ap.add_argument("--rejected", type=int, default=40, help="cases PyTorch refuses")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--checks", type=int, default=40, help="cases recomputed by the naive loop")
    ap.add_argument("--max-bytes", type=int, default=1000000,
                    help="drop the largest accepted cases until the file is at most this long")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    records, checks, crashed = [], [], 0
    pending = fixed_cases()
    accepted = refused = tried = 0
    while accepted < args.cases or refused < args.rejected:
        if crashed > 20:
            sys.exit("stopping: %d cases raised outside PyTorch's refusals" % crashed)
        if pending:
            case = pending.pop(0)
        elif refused < args.rejected and (accepted >= args.cases or rng.random() < 0.15):
            case = refused_case(rng, REFUSALS[tried % len(REFUSALS)])  # each kind in turn
            tried += 1
        else:
            case = random_case(rng)
        try:
            record, result = run(case, rng)
        except Exception as e:  # outside the refusal path (e.g. in backward): report, go on
            crashed += 1
            print("case %r raised %s" % (case, e))
            continue
        if result is None:
            if not case.get("refusal"):
                print("note: PyTorch refused a random case: %s" % record["error"])
            refused += 1
        else:
            accepted += 1
            macs = result[2].numel() * result[1][0].numel()  # y elements x (C/groups x taps)
            if len(checks) < args.checks and macs < 5000:
                checks.append((case, result))
        records.append(record)
    bad = self_check(checks)
    if bad:
        print("self-check FAILED (%d of %d cases); nothing written:" % (len(bad), len(checks)))
        print("\n".join(bad))
        sys.exit(1)
    records, dropped = fit(records, args.max_bytes)
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "seed": args.seed, "dropped_for_size": dropped, "cases": records}, f,
                  separators=(",", ":"))
    print("wrote %d cases (%d accepted, %d dropped for size, %d refused by PyTorch, %d raised elsewhere; %d "
          "recomputed by the naive loop) with torch %s to %s" % (len(records), accepted - dropped, dropped, refused,
                                                                 crashed, len(checks), torch.__version__, args.out))


if __name__ == "__main__":
    main()
