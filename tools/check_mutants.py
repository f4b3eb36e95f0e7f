#!/usr/bin/env python3
"""Every row of a mutant list (tools/mutants.txt's format, see tools/mutation_check.sh) still plants
its bug: the file exists, the pattern matches exactly once, and the replacement changes the text.
A refactor that moves the code a row names leaves the row "did not apply" in every later mutation
run, silently dropping its planted bug; this check fails instead, naming the row.

  tools/check_mutants.py REPO_ROOT [MUTANTS_FILE]   (default: REPO_ROOT/tools/mutants.txt)
"""
import os
import re
import sys


def problems(root, list_path):
    found = []
    with open(list_path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("|")
            if len(parts) < 4:
                found.append(f"line {number}: fewer than 4 fields (file|regex|replacement|description)")
                continue
            path, pattern, repl = parts[0], parts[1], parts[2]
            full = os.path.join(root, path)
            if not os.path.isfile(full):
                found.append(f"line {number}: {path} does not exist")
                continue
            text = open(full).read()
            try:
                new, count = re.subn(pattern, repl, text)
            except re.error as e:
                found.append(f"line {number}: bad regex ({e})")
                continue
            if count != 1:
                found.append(f"line {number}: pattern matches {count} times in {path} ({parts[3]})")
            elif new == text:
                found.append(f"line {number}: the replacement leaves {path} unchanged ({parts[3]})")
    return found


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = sys.argv[1]
    list_path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "tools", "mutants.txt")
    found = problems(root, list_path)
    for p in found:
        print(f"{list_path}: {p}")
    rows = sum(1 for l in open(list_path) if l.strip() and not l.startswith("#"))
    print(f"{rows} mutants, {len(found)} that no longer plant their bug")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
