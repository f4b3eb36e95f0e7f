#!/usr/bin/env python3
"""The docs cannot rot: every poolgrad command in the shell blocks of README.md, docs/*.md and
bench/README.md names a subcommand the executable has and only options that subcommand's --help
lists; the quick CPU-only ones (version, devices, variants, one variant's check, a suite's rows,
select --explain) are run and must exit 0; every relative link names a file or folder that exists.

  POOLGRAD_EXE=build/src/poolgrad tests/docs_test.py SOURCE_ROOT
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

# Run as written (on the CPU backend, in a scratch directory): quick, no input files, no GPU.
RUNNABLE = [
    lambda sub, args: sub == "--version",
    lambda sub, args: sub in ("devices", "variants") and not any(a.startswith("--plugin") for a in args),
    lambda sub, args: sub == "check" and "--variant" in args and not any(a.startswith("--plugin") for a in args),
    lambda sub, args: sub == "bench" and "--list" in args,
    lambda sub, args: sub == "select" and "--explain" in args,
]


def shell_blocks(path):
    """The lines of every ```sh block, continuation lines joined."""
    text = open(path, encoding="utf-8").read()
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.split("\n"):
            if line.strip():
                yield line


def commands(line):
    """Each poolgrad invocation in one shell line: (subcommand, args)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError as e:
        raise SystemExit(f"unparsable shell line ({e}): {line}")
    found = []
    for i, w in enumerate(words):
        if w in ("poolgrad", "build/src/poolgrad") and i + 1 < len(words):
            rest = []
            for a in words[i + 1:]:
                if a in ("&&", "||", ";", "|") or a.startswith(">"):
                    break
                rest.append(a)
            found.append((rest[0], rest[1:]))
    return found


def broken_links(page, root):
    """Relative markdown links of `page` whose target does not exist."""
    text = open(page, encoding="utf-8").read()
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#")[0]))
        if not os.path.exists(path):
            bad.append(f"{os.path.relpath(page, root)}: link to {target}: no such file")
    return bad


def help_of(exe, sub):
    args = [exe, "--help"] if sub in ("--version", "--help") else [exe, sub, "--help"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def main():
    root = sys.argv[1]
    exe = os.path.abspath(os.environ["POOLGRAD_EXE"])
    pages = [os.path.join(root, "README.md"), os.path.join(root, "bench", "README.md")]
    pages += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    rc, top_help = help_of(exe, "--help")
    if rc != 0:
        print(f"{exe} --help: exit {rc}")
        return 1
    helps = {}
    failures = []
    checked = ran = 0
    scratch = tempfile.mkdtemp(prefix="docs_test.")
    env = dict(os.environ, POOLGRAD_PERFDB=os.path.join(scratch, "perfdb.json"))
    for page in pages:
        name = os.path.relpath(page, root)
        failures += broken_links(page, root)
        for line in shell_blocks(page):
            for sub, args in commands(line):
                checked += 1
                if sub.startswith("-"):
                    if sub not in ("--version", "--help"):
                        failures.append(f"{name}: `poolgrad {sub}`: not a subcommand: {line}")
                    continue
                if not re.search(rf"^\s+{re.escape(sub)}\b", top_help, re.M):
                    failures.append(f"{name}: `poolgrad {sub}`: no such subcommand in `poolgrad --help`: {line}")
                    continue
                if sub not in helps:
                    helps[sub] = help_of(exe, sub)
                rc, text = helps[sub]
                if rc != 0:
                    failures.append(f"{name}: `poolgrad {sub} --help` exits {rc}")
                    continue
                for a in args:
                    opt = a.split("=", 1)[0]
                    if re.fullmatch(r"--[a-z][a-z0-9-]*|-[a-zA-Z]", opt) and not re.search(
                            rf"(^|[\s,]){re.escape(opt)}\b", text, re.M):
                        failures.append(f"{name}: `poolgrad {sub}` has no option {opt} (its --help): {line}")
                synopsis = any(re.fullmatch(r"[A-Z][A-Z_.]*", a) or "[" in a or "|" in a for a in args)
                if not synopsis and any(rule(sub, args) for rule in RUNNABLE):
                    ran += 1
                    r = subprocess.run([exe, sub] + args, capture_output=True, text=True, cwd=scratch, env=env,
                                       timeout=600)
                    if r.returncode != 0:
                        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [""]
                        failures.append(f"{name}: `poolgrad {sub} {' '.join(args)}` exits {r.returncode}: {tail[0]}")
    for f in failures:
        print(f)
    print(f"docs: {checked} poolgrad commands in {len(pages)} pages checked against --help, {ran} run; "
          f"{len(failures)} failures")
    return 1 if failures or checked == 0 or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
