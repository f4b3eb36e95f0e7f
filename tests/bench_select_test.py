#!/usr/bin/env python3
"""End to end on the CPU backend (issue 16): `poolgrad bench --suite networks` at batch 1 and one
channel writes a Google Benchmark report with its context; `poolgrad select` turns it into a
selection; `--variant auto` (select --explain, bench, check, backward) follows that selection.

Run by meson test (suite cpu) with POOLGRAD_EXE set to the built poolgrad.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

EXE = os.environ["POOLGRAD_EXE"]
failures = []


def run(*args, expect=0):
    p = subprocess.run([EXE, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append(f"poolgrad {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stderr[-2000:]}")
    return p


def check(cond, what):
    if not cond:
        failures.append(what)


def write_npy_f32(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(f"<{len(values)}f", *values))


def tune_and_compare(tmp, stem, backward, report):
    """poolgrad tune into a perf-db that --variant auto then reads first (select --explain, bench,
    backward --tune); a damaged perf-db is reported, not fatal; poolgrad compare passes a report
    against itself and flags a planted 20% slowdown."""
    db = os.path.join(tmp, "perfdb.json")
    tuned = run("tune", "--backend", "cpu", *stem, "--perfdb", db, "--min-time", "0.005", "--repetitions", "2")
    chosen = next((l.split()[1].rstrip(",") for l in tuned.stdout.splitlines() if l.startswith("chosen: ")), "?")
    check(f"recorded in {db}" in tuned.stdout, f"tune did not record its choice:\n{tuned.stdout}")
    entries = json.load(open(db))["entries"] if os.path.exists(db) else []
    check(len(entries) == 1 and entries[0]["variant"] == chosen, f"perf-db after tune: {entries}")
    explain = run("select", "--explain", "--backend", "cpu", "--perfdb", db, *stem).stdout
    check(f"chosen: {chosen} " in explain and "decided by: perf-db, exact problem" in explain,
          f"explain after tune:\n{explain}")
    auto_report = os.path.join(tmp, "tuned_auto.json")
    run("bench", "--backend", "cpu", *stem, "--variant", "auto", "--perfdb", db, "--min-time", "0.001", "--out", auto_report)
    timed = [b["name"].split("/")[0] for b in json.load(open(auto_report))["benchmarks"] if not b["name"].startswith("copy/")]
    check(timed == [chosen], f"bench --variant auto after tune timed {timed}, want [{chosen}]")
    # bench --variant auto --tune tunes a row the perf-db lacks, then times its pick.
    db2 = os.path.join(tmp, "perfdb2.json")
    other = ["--op", "avg_pool2d", "--input-size", "1,2,20,20", "--kernel-size", "3", "--stride", "1", "--padding", "1"]
    run("bench", "--backend", "cpu", *other, "--variant", "auto", "--tune", "--perfdb", db2, "--min-time", "0.001")
    check(os.path.exists(db2) and len(json.load(open(db2))["entries"]) == 1, "bench --tune recorded nothing")
    # backward --variant auto --tune: the problem tuned first, then run through the perf-db's choice.
    db3 = os.path.join(tmp, "perfdb3.json")
    run(*backward, "--backend", "cpu", "--tune", "--perfdb", db3)
    check(os.path.exists(db3) and len(json.load(open(db3))["entries"]) == 1, "backward --tune recorded nothing")
    bad = run("tune", "--backend", "cpu", "--perfdb", db, expect=2)
    check("--op" in bad.stderr, f"tune without a problem: {bad.stderr!r}")
    # A damaged perf-db: reported on stderr, auto still chooses.
    damaged = os.path.join(tmp, "damaged.json")
    with open(damaged, "w") as f:
        f.write("{ not json")
    p = run("select", "--explain", "--backend", "cpu", "--perfdb", damaged, *stem)
    check("is damaged" in p.stderr and "chosen: " in p.stdout, f"damaged perf-db: {p.stderr!r}")

    same = run("compare", report, report)
    check("0 regressions" in same.stdout, f"compare of a report with itself:\n{same.stdout}")
    planted = os.path.join(tmp, "planted.json")
    variant = next(b["name"].split("/")[0] for b in json.load(open(report))["benchmarks"] if not b["name"].startswith("copy/"))
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "tools", "plant_slowdown.py"),
                    report, variant, "1.2", planted], check=True, capture_output=True)
    slow = run("compare", report, planted, expect=1)
    check(f"SLOWER?" in slow.stdout and variant in slow.stdout, f"compare missed a planted slowdown:\n{slow.stdout}")
    run("compare", report, os.path.join(tmp, "nope.json"), expect=2)


def main():
    tmp = tempfile.mkdtemp(prefix="bench_select_")
    small = ["--suite", "networks", "--batch", "1", "--channels", "1"]

    listed = json.loads(run("bench", *small, "--list", "--json").stdout)
    names = [r["name"] for r in listed]
    check(len(names) >= 40, f"networks suite has {len(names)} rows, want >= 40")
    check(len(set(names)) == len(names), "networks row names are not unique (they are the join key)")
    check(all(r["shape"][:2] == [1, 1] for r in listed), "--batch 1 --channels 1 did not reach every row")
    kinds = {(r["op"], r["dims"], r["layout"], r["dtype"]) for r in listed}
    for want in [("max", 1, "NCHW", "float32"), ("avg", 3, "NCHW", "bfloat16"), ("max", 2, "NHWC", "float16")]:
        check(want in kinds, f"networks suite lacks a {want} row")

    report = os.path.join(tmp, "networks.json")
    bench = run("bench", "--backend", "cpu", *small, "--min-time", "0.001", "--out", report)
    check("[1/" in bench.stderr, "bench printed no progress line")
    doc = json.load(open(report))
    ctx = doc["context"]
    for key in ["device", "date", "commit", "copy_ceiling_GBps", "command", "suite", "timing"]:
        check(key in ctx, f"report context lacks {key}")
    check(ctx.get("timing") == "replay", f"report timing is {ctx.get('timing')}, want the default replay")
    # The CPU backend has no graphs: every benchmark says it was timed by batch.
    check(all(b.get("graph") == 0 for b in doc["benchmarks"] if not b.get("error_occurred")),
          "a CPU benchmark claims to be replayed from a graph")
    check(ctx.get("suite") == "networks", f"report suite is {ctx.get('suite')}")
    check(float(ctx.get("copy_ceiling_GBps", 0)) > 0, "copy ceiling not measured")
    timed_rows = set()
    for b in doc["benchmarks"]:
        check(not b.get("error_occurred"), f"{b['name']}: {b.get('error_message')}")
        if not b["name"].startswith("copy/"):
            timed_rows.add(b["name"].split("/", 1)[1].rsplit("/manual_time", 1)[0])
    check(timed_rows == set(names), f"rows without a timed variant: {sorted(set(names) - timed_rows)[:5]}")

    selection = os.path.join(tmp, "selection.json")
    out = run("select", report, "--out", selection).stdout
    table = json.load(open(selection))
    check(table["format"] == "poolgrad-selection/2", "selection format")
    check(len(table["problems"]) == len(names), f"{len(table['problems'])} measured problems in the selection, want {len(names)}")
    check("model" in table and "log2_taps" in table["model"], "the selection has no model weights")
    check(len(table["classes"]) >= 20, f"only {len(table['classes'])} classes from the networks suite")
    check("classes from" in out, "select printed no summary")

    # The resnet50 stem row at this size: a measured problem, whose fastest variant auto must pick.
    stem = ["--op", "max_pool2d", "--input-size", "1,1,112,112", "--kernel-size", "3", "--stride", "2", "--padding", "1"]
    explain = run("select", "--explain", "--backend", "cpu", "--selection", selection, *stem).stdout
    cls = next(line[len("class: "):] for line in explain.splitlines() if line.startswith("class: "))
    check(cls in table["classes"], f"explained class '{cls}' is not in the selection")
    line = next(l[len("problem: "):] for l in explain.splitlines() if l.startswith("problem: "))
    measured = [p for p in table["problems"] if p["problem"] == line]
    check(len(measured) == 1, f"the stem problem is not one measured problem of the selection: {line}")
    winner = min(measured[0]["times"], key=lambda t: t["ms"])["variant"] if measured else "?"
    check(f"chosen: {winner} " in explain, f"explain did not choose the problem's fastest {winner}:\n{explain}")
    check(f"selection {selection} (exact problem) ranks" in explain, "explain did not say the user's selection decided")
    check("decided by: selection" in explain, "explain did not name the deciding layer")

    auto_report = os.path.join(tmp, "auto.json")
    run("bench", "--backend", "cpu", *stem, "--variant", "auto", "--selection", selection,
        "--min-time", "0.001", "--out", auto_report)
    timed = [b["name"].split("/")[0] for b in json.load(open(auto_report))["benchmarks"] if not b["name"].startswith("copy/")]
    check(timed == [winner], f"bench --variant auto timed {timed}, want [{winner}]")

    # POOLGRAD_SELECTION is read like --selection; check --variant auto runs only chosen variants.
    env_explain = subprocess.run([EXE, "select", "--explain", "--backend", "cpu", *stem], capture_output=True, text=True,
                                 env={**os.environ, "POOLGRAD_SELECTION": selection}).stdout
    check(f"selection {selection} (exact problem) ranks" in env_explain, "POOLGRAD_SELECTION was not read")
    run("check", "--variant", "auto", "--selection", selection)

    # backward --variant auto reads --selection too; a file that is not a selection is refused by name.
    x, dy = os.path.join(tmp, "x.npy"), os.path.join(tmp, "dy.npy")
    write_npy_f32(x, (1, 1, 8, 8), [float((i * 7) % 11) for i in range(64)])
    write_npy_f32(dy, (1, 1, 4, 4), [1.0] * 16)
    backward = ["backward", "--op", "max_pool2d", "--kernel-size", "2", "--input", x, "--grad-output", dy,
                "--output", os.path.join(tmp, "dx.npy"), "--variant", "auto"]
    run(*backward, "--selection", selection)
    bad = run(*backward, "--selection", report, expect=2)
    check("not a poolgrad-selection" in bad.stderr, f"backward with a report as --selection: {bad.stderr!r}")

    rows_file = os.path.join(tmp, "rows.txt")
    with open(rows_file, "w") as f:
        f.write("# mine\nmy stem: --op max_pool2d --input-size 2,8,30,30 --kernel-size 3 --stride 2 --padding 1 --layout NHWC\n"
                "my 3d: --op max_pool3d --input-size 2,8,4,6,10 --kernel-size 2 --layout NDHWC\n")
    listed = run("bench", "--rows", rows_file, "--list").stdout.splitlines()
    # --input-size is N,C,spatial whatever the layout's name (NDHWC is NHWC's 3D name).
    check(listed == ["my stem: maxpool2d_bwd (2, 8, 30, 30) k3s2p1 CL float32 idx=int64",
                     "my 3d: maxpool3d_bwd (2, 8, 4, 6, 10) k2s2p0 CL float32 idx=int64"], f"--rows listed {listed}")
    with open(rows_file, "a") as f:
        f.write("bad: --op max_pool2d --input-size 2,8,30,30 --kernel-size 3 --padding 2\n")
    bad = run("bench", "--rows", rows_file, "--list", expect=2)
    check("line 4" in bad.stderr and "padding" in bad.stderr, f"bad rows file line: {bad.stderr!r}")

    # Rows with a batch above 1: each variant is verified on the row's full problem (the oracle's
    # one-sample answer repeated over the batch) and that very run is timed; the progress says
    # each benchmark's wall time and each row's.
    batch_rows = os.path.join(tmp, "batch_rows.txt")
    with open(batch_rows, "w") as f:
        f.write("b3 max2d: --op max_pool2d --input-size 3,5,20,20 --kernel-size 3 --stride 2 --padding 1\n"
                "b3 max2d cl f16: --op max_pool2d --input-size 3,5,20,20 --kernel-size 3 --stride 2 --layout NHWC --dtype float16\n"
                "b3 avg3d cl: --op avg_pool3d --input-size 3,2,6,8,8 --kernel-size 2 --stride 2 --layout NHWC\n"
                "b3 max1d dilated: --op max_pool1d --input-size 3,4,50 --kernel-size 3 --stride 1 --padding 1 --dilation 2\n")
    batch_report = os.path.join(tmp, "batch.json")
    batch = run("bench", "--backend", "cpu", "--rows", batch_rows, "--min-time", "0.001", "--out", batch_report)
    batch_runs = [b for b in json.load(open(batch_report))["benchmarks"] if not b["name"].startswith("copy/")]
    check(len(batch_runs) >= 8, f"only {len(batch_runs)} benchmarks on the batch-3 rows")
    for b in batch_runs:
        check(not b.get("error_occurred"), f"batch-3 row {b['name']}: {b.get('error_message')}")
    check(batch.stderr.count("row done: b3 ") == 4, f"not one 'row done' line per row:\n{batch.stderr[-2000:]}")
    check(" s wall (" in batch.stderr, "no wall time in the progress lines")

    bad = run("bench", "--suite", "nope", "--list", expect=2)
    check(bad.stderr.count("\n") == 1 and "--suite" in bad.stderr, f"bad --suite: {bad.stderr!r}")
    bad = run("select", "--explain", "--op", "max_pool2d", "--input-size", "1,1,8", "--kernel-size", "2", expect=2)
    check("--input-size" in bad.stderr, f"bad --input-size: {bad.stderr!r}")
    bad = run("select", "--explain", "--selection", report, *stem, expect=2)
    check("not a poolgrad-selection" in bad.stderr, f"a report as --selection: {bad.stderr!r}")

    tune_and_compare(tmp, stem, backward, batch_report)

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures; {len(names)} rows, {len(timed_rows)} timed, {len(table['classes'])} classes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
