#!/usr/bin/env python3
"""The include graph against the layers: no file includes one of a higher layer, or of another
layer on its own floor. Exit 0 when the tree holds to it; 1 with one line per offending include.

  tools/check_layers.py [ROOT]      check the tree (default: this script's repository)
  tools/check_layers.py --self-test plant an upward include in a scratch tree and expect it caught

The floors, bottom first (docs/layout.md says what each holds):
  0 model      src/model/, the public C plugin ABI (include/poolgrad/plugin.h, version.h)
  1 reference  reference/            (the oracle: on the model alone)
  1 kernels    kernels/              (on the model alone; never the oracle)
  2 harness    src/harness/
  3 fuzz       fuzz/                 3 bench  bench/
  4 cli        src/cli/              4 api    src/api/, include/poolgrad/poolgrad.hpp
  5 tests      tests/, examples/, fuzz/parsers/ (fuzzers of the command line), any *_test.cpp
A file may include its own layer and any layer on a lower floor. Every source file of the tree
must sit in a layer: a new folder is placed here before it can be built on.
"""
import os
import re
import shutil
import sys
import tempfile

# (floor, layer, path prefixes); the first match wins, so narrower prefixes come first.
LAYERS = [
    (5, "tests", ["tests/", "examples/", "fuzz/parsers/"]),
    (0, "model", ["src/model/", "include/poolgrad/plugin.h", "include/poolgrad/version.h"]),
    (1, "reference", ["reference/"]),
    (1, "kernels", ["kernels/"]),
    (2, "harness", ["src/harness/"]),
    (3, "fuzz", ["fuzz/"]),
    (3, "bench", ["bench/"]),
    (4, "cli", ["src/cli/"]),
    (4, "api", ["src/api/", "include/poolgrad/poolgrad.hpp"]),
]
SOURCE = re.compile(r"\.(c|h|cc|cpp|hpp|cu)(\.in)?$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SKIP = ("build", ".git", "shared", "bench/results", "fuzz/corpus", "fuzz/parsers/corpus")


def layer_of(path):
    if path.endswith("_test.cpp"):
        return 5, "tests"
    for floor, name, prefixes in LAYERS:
        if any(path == p or path.startswith(p) for p in prefixes):
            return floor, name
    return None


def sources(root):
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel_top, d)) not in SKIP
                   and not d.startswith(("build", "."))]
        for f in files:
            if SOURCE.search(f):
                yield os.path.normpath(os.path.join(rel_top, f))


def resolve(root, including, name):
    """The included file as a tree path, or None for a system or generated header."""
    for base in ("", "include/", os.path.dirname(including) + "/"):
        cand = os.path.normpath(base + name)
        if os.path.isfile(os.path.join(root, cand)) or os.path.isfile(os.path.join(root, cand + ".in")):
            return cand
    return None


def check(root):
    problems = []
    for path in sorted(sources(root)):
        mine = layer_of(path)
        if mine is None:
            problems.append(f"{path}: in no layer (place its folder in tools/check_layers.py)")
            continue
        text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            target = resolve(root, path, m.group(1))
            if target is None:
                continue
            theirs = layer_of(target)
            if theirs is None or theirs == mine:
                continue
            if theirs[0] >= mine[0]:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {mine[1]} (floor {mine[0]}) includes {target}, "
                                f"{theirs[1]} (floor {theirs[0]})")
    return problems


def self_test():
    """A scratch tree with one allowed and three forbidden includes: all three must be named."""
    tmp = tempfile.mkdtemp(prefix="check_layers.")
    try:
        files = {
            "src/model/problem.hpp": "#pragma once\n",
            "src/harness/verify.hpp": '#include "src/model/problem.hpp"\n',
            "reference/pool_reference.hpp": '#include "kernels/common/numeric.hpp"\n',
            "kernels/common/numeric.hpp": '#include "src/harness/verify.hpp"\n',
            "src/model/domain.hpp": '#include "src/harness/verify.hpp"\n',
        }
        for rel, body in files.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as out:
                out.write(body)
        found = check(tmp)
        want = ["reference/pool_reference.hpp:1: reference", "kernels/common/numeric.hpp:1: kernels",
                "src/model/domain.hpp:1: model"]
        missing = [w for w in want if not any(p.startswith(w) for p in found)]
        if missing or len(found) != len(want):
            print("self-test failed: expected", want, "got", found)
            return 1
        print(f"self-test: {len(found)} planted upward includes caught, the allowed one passed")
        return 0
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layers")
        return 1
    print(f"layers: {sum(1 for _ in sources(root))} files, no include runs up or across")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
