"""A padded tensor tile's LDS bytes are the chunks it writes, not one span (issue 22, aiter's
gfx1250 fmha v3 bwd): the pass (analysis/lds_access.py) and, read on its own, the hardware
checker (validate/hwtensor.py) let a fill run across a barrier when another wave reads only
the pads between its chunks, and both still drain when the read lands in a chunk, when the
pads are too small to hold the other wave's half rows, or when padding is not certain."""

from __future__ import annotations

import gzip
import os

import pytest

from stinkywait_core.analysis import lds_access
from stinkywait_core.analysis.launch import LaunchInfo
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate import hwtensor
from stinkywait_core.validate.hwcheck import check_module

from lds_kernels import at, lds_kernel

#: D#1 word 0 as aiter's fmha v3 bwd writes it: one-byte elements, padding on, a pad of 36
#: dwords (code 35) after every 32 dwords (code 4): rows of 128 bytes, 0x110 apart
PADDED = 0x47100000
#: the same with a pad of 4 dwords: rows 0x90 apart (a wave's rows then cover the other's)
SHORT_PAD = 0x07100000

#: a tensor descriptor in s[8:11] (group 0: LDS address START) and s[12:19] (group 1: CONFIG,
#: a tile of 128 x 16 elements)
DESCRIPTOR = """\
  s_mov_b32 s8, 1
  s_mov_b32 s9, START
  s_mov_b32 s10, 0
  s_mov_b32 s11, 0
  s_mov_b32 s12, CONFIG
  s_mov_b32 s13, 0
  s_mov_b32 s14, 0
  s_mov_b32 s15, 0x800000
  s_mov_b32 s16, 16
  s_mov_b32 s17, 0
  s_mov_b32 s18, 0
  s_mov_b32 s19, 0
"""
# two waves of 32 (the metadata's workgroup size): wave w fills the half rows at 0x80 * w;
# after the barrier a wave reads 16 bytes at `READ`; after a second wait and barrier it reads
# the other wave's first row
META = ("\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n    .symbol: k.kd\n"
        "    .max_flat_workgroup_size: 64\n    .wavefront_size: 32\n...\n\t.end_amdgpu_metadata\n")
KERNEL = """\
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
k:
  s_bfe_u32 s2, ttmp8, 0x50019
  s_lshl_b32 s3, s2, 7
""" + DESCRIPTOR.replace("START", "s3") + """\
  v_mov_b32 v1, READ
  tensor_load_to_lds s[8:11], s[12:19]
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b128 v[4:7], v1
  s_wait_tensorcnt 0x0
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_mov_b32 v2, 0x190
  ds_load_b128 v[8:11], v2
  s_wait_dscnt 0x0
  v_add_nc_u32 v12, v4, v8
  s_endpgm
""" + META
#: [0x210, 0x220): the pad both waves leave after row 1 (wave 0: [0x110, 0x190), wave 1:
#: [0x190, 0x210)); [0x200, 0x210) lies in wave 1's row 1
HOLE, IN_ROW = 0x210, 0x200


def text_of(config: int = PADDED, read: int = HOLE) -> str:
    return KERNEL.replace("CONFIG", hex(config)).replace("READ", hex(read))


def drains_at_barrier(text: str) -> bool:
    """Does the plan (hand-written waits replaced) drain the fill before the first barrier?"""
    an = analyze(text, "k.s", Options(replace_waits=True))
    first = next(n for n, ln in enumerate(text.split("\n"), 1) if "s_barrier_signal" in ln)
    return any("tensorcnt" in w.instruction for w in an.waits() if w.line in (first, first + 1))


def early_tensor_waits(text: str) -> list[int]:
    """Lines of the tensorcnt waits the plan puts at or before the first read (the barrier's
    drain, or the wave's own wait before its read)."""
    read = next(n for n, ln in enumerate(text.split("\n"), 1) if "ds_load_b128" in ln)
    an = analyze(text, "k.s", Options(replace_waits=True))
    return [w.line for w in an.waits() if "tensorcnt" in w.instruction and w.line <= read]


def violations(text: str) -> list:
    mod = parse_asm(text, "k.s")
    return [v for r in check_module(mod, Options(), lds_addresses=True, max_trips=2) for v in r.violations]


def ours(text: str) -> str:
    return analyze(text, "k.s", Options(replace_waits=True)).inserted_text()


def test_pads_read_by_the_other_wave_need_no_drain():
    text = text_of()
    assert not drains_at_barrier(text)
    out = ours(text)
    assert violations(out) == []


@pytest.mark.parametrize("config, read, why", [
    (PADDED, IN_ROW, "the read lands in the other wave's row"),
    (SHORT_PAD, HOLE, "a 16-byte pad: the other wave's rows overlap this one's"),
])
def test_overlap_keeps_the_drain(config, read, why):
    text = text_of(config, read)
    assert drains_at_barrier(text), why
    assert violations(ours(text)) == [], why


