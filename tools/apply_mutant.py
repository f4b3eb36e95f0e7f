#!/usr/bin/env python3
"""Plant one mutant: replace the one match of PATTERN (a Python regex) in FILE with REPLACEMENT.
Exit 1, file untouched, unless the pattern matches exactly once (tools/mutants.txt's rows).

  tools/apply_mutant.py FILE PATTERN REPLACEMENT
"""
import re
import sys

path, pattern, repl = sys.argv[1:4]
text = open(path).read()
new, count = re.subn(pattern, repl, text)
if count != 1:
    sys.exit(f"pattern matched {count} times in {path}")
open(path, "w").write(new)
