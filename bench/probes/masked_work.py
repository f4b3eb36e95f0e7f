#!/usr/bin/env python3
"""The sum work of max.gather.masked against max.gather.counted's box scans, counted on the CPU from
the windows' argmax on random normal data (the benchmark's data), PyTorch's rules (first maximum,
padding never wins). Per dx element: the positions named by any window and by several, counted's
compares (every covering window of each position named by several), masked's adds (one per set
bit), and the iterations a warp of masked's write runs for its 32 consecutive positions (the most
bits among them: the lanes of one warp wait for its most-named position). Then the same in warp
iterations per element, a warp's being the most of its 32 lanes': counted's box scans (one
position named by several windows a lane, a tile's in position order), the set bits of those positions
(the lead of 2026-12-02: their masks instead of their boxes), the same positions of a tile's planes
handed to warps sorted by their count of bits (lanes of a warp then wait for similar counts), and masked as landed
(every position a lane).

  python3 bench/probes/masked_work.py      # about 10 s, the table of bench/results/2026-12-05_cpu_masked.md
"""
import itertools
import random

# label, plane, kernel, stride, padding, planes a tile of counted's GPU plan holds (its threads
# read a tile's windows in one round trip: 256 * 8 // windows a plane; one where a plane does not fit).
ROWS = [("SPP k5 19x19", (19, 19), 5, 1, 2, 5), ("SPP k9 19x19", (19, 19), 9, 1, 4, 5),
        ("SPP k13 19x19", (19, 19), 13, 1, 6, 5), ("SPPF k5 40x40", (40, 40), 5, 1, 2, 1),
        ("GoogLeNet k3s1 28x28", (28, 28), 3, 1, 1, 2), ("AlexNet k3s2 13x13", (13, 13), 3, 2, 0, 12),
        ("3D k3s1p1 16x28x28", (16, 28, 28), 3, 1, 1, 1)]


def plane_counts(rnd, shape, k, s, p):
    """Per position of one plane, how many windows name it."""
    dims = len(shape)
    out = [(size + 2 * p - k) // s + 1 for size in shape]
    strides = [1] * dims
    for a in range(dims - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    n = strides[0] * shape[0]
    x = [rnd.gauss(0, 1) for _ in range(n)]
    count = [0] * n
    for o in itertools.product(*[range(m) for m in out]):
        best, at = None, -1
        for t in itertools.product(*[range(k)] * dims):
            i = [o[a] * s - p + t[a] for a in range(dims)]
            if any(c < 0 or c >= shape[a] for a, c in enumerate(i)):
                continue
            flat = sum(i[a] * strides[a] for a in range(dims))
            if best is None or x[flat] > best:
                best, at = x[flat], flat
        if at >= 0:
            count[at] += 1

    def box(flat):
        windows = 1
        for a in range(dims):
            c = (flat // strides[a]) % shape[a]
            lo, hi = max(0, -(-(c + p - (k - 1)) // s)), min(out[a] - 1, (c + p) // s)
            windows *= hi - lo + 1
        return windows

    return count, box


def main():
    print("| row | named | by several | counted: compares per element | masked: adds per element | masked: warp iterations per 32 elements |")
    print("|---|---:|---:|---:|---:|---:|")
    rnd = random.Random(1)
    warps = []
    for name, shape, k, s, p, tile in ROWS:
        positions = named = several = scan = bits = warp = groups = 0
        scan_it = bits_it = sorted_it = 0
        tile_listed = []
        for plane in range(2 if len(shape) == 3 else 40):
            count, box = plane_counts(rnd, shape, k, s, p)
            positions += len(count)
            named += sum(1 for c in count if c)
            several += sum(1 for c in count if c >= 2)
            scan += sum(box(f) for f, c in enumerate(count) if c >= 2)
            bits += sum(count)
            for w in range(0, len(count), 32):
                warp += max(count[w:w + 32])
                groups += 1
            tile_listed += [(box(f), count[f]) for f, c in enumerate(count) if c >= 2]
            if (plane + 1) % tile == 0 or plane + 1 == (2 if len(shape) == 3 else 40):
                # A tile's listed positions in position order, as its threads take them.
                for g in range(0, len(tile_listed), 32):
                    scan_it += max(b for b, _ in tile_listed[g:g + 32])
                    bits_it += max(c for _, c in tile_listed[g:g + 32])
                by_count = sorted((c for _, c in tile_listed), reverse=True)
                sorted_it += sum(by_count[g] for g in range(0, len(by_count), 32))
                tile_listed = []
        print(f"| {name} | {100 * named / positions:.1f}% | {100 * several / positions:.1f}% | {scan / positions:.2f} | "
              f"{bits / positions:.2f} | {warp / groups:.1f} |")
        warps.append((name, scan_it / positions, bits_it / positions, sorted_it / positions, warp / positions))
    print()
    print("| row | counted's box scans | their set bits | their set bits, sorted by count | masked as landed |")
    print("|---|---:|---:|---:|---:|")
    for name, *its in warps:
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in its) + " |")


if __name__ == "__main__":
    main()
