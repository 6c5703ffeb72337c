"""Text assembly of aiter's hand-written gfx1250 kernels, which are published only as machine words.

ROCm/aiter ships its hand-written gfx1250 shaders as `.long` words (``hsa/gfx1250/f4gemm/
shaders/*.s``, ``hsa/gfx1250/mxfp8fp4gemm/src/*.s``) or code objects (``hsa/gfx1250/**.co``).
LLVM 22 disassembles them except the tensor-DMA instructions, which use a pre-release
encoding (first word ``0xd0310000`` for ``tensor_load_to_lds``, ``0xd0314000`` for
``tensor_store_from_lds``, LLVM 22's being ``0xd0710001``/``0xd0714001``).  Their third word
holds the descriptor SGPR fields at the same places as LLVM 22's (bytes: D#0, D#1, D#2,
D#3, 0x7c = none), which a newer disassembler confirms (it prints ``tensor_load_to_lds
s[24:27], s[28:35]`` for ``D0310000 00000000 7C7C1C18``).  This script rewrites those three
words into LLVM 22's encoding (the second word, whose pre-release bits are not documented,
becomes LLVM 22's ``0x7c000000``: cache-policy bits, if that is what they are, are dropped),
disassembles with ``llvm-objdump-22`` until no such word is left, turns branch offsets into
labels and writes an assembler file with the kernel descriptor and metadata of the source.
The result assembles with ``llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250``.

Usage: .venv/bin/python benchmarks/aiter_gfx1250_text.py SOURCE(.s|.co) OUT.s [--note TEXT] [--mcpu CPU]

`--mcpu gfx942` / `gfx950` turns aiter's gfx9 code objects into text the same way (their
encodings are LLVM 22's: no word is rewritten).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

MC, OBJDUMP, OBJCOPY, READELF = "llvm-mc-22", "llvm-objdump-22", "llvm-objcopy-22", "llvm-readelf-22"
TDM_OLD = {0xD0310000: 0xD0710001, 0xD0314000: 0xD0714001}
_INSN = re.compile(r'^\t(?P<asm>.*?)\s*// (?P<addr>[0-9A-F]{12}): (?P<enc>[0-9A-F ]+?)(?: <(?P<tgt>[^>]+)>)?$')
_SYM = re.compile(r'^([0-9a-f]{16}) <(.+)>:$')


def run(cmd: list[str], **kw) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def disassemble(obj: str, mcpu: str = "gfx1250") -> list[tuple[int, str, list[int], str | None]]:
    """(address, assembly, encoding words, branch target symbol+offset) per instruction."""
    out = []
    for line in run([OBJDUMP, "-d", f"--mcpu={mcpu}", "-j", ".text", obj]).splitlines():
        m = _INSN.match(line)
        if m:
            words = [int(w, 16) for w in m.group("enc").split()]
            out.append((int(m.group("addr"), 16), m.group("asm"), words, m.group("tgt")))
    return out


def text_section(obj: str, tmp: str) -> tuple[bytearray, int]:
    """The .text bytes and their load address."""
    path = os.path.join(tmp, "text.bin")
    run([OBJCOPY, "--dump-section", f".text={path}", obj, os.path.join(tmp, "scratch.o")])
    base = None
    for line in run([READELF, "-S", "-W", obj]).splitlines():
        parts = line.split()
        if ".text" in parts:
            i = parts.index(".text")
            base = int(parts[i + 2], 16)
    with open(path, "rb") as f:
        return bytearray(f.read()), base or 0


def fix_tensor_words(obj: str, tmp: str) -> tuple[str, int]:
    """An object whose pre-release tensor words are LLVM 22's; and how many were rewritten."""
    fixed = 0
    cur = obj
    for rnd in range(64):
        data, base = text_section(cur, tmp)
        todo = [a for a, asm, words, _ in disassemble(cur) if asm.startswith(".long") and words[0] in TDM_OLD]
        if not todo:
            return cur, fixed
        for a in todo:
            off = a - base
            w0 = int.from_bytes(data[off:off + 4], "little")
            data[off:off + 4] = TDM_OLD[w0].to_bytes(4, "little")
            data[off + 4:off + 8] = (0x7C000000).to_bytes(4, "little")
            fixed += 1
        binp = os.path.join(tmp, f"fixed{rnd}.bin")
        with open(binp, "wb") as f:
            f.write(data)
        nxt = os.path.join(tmp, f"fixed{rnd}.o")
        run([OBJCOPY, "--update-section", f".text={binp}", cur, nxt])
        cur = nxt
    raise SystemExit("tensor words kept reappearing")


def text_labels(obj: str) -> dict[str, int]:
    """Every .text symbol (kernels and the local labels gfx9 code objects keep) -> address."""
    out = {}
    for line in run([OBJDUMP, "-t", obj]).splitlines():
        parts = line.split()
        if len(parts) >= 5 and ".text" in parts and not parts[-1].startswith("."):
            out[parts[-1]] = int(parts[0], 16)
    return out


def kernel_symbols(obj: str) -> dict[int, str]:
    syms = {}
    for line in run([OBJDUMP, "-t", obj]).splitlines():
        parts = line.split()
        if len(parts) >= 6 and ".text" in parts and parts[-1] and not parts[-1].startswith("."):
            if "F" in parts or "g" in parts:
                syms[int(parts[0], 16)] = parts[-1]
    return syms


