#!/usr/bin/env python3
"""Whether a refactor changed the generated GPU code: the kernels of two cubins compared byte for
byte (each kernel's .text section is its SASS), matched by demangled name. Needs no GPU and no
cuobjdump: `nvcc ... -cubin` builds the cubins on this machine.

  nvcc -std=c++20 -O3 -DNDEBUG --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 \\
       -I OLD_TREE -cubin OLD_TREE/kernels/max/instantiate_gpu.cu -o old.cubin     # likewise new.cubin
  tools/compare_cubins.py old.cubin new.cubin [--rename 'OLD_REGEX=NEW' ...] [--list N]

--rename rewrites old demangled names before matching (a kernel whose item type was renamed).
Prints the kernels that are byte-identical, those that differ with their instruction counts
(16-byte SASS words) old and new, and those present on one side only. Exit 0 when every kernel
matched and is identical, 1 otherwise.
"""
import argparse
import re
import struct
import subprocess
import sys


def kernels(path):
    """{mangled name: code bytes} of every .text.<kernel> section of an ELF64 cubin."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not an ELF64 cubin")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = {}
    for h in headers:
        name = data[names_at + h[0]:data.index(b"\0", names_at + h[0])].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = data[h[4]:h[4] + h[5]]
    return out


def demangled(names):
    text = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, text.split("\n")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rename", action="append", default=[], help="OLD_REGEX=REPLACEMENT on old names")
    ap.add_argument("--list", type=int, default=20, help="differing kernels to list")
    args = ap.parse_args()
    old, new = kernels(args.old), kernels(args.new)
    old_names, new_names = demangled(list(old)), demangled(list(new))

    def renamed(name):
        for rule in args.rename:
            pattern, repl = rule.split("=", 1)
            name = re.sub(pattern, repl, name)
        return name

    before = {renamed(old_names[k]): v for k, v in old.items()}
    after = {new_names[k]: v for k, v in new.items()}
    both = sorted(set(before) & set(after))
    same = [k for k in both if before[k] == after[k]]
    differ = [k for k in both if before[k] != after[k]]
    only = sorted(set(before) ^ set(after))
    words = lambda ks, side: sum(len(side[k]) for k in ks) // 16
    print(f"kernels: {len(before)} old, {len(after)} new, {len(both)} matched; {len(same)} byte-identical, "
          f"{len(differ)} different; {len(only)} on one side only")
    if differ:
        print(f"different kernels: {words(differ, before)} instructions old, {words(differ, after)} new")
        for k in differ[:args.list]:
            print(f"  {len(before[k]) // 16:6d} -> {len(after[k]) // 16:6d}  {k}")
    for k in only[:args.list]:
        print(f"  only {'old' if k in before else 'new'}: {k}")
    return 0 if not differ and not only else 1


if __name__ == "__main__":
    sys.exit(main())