def test_checker_catches_the_drain_removed():
    """Our output for the hole read, with the read moved into the other wave's row afterwards:
    the checker's own footprint reports the fill crossing the barrier."""
    out = ours(text_of()).replace(f"v_mov_b32 v1, {HOLE:#x}", f"v_mov_b32 v1, {IN_ROW:#x}")
    vs = violations(out)
    assert any(v.producer.mnemonic == "tensor_load_to_lds" for v in vs), vs


@pytest.mark.parametrize("read, step", [
    (0x10b0, ""),                                  # every wave: in wave 1's last row
    (0x10b0, "  v_subrev_nc_u32 v1, s3, v1\n"),    # in the other wave's last row only
    (0x1030, "  v_add_nc_u32 v1, s3, v1\n"),       # in its own last row only
])
def test_checker_does_not_take_the_pass_footprint(monkeypatch, read, step):
    """A pass whose footprint is too small (patched: 16 bytes of each 128-byte row) plans no
    wait for a read 64 bytes into a row; the checker, reading the descriptor itself, reports
    it: for the other wave's row (the cross-wave rule, validate/hwpublish.py) and for the
    wave's own (validate/lds_overlap.py).  Wave w's last row is [0xff0 + 0x80*w, + 0x80)."""
    text = text_of(read=read)
    text = text.replace(f"  v_mov_b32 v1, {read:#x}\n", f"  v_mov_b32 v1, {read:#x}\n" + step)
    assert early_tensor_waits(text)
    real = lds_access._padded_rows

    def short(*args):
        got = real(*args)
        return None if got is None else lds_access.Piece(got.addr, 16)
    monkeypatch.setattr(lds_access, "_padded_rows", short)
    assert not early_tensor_waits(text)
    vs = violations(ours(text))  # the pass's footprint still patched
    assert any(v.producer.mnemonic == "tensor_load_to_lds" for v in vs), vs


def test_uncertain_padding_is_one_span():
    """Padding enable loaded from memory: it may be off (the tile then packs densely into the
    pad bytes): one span, the hole read drains (pass), and the checker agrees on ours."""
    text = text_of().replace("  s_mov_b32 s12, 0x47100000\n",
                             "  s_load_b32 s12, s[0:1], 0x0\n  s_wait_kmcnt 0x0\n  s_and_b32 s12, s12, 0x100000\n"
                             "  s_or_b32 s12, s12, 0x47000000\n")
    assert drains_at_barrier(text)
    assert violations(ours(text)) == []


# --- the two footprints, unit by unit ----------------------------------------------------------

LAUNCH = LaunchInfo("gfx1250", 32, 0, 64, (64, 1, 1))
BODY = DESCRIPTOR + "  tensor_load_to_lds s[8:11], s[12:19]   // @tdm\n"


def footprints(start: int, config: int = PADDED, width: int = 128):
    body = BODY.replace("START", hex(start)).replace("CONFIG", hex(config)).replace(
        "s15, 0x800000", f"s15, {width << 16:#x}")
    _, _, f, facts = lds_kernel(body, LAUNCH, '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n')
    inst = at(f, "tdm")
    return facts.access(inst), hwtensor.tensor_bytes(inst, facts.flow)


def test_both_read_sixteen_chunks():
    acc, tb = footprints(0x1000)
    (piece,) = acc.pieces
    assert (piece.size, piece.span()) == (128, (0x1000, 0x1000 + 15 * 0x110, 0x110))
    assert (tb.count, tb.size, tb.stride) == (16, 128, 0x110)


@pytest.mark.parametrize("start", [0x1008, 0x1040])
def test_start_off_the_interval_is_one_span(start):
    """A start that is not a multiple of the interval: chunks counted from the stream and from
    aligned addresses could differ: one span of data and pads (both footprints)."""
    acc, tb = footprints(start)
    (piece,) = acc.pieces
    assert piece.size >= 16 * 128 + 16 * 144
    assert tb.count == 1 and tb.size >= 16 * 128 + 16 * 144


def test_rows_not_whole_intervals_pad_the_stream():
    """96-byte rows with a 128-byte interval: the unit pads the tile's linear stream, not each
    row (Triton's TDMUtility.cpp), so the 1536 data bytes are 12 chunks of 128 bytes, 0x110
    apart, in both footprints (rows straddle the chunks)."""
    acc, tb = footprints(0x1000, width=96)
    (piece,) = acc.pieces
    assert (piece.size, piece.span()) == (128, (0x1000, 0x1000 + 11 * 0x110, 0x110))
    assert (tb.count, tb.size, tb.stride) == (12, 128, 0x110)