def directive_blocks(src: str) -> str:
    """The kernel descriptor and metadata blocks of a text source (kept as written)."""
    text = open(src, errors="replace").read()
    out = []
    for begin, end in ((".amdhsa_kernel", ".end_amdhsa_kernel"), (".amdgpu_metadata", ".end_amdgpu_metadata")):
        i = text.find("\n" + begin)
        while i >= 0:
            j = text.find(end, i)
            if j < 0:
                break
            out.append(text[i + 1:j + len(end)])
            i = text.find("\n" + begin, j)
    return "\n".join(out)


def code_object_directives(obj: str, names: list[str], mcpu: str = "gfx1250") -> str:
    """Kernel descriptors (as `.amdhsa_*` directives, from ``llvm-objdump -D`` of the ``.kd``
    symbol) and the metadata note of a code object."""
    out = []
    for n in names:
        kd = run([OBJDUMP, "-D", f"--mcpu={mcpu}", f"--disassemble-symbols={n}.kd", obj])
        body = [ln.strip() for ln in kd.splitlines() if ln.strip().startswith((".amdhsa_", ".end_amdhsa_kernel"))]
        if body:
            out.append(".rodata\n.p2align 6\n" + "\n".join(("" if b.startswith((".amdhsa_kernel", ".end_")) else "\t") + b
                                                        for b in body))
    notes = run([READELF, "--notes", obj])
    m = re.search(r'(amdhsa\.kernels:.*?)(?:\n\s*\.\.\.|\Z)', notes, re.S)
    if m:
        out.append(".amdgpu_metadata\n---\n" + m.group(1).rstrip() + "\n...\n.end_amdgpu_metadata")
    return "\n".join(out)


def convert(src: str, dst: str, note: str = "", mcpu: str = "gfx1250") -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        if src.endswith(".co"):
            obj = src
        else:
            obj = os.path.join(tmp, "src.o")
            run([MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-filetype=obj", src, "-o", obj])
        fixed_obj, fixed = fix_tensor_words(obj, tmp) if mcpu == "gfx1250" else (obj, 0)
        insns = disassemble(fixed_obj, mcpu)
        syms = kernel_symbols(fixed_obj)
        names = [syms[a] for a in sorted(syms)]
        labels = text_labels(fixed_obj)
        targets = {}
        calls = {}
        for a, asm, words, tgt in insns:
            if asm.startswith(("s_call_i64", "s_call_b64")) and re.search(r', -?\d+$', asm):
                off = int(asm.rsplit(" ", 1)[1])  # SOPK simm16: the target is pc + 4 + 4*simm16
                calls[a] = a + 4 + 4 * off
                targets[calls[a]] = f".Lpc_{calls[a]:x}"
            if tgt and "+0x" in tgt:
                name, off = tgt.split("+0x")
                base = next((k for k, v in syms.items() if v == name), None)
                if base is not None:
                    targets[base + int(off, 16)] = f".Lpc_{base + int(off, 16):x}"
            elif tgt and tgt in labels and labels[tgt] not in syms:
                targets[labels[tgt]] = f".Lpc_{labels[tgt]:x}"
            elif asm.startswith(("s_cbranch", "s_branch")) and asm.split()[-1] in labels:
                targets[labels[asm.split()[-1]]] = f".Lpc_{labels[asm.split()[-1]]:x}"  # (objdump names it)
        lines = [f"// {note}" if note else "", f'\t.amdgcn_target "amdgcn-amd-amdhsa--{mcpu}"', "\t.text"]
        undecoded = 0
        for a, asm, words, tgt in insns:
            if a in syms:
                n = syms[a]
                lines += [f"\t.globl {n}", "\t.p2align 8", f"\t.type {n},@function", f"{n}:"]
            if a in targets:
                lines.append(f"{targets[a]}:")
            if asm.startswith(".long"):
                undecoded += 1
            if a in calls:
                asm = f"{asm.rsplit(' ', 1)[0]} {targets[calls[a]]}"
            elif tgt and "+0x" in tgt and asm.split()[0].startswith(("s_cbranch", "s_branch")):
                name, off = tgt.split("+0x")
                base = next((k for k, v in syms.items() if v == name), 0)
                asm = f"{asm.split()[0]} {targets[base + int(off, 16)]}"
            elif tgt and labels.get(tgt) in targets and asm.split()[0].startswith(("s_cbranch", "s_branch")):
                asm = f"{asm.split()[0]} {targets[labels[tgt]]}"
            elif asm.startswith(("s_cbranch", "s_branch")) and labels.get(asm.split()[-1]) in targets:
                asm = f"{asm.split()[0]} {targets[labels[asm.split()[-1]]]}"
            lines.append("\t" + asm)
        lines.append(directive_blocks(src) if not src.endswith(".co") else code_object_directives(obj, names, mcpu))
    with open(dst, "w") as f:
        f.write("\n".join(lines) + "\n")
    return {"instructions": len(insns), "tensor_fixed": fixed, "undecoded": undecoded, "kernels": names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--note", default="")
    ap.add_argument("--mcpu", default="gfx1250", help="the code object's target (gfx942, gfx950: no tensor rewrite)")
    a = ap.parse_args()
    info = convert(a.source, a.out, a.note, a.mcpu)
    print(f"{a.out}: {info}", file=sys.stderr)


if __name__ == "__main__":
    main()
