"""A tensor as the golden files store it (tests/golden/*.json): dtype, shape and the little-endian
values in base64. Shared by make_golden.py and make_conv_golden.py."""
import base64
import struct

import torch

FORMATS = {torch.float32: ("float32", "f"), torch.float64: ("float64", "d"), torch.int64: ("int64", "q")}


def encode(t):
    t = t.detach().contiguous().cpu()
    name, fmt = FORMATS[t.dtype]
    values = t.flatten().tolist()
    return {"dtype": name, "shape": list(t.shape),
            "data": base64.b64encode(struct.pack("<%d%s" % (len(values), fmt), *values)).decode()}