def test_lattice_meet_is_exact_on_the_holes():
    rows = lambda lo: (lo, lo + 15 * 0x110, 0x110, 0x80)  # noqa: E731
    assert not hwtensor.lattice_meet(rows(0), rows(0x80))
    assert hwtensor.lattice_meet(rows(0), rows(0x70))
    assert not hwtensor.lattice_meet(rows(0), (0x210, 0x210, 0, 16))
    assert hwtensor.lattice_meet(rows(0x80), (0x200, 0x200, 0, 16))
    # past the last row: apart
    assert not hwtensor.lattice_meet(rows(0), (0x10f0 + 0x80, 0x10f0 + 0x80, 0, 16))


HANDWRITTEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "aiter_gfx1250")
FMHA_BWD = os.path.join(HANDWRITTEN, "fmha_v3_bwd__bwd_hd128_bf16_a32_pssk.s.gz")


def facts_by_line(text: str):
    """The LDS facts of a one-kernel text, and its instructions by line."""
    m = parse_asm(text, "k.s")
    f = m.functions[0]
    by = {i.line: i for b in f.blocks for i in b.instrs if not i.is_label and not i.is_phi}
    return lds_facts(f, m), by


def test_fmha_bwd_half_rows_of_two_waves_interleave():
    """aiter's fmha v3 bwd (line 1643): waves 2k and 2k+1 fill the two 128-byte halves of each
    0x110-byte row of one tile (start 0x20000 + 0x10000*(w&1) + 0x80*(w>>1)); the chunks of one
    are the other's pads, so two waves' fills are apart, and the next tile's reads (line 1833,
    [0x21100, 0x22180)) miss the first tile's chunks."""
    with gzip.open(FMHA_BWD, "rt") as fh:
        facts, by = facts_by_line(fh.read())
    fill, reader = by[1643], by[1833]
    (piece,) = facts.access(fill).pieces
    assert piece.size == 128
    assert not facts.may_overlap_waves(fill, fill) and not facts.may_overlap_waves(fill, reader)
    tb = hwtensor.tensor_bytes(fill, facts.flow)
    assert (tb.count, tb.size, tb.stride) == (16, 128, 0x110)


FMHA_BWD_950 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "aiter_gfx950",
                            "fmha_v3_bwd_hd128_bf16_a16_psskddv.s.gz")


def test_gfx950_fmha_bwd_dma_apart_from_the_other_waves_reads():
    """aiter's gfx950 fmha v3 bwd: the LDS DMA at line 1475 ([0xaa00, 0xac00) + 0x100*s) stays
    in flight across the barrier at 1477; another wave's read at 1526 (``v14 + 34816``) is at
    0x18800 + 0x1000*w, since line 775 added 0x10000 to v14 in every lane (EXEC restored from
    the all-ones s[98:99]).  The pass plans no drain there; without the restore the read's
    lanes could keep the old v14, meeting the DMA."""
    with gzip.open(FMHA_BWD_950, "rt") as fh:
        text = fh.read()
    facts, by = facts_by_line(text)
    dma, read = by[1475], by[1526]
    assert dma.mnemonic == "buffer_load_dword" and read.mnemonic == "ds_read_b128"
    assert facts.access(read).byte_range()[0] >= 0x18800
    assert not facts.may_overlap_waves(dma, read)
    broken = text.replace("\ts_mov_b32 s99, -1\n", "\ts_mov_b32 s99, 0x7fffffff\n", 1)
    assert broken != text
    facts2, by2 = facts_by_line(broken)
    assert facts2.may_overlap_waves(by2[1475], by2[1526])
    an = analyze(text, "bwd950.s", Options(replace_waits=True))
    at_barrier = [w for w in an.waits() if w.line in (1476, 1477)]
    assert not [w for w in at_barrier if any(d.line == 1475 for d in w.deps)], at_barrier


@pytest.mark.parametrize("other_base, meets", [(0x8800, False), (0x4400, True), (0x4300, True)])
def test_a_two_valued_base_is_split_before_the_chunks_are_compared(other_base, meets):
    """A padded tile's chunks (256 bytes every 272) at a base that is one of two values (a join
    of 0 and `other_base`) against a tile at 0x4400: comparing the base as one range fills the
    gap between its two values and meets the tile at 0x4400 even when both values are apart
    from it (the merged fmhafwd + fmhabwd trees: aiter fmha fwd bf16's epilogue fills drained
    again).  Split value by value, apart only when each value is."""
    from stinkywait_core.analysis import intervals as I
    from stinkywait_core.analysis.lds_access import Piece
    from stinkywait_core.analysis.lds_facts import _pieces_meet_waves
    from stinkywait_core.analysis.values import Atom, Val
    chunks = (0, 31 * 272, 272)
    join = Atom(1, (0, other_base, other_base), 0, "the join at .L")
    a = Piece(Val((((((join, 1),), chunks)),), False), 256)
    b = Piece(Val(((((), I.shift(chunks, 0x4400))),), False), 256)
    assert _pieces_meet_waves(a, b, False) is meets
    assert _pieces_meet_waves(b, a, False) is meets
