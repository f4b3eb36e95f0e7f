#!/usr/bin/env python3
"""A kernel variant's SASS on a machine without a GPU: registers and spills, static instruction
counts per kernel and per source line, and the listing itself. Reading these before a device call
says what a change did to the code (a loop's instructions per element, a register cap that
spills, a body that grew) without spending device time; they are static counts, not executed ones,
and time nothing.

  tools/sass.py VARIANT [VARIANT ...] [--kernel REGEX] [--lines N] [--listing FILE] [--arch 90a]
  tools/sass.py --self-test    # the lookups, the listing parser and the header rewrite, no nvcc

VARIANT: a registered name (max.gather.counted) or the struct or alias that registers it
(MaxGatherCounted, MaxDirectStored). Only those variants are instantiated, so the compile takes
minutes, not a whole GPU unit's. --kernel keeps the kernels whose demangled name matches REGEX.

nvcc builds the cubin with the GPU units' flags plus -lineinfo (ptxas -v for registers and spill
bytes). The disassembler is the CUDA toolkit's nvdisasm where one is installed; else the one in
Debian's non-free nvidia-cuda-toolkit package (CUDA 11.8), fetched once with apt-get into
~/.cache/poolgrad. That nvdisasm predates CUDA 12's cubin header, so the tool rewrites a copy's
ELF header (OS ABI, ABI version and the architecture flags) back to the old encoding before
disassembling; instructions newer than 11.8 (none of Hopper's common ones) may print oddly.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from compare_cubins import demangled  # tools/: the kernel names c++filt gives

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "poolgrad", "nvdisasm-11.8")
DEBIAN_PACKAGE = "nvidia-cuda-toolkit"
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LINE_INFO = re.compile(r'//## File "([^"]*)", line (\d+)')


def fail(message):
    sys.exit(f"tools/sass.py: {message}")


def find_variant(name):
    """(header, C++ name) of a variant given its registered name, struct or alias."""
    headers = sorted(glob.glob(os.path.join(ROOT, "kernels", "*", "*.hpp")))
    for header in headers:
        text = open(header).read()
        if re.search(rf"^(struct {re.escape(name)}\b|using {re.escape(name)} =)", text, re.M):
            return header, name
        m = re.search(r"^struct (\w+)\b[^{;]*\{\s*static constexpr \w+Traits traits\{\s*\.name = \"" + re.escape(name) + '"',
                      text, re.M)
        if m:
            return header, m.group(1)
    fail(f"no variant named {name} in kernels/*/*.hpp (give its struct or alias, e.g. MaxDirectStored)")


def instantiation(variants):
    """The .cu text that instantiates only these variants, as the GPU units do."""
    conv = [v for v in variants if "/kernels/conv/" in v[0]]
    if conv and len(conv) != len(variants):
        fail("pooling and conv variants go in separate runs")
    lines = ['#include "kernels/common/exec.hpp"']
    lines += [f'#include "{os.path.relpath(h, ROOT)}"' for h, _ in variants]
    lines.append('#include "kernels/conv/register.hpp"' if conv else '#include "kernels/register.hpp"')
    names = ", ".join(n for _, n in variants)
    lines.append("namespace pg {")
    if conv:
        lines.append(f"std::vector<ConvVariant> sass_only() {{ return make_conv_variants<GpuExec>(VariantList<{names}>{{}}); }}")
    else:
        lines.append(f"std::vector<Variant> sass_only() {{ return make_variants<GpuExec>(VariantList<{names}>{{}}); }}")
    lines.append("}  // namespace pg")
    return "\n".join(lines) + "\n"


def nvcc_path():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.exists(candidate):
            return candidate
    fail("nvcc not found (PATH or /usr/local/cuda/bin)")


def compile_cubin(source, cubin, arch):
    """Builds the cubin; returns ptxas -v's lines."""
    flags = ["-std=c++20", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", f"-gencode=arch=compute_{arch},code=sm_{arch}",
             "-Wno-deprecated-gpu-targets", "-lineinfo", "-Xptxas", "-v", f"-I{ROOT}", "-cubin", source, "-o", cubin]
    if arch == "90a":
        flags.insert(0, "-DPG_WGMMA=1")
    run = subprocess.run([nvcc_path()] + flags, capture_output=True, text=True)
    if run.returncode != 0:
        fail("nvcc failed:\n" + run.stderr[-4000:])
    return run.stderr.splitlines()


