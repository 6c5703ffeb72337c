"""Hand-written legacy waits (gfx9-11) are read exactly: every form, checked against the
encodings llvm-mc-22 gives the same text on each generation."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from stinkywait_core.syntax import parse

MC = shutil.which("llvm-mc-22") is not None

#: (cpu, wait line) pairs llvm-mc-22 accepts
FORMS = [
    ("gfx942", "s_waitcnt vmcnt(0) expcnt(1) lgkmcnt(2)"),
    ("gfx942", "s_waitcnt vmcnt(3) & lgkmcnt(0)"),
    ("gfx942", "s_waitcnt vmcnt(1), expcnt(2), lgkmcnt(3)"),
    ("gfx942", "s_waitcnt lgkmcnt(0)"),
    ("gfx942", "s_waitcnt vmcnt(16)"),
    ("gfx942", "s_waitcnt vmcnt_sat(100) lgkmcnt_sat(100)"),
    ("gfx942", "s_waitcnt expcnt_sat(9)"),
    ("gfx942", "s_waitcnt 0"),
    ("gfx942", "s_waitcnt 0x3f70"),
    ("gfx942", "s_waitcnt 0xc07f"),
    ("gfx1030", "s_waitcnt vmcnt(5) lgkmcnt(40)"),
    ("gfx1030", "s_waitcnt_vscnt null, 0x0"),
    ("gfx1030", "s_waitcnt_vscnt null, 7"),
    ("gfx1030", "s_waitcnt_vscnt s0, 3"),
    ("gfx1030", "s_waitcnt_vmcnt null, 0x3"),
    ("gfx1100", "s_waitcnt vmcnt(2) expcnt(1) lgkmcnt(7)"),
    ("gfx1100", "s_waitcnt lgkmcnt_sat(99)"),
    ("gfx1100", "s_waitcnt 0xfc07"),
    ("gfx1100", "s_waitcnt_lgkmcnt null, 0x3"),
    ("gfx1100", "s_waitcnt_expcnt null, 0x1"),
]
#: per generation: field -> (bit offsets of its pieces, widths)
LAYOUT = {
    "gfx9": {"vmcnt": ((0, 4), (14, 2)), "expcnt": ((4, 3),), "lgkmcnt": ((8, 4),)},
    "gfx10": {"vmcnt": ((0, 4), (14, 2)), "expcnt": ((4, 3),), "lgkmcnt": ((8, 6),)},
    "gfx11": {"vmcnt": ((10, 6),), "expcnt": ((0, 3),), "lgkmcnt": ((4, 6),)},
}


def field(imm: int, pieces) -> int:
    v, shift = 0, 0
    for off, width in pieces:
        v |= ((imm >> off) & ((1 << width) - 1)) << shift
        shift += width
    return v


def the_wait(line: str):
    m = parse(f"k:\n\t{line}\n\ts_endpgm\n", "k.s")
    assert not m.diagnostics, m.diagnostics
    return m.functions[0].blocks[0].instrs[1]


@pytest.mark.skipif(not MC, reason="llvm-mc-22 not installed")
@pytest.mark.parametrize("cpu,line", FORMS, ids=[f"{c}-{ln}" for c, ln in FORMS])
def test_wait_fields_match_llvm_mc(cpu, line):
    """What `legacy_waitcnt` says the text names is what the assembler encodes: a named field
    (clamped when spelled _sat), all-ones (no wait) for an absent one; a raw immediate as is."""
    out = subprocess.run(["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-show-encoding"],
                         input=line + "\n", check=True, capture_output=True, text=True).stdout
    enc = [int(b, 16) for b in re.search(r"encoding: \[([^\]]*)\]", out).group(1).split(",")]
    imm = enc[0] | enc[1] << 8  # SOPP / SOPK: simm16 in the low half
    w = the_wait(line).mods["legacy_waitcnt"].fields
    if w["form"] in ("raw", "counter"):
        assert w["raw"] == imm
    if w["form"] == "counter":
        counter = line.split()[0][len("s_waitcnt_"):]
        assert w[counter] == imm and w["sgpr"] == ("" if "null" in line else "s0")
        return
    if w["form"] == "raw":
        assert all(w[c] == -1 for c in ("vmcnt", "expcnt", "lgkmcnt", "vscnt"))
        return
    layout = LAYOUT["gfx9" if cpu.startswith("gfx9") else "gfx10" if cpu.startswith("gfx10") else "gfx11"]
    for name, pieces in layout.items():
        top = (1 << sum(width for _, width in pieces)) - 1
        want = field(imm, pieces)
        if w[name] < 0:
            assert want == top, name  # not named: the assembler waits for nothing on it
        elif name in w["sat"]:
            assert want == min(w[name], top)
        else:
            assert want == w[name]


def test_compatibility_decode_is_kept():
    sw = the_wait("s_waitcnt vmcnt(3) lgkmcnt(1)").mods["swaitcnt"].fields
    assert sw == {"vlcnt": 3, "vscnt": -1, "dlcnt": 1, "dscnt": -1, "kmcnt": 1}
    assert the_wait("s_waitcnt_vscnt null, 0x0").mods["swaitcnt"].fields["vscnt"] == 0
    assert the_wait("s_waitcnt 0").mods["swaitcnt"].fields["vlcnt"] == 0


def test_wait_counts_over_set_symbols():
    m = parse("\t.set N, 3\nk:\n\ts_waitcnt vmcnt(N) lgkmcnt(N-1)\n\ts_waitcnt (1<<4)|N\n\ts_endpgm\n", "k.s")
    assert not m.diagnostics
    named, raw = (i.mods["legacy_waitcnt"].fields for i in m.functions[0].blocks[0].instrs[1:3])
    assert (named["vmcnt"], named["lgkmcnt"], raw["raw"]) == (3, 2, 19)


@pytest.mark.parametrize("bad", ["s_waitcnt lgkmcnt(x)", "s_waitcnt vmcnt(1) junk", "s_waitcnt bogus(1)",
                                 "s_waitcnt 0x10000", "s_waitcnt vmcnt(-1)"])
def test_malformed_waits_are_located_errors(bad):
    m = parse(f"k:\n\t{bad}\n", "k.s")
    (d,) = m.diagnostics
    assert d.severity == "error" and d.line == 2 and d.col == len("\ts_waitcnt ") + 1