def fetch_debian_nvdisasm():
    """nvdisasm from Debian's non-free toolkit package, kept in CACHE."""
    target = os.path.join(CACHE, "nvdisasm")
    if os.path.exists(target):
        return target
    os.makedirs(CACHE, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sources = os.path.join(tmp, "non-free.list")
        with open(sources, "w") as f:
            f.write("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free\n")
        for d in ("lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(tmp, d))
        apt = ["apt-get", "-q", "-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/nonexistent",
               "-o", f"Dir::State::Lists={tmp}/lists", "-o", f"Dir::Cache={tmp}/cache", "-o", "APT::Sandbox::User=root"]
        for step in (["update"], ["download", DEBIAN_PACKAGE]):
            run = subprocess.run(apt + step, cwd=tmp, capture_output=True, text=True)
            if run.returncode != 0:
                fail(f"apt-get {' '.join(step)} for the disassembler failed:\n{run.stderr[-2000:]}")
        deb = glob.glob(os.path.join(tmp, f"{DEBIAN_PACKAGE}_*.deb"))
        if not deb:
            fail(f"apt-get download left no {DEBIAN_PACKAGE} package")
        subprocess.run(["dpkg-deb", "-x", deb[0], os.path.join(tmp, "x")], check=True)
        # Copied beside the target and renamed: an interrupted fetch leaves no partial binary.
        shutil.copy(os.path.join(tmp, "x", "usr", "bin", "nvdisasm"), target + ".part")
        os.replace(target + ".part", target)
    return target


def nvdisasm_path():
    for candidate in (shutil.which("nvdisasm"), os.path.join(os.path.dirname(nvcc_path()), "nvdisasm")):
        if candidate and os.path.exists(candidate):
            return candidate
    return fetch_debian_nvdisasm()


def old_header(cubin, out):
    """A copy of the cubin with CUDA 12's ELF header fields in the pre-12 encoding: OS ABI 0x33,
    ABI version 7, e_flags = sm | sm << 16 | 0x500 (the architecture is byte 1 of the new flags)."""
    data = bytearray(open(cubin, "rb").read())
    if data[7] == 0x33:
        shutil.copy(cubin, out)
        return
    sm = (struct.unpack_from("<I", data, 0x30)[0] >> 8) & 0xFF
    data[7], data[8] = 0x33, 7
    struct.pack_into("<I", data, 0x30, sm | sm << 16 | 0x500)
    open(out, "wb").write(bytes(data))


def disassemble(cubin, tmp):
    tool = nvdisasm_path()
    run = subprocess.run([tool, "-c", "-g", cubin], capture_output=True, text=True)
    if run.returncode != 0 and "architecture information" in run.stderr:
        patched = os.path.join(tmp, "old_header.cubin")
        old_header(cubin, patched)
        run = subprocess.run([tool, "-c", "-g", patched], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{tool} failed: {run.stderr.strip()[:500]}")
    return run.stdout


def kernels(listing):
    """{mangled name: [(file, line, instruction text)]} of every kernel in an nvdisasm listing."""
    out, current, where = {}, None, (None, 0)
    for text in listing.splitlines():
        m = re.match(r"^\s*\.section\s+\.text\.([^,\s]+),", text)
        if m:
            current, where = m.group(1), (None, 0)
            out[current] = []
            continue
        m = LINE_INFO.search(text)
        if m:
            where = (m.group(1), int(m.group(2)))
            continue
        m = INSTRUCTION.match(text)
        if m and current:
            out[current].append((where[0], where[1], m.group(2)))
    return out


def ptxas_resources(lines, names):
    """{mangled name: 'R registers, S/L bytes spilled'} from ptxas -v's lines."""
    out, current = {}, None
    for text in lines:
        m = re.search(r"Compiling entry function '([^']+)'", text)
        if m:
            current = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
        if m and current:
            out.setdefault(current, {})["spill"] = f"{m.group(1)}/{m.group(2)} bytes spilled"
        m = re.search(r"Used (\d+) registers", text)
        if m and current:
            out.setdefault(current, {})["regs"] = f"{m.group(1)} registers"
    return {n: ", ".join(out.get(n, {}).get(k, "?") for k in ("regs", "spill")) for n in names}


def shown(path):
    """A source file's path as printed: relative inside the repository, absolute outside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def source_line(path, line):
    try:
        return open(path).read().splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def self_test():
    """What the tool reads and rewrites, checked without nvcc: every variant registered under a
    literal name resolves to its header and struct, the instantiation names them, a listing
    parses, ptxas's lines parse, and a CUDA 12 header is rewritten to the old encoding."""
    registered = []
    for header in sorted(glob.glob(os.path.join(ROOT, "kernels", "*", "*.hpp"))):
        registered += re.findall(r'traits\{\s*\.name = "([a-z0-9.\-]+)"', open(header).read())
    assert len(registered) >= 30, registered
    for name in registered:
        header, struct_name = find_variant(name)
        assert f'"{name}"' in open(header).read() and re.search(rf"\b{struct_name}\b", open(header).read()), name
    assert find_variant("MaxDirectStored")[0].endswith("max_direct.hpp")
    text = instantiation([find_variant("max.gather.counted")])
    assert '#include "kernels/max/max_gather_counted.hpp"' in text and "VariantList<MaxGatherCounted>" in text, text
    assert "make_conv_variants<GpuExec>(VariantList<ConvGather>" in instantiation([find_variant("conv.gather")])
    listing = """\t.section\t.text._Z1kPf,"ax",@progbits
        //## File "/r/a.hpp", line 7 inlined at "/r/b.cu", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @!P0 FADD R5, R5, R21 ;
\t.section\t.text._Z1gv,"ax",@progbits
        /*0000*/                   EXIT ;
"""
    found = kernels(listing)
    assert found == {"_Z1kPf": [("/r/a.hpp", 7, "LDC R1, c[0x0][0x28]"), ("/r/a.hpp", 7, "@!P0 FADD R5, R5, R21")],
                     "_Z1gv": [(None, 0, "EXIT")]}, found
    lines = ["ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'",
             "ptxas info    : Function properties for _Z1kPf", "    8 bytes stack frame, 28 bytes spill stores, 24 bytes spill loads",
             "ptxas info    : Used 48 registers, used 1 barriers"]
    assert ptxas_resources(lines, ["_Z1kPf"]) == {"_Z1kPf": "48 registers, 28/24 bytes spilled"}
    with tempfile.TemporaryDirectory() as tmp:
        new, old = os.path.join(tmp, "new.cubin"), os.path.join(tmp, "old.cubin")
        header = bytearray(64)
        header[:9] = b"\x7fELF\x02\x01\x01\x41\x08"
        struct.pack_into("<I", header, 0x30, 0x6005A04)
        open(new, "wb").write(bytes(header))
        old_header(new, old)
        data = open(old, "rb").read()
        assert (data[7], data[8], struct.unpack_from("<I", data, 0x30)[0]) == (0x33, 7, 0x5A055A)
    print(f"tools/sass.py self-test: {len(registered)} variants resolve, listing, ptxas and header checks pass")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", metavar="VARIANT")
    ap.add_argument("--kernel", default="", help="keep kernels whose demangled name matches this regex")
    ap.add_argument("--lines", type=int, default=12, help="source lines shown per kernel, most instructions first")
    ap.add_argument("--listing", help="also write the kept kernels' SASS here")
    ap.add_argument("--arch", default="90a", help="the sm_ architecture, as the build's sm_arch option")
    args = ap.parse_args()
    if args.lines < 0:
        fail(f"--lines = {args.lines} must be at least 0")
    try:
        keep = re.compile(args.kernel)
    except re.error as e:
        fail(f"--kernel = {args.kernel!r} is not a regex: {e}")
    variants = [find_variant(v) for v in args.variants]
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = os.path.join(tmp, "sass_only.cu"), os.path.join(tmp, "sass_only.cubin")
        open(source, "w").write(instantiation(variants))
        ptxas = compile_cubin(source, cubin, args.arch)
        found = kernels(disassemble(cubin, tmp))
    names = demangled(list(found))
    chosen = [k for k in found if keep.search(names[k])]
    if not chosen:
        fail(f"no kernel of {', '.join(args.variants)} matches --kernel {args.kernel!r}")
    resources = ptxas_resources(ptxas, chosen)
    listing = open(args.listing, "w") if args.listing else None
    for k in chosen:
        code = found[k]
        spills = sum(1 for _, _, t in code if re.search(r"\b(LDL|STL)\b", t))
        print(f"{names[k]}\n  {len(code)} instructions, {resources[k]}, {spills} local loads/stores")
        per_line = collections.Counter((f, l) for f, l, _ in code if f)
        for (f, l), n in per_line.most_common(args.lines):
            print(f"  {n:6d}  {shown(f)}:{l}  {source_line(f, l)[:90]}")
        if listing:
            listing.write(f"// {names[k]}\n")
            listing.writelines(f"{shown(f) if f else '?'}:{l}\t{t}\n" for f, l, t in code)
    if listing:
        listing.close()


if __name__ == "__main__":
    main()
