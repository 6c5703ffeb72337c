"""Property test of the LDS address analysis against concrete execution.

Random kernels build LDS addresses the way real ones do (constants, masks, shifts, adds,
multiplies, bit-field extracts, lane ids, the wave index, lane reads, selects, unknown
kernel arguments, ping-pong and advancing bases in a loop, a branch around a block) and
access LDS with DS loads/stores (one- and two-address), async loads and tensor fills.  Each
kernel is executed here, lane by lane, for every wave of its workgroup and a few unknown
inputs, recording the bytes every execution of every access touches and in which loop trip.

The analysis must never be wrong in the unsafe direction: every touched byte lies in the
access's reported range, and two accesses it calls disjoint never share a byte on any lane
(for `same_trip=True`, in executions with no back edge taken between them).  The interpreter
below is written from the ISA's description of each instruction, independently of the
analysis' transfer functions.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from stinkywait_core.analysis.launch import LaunchInfo
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.syntax.asm_parser import parse_asm

M = 0xFFFFFFFF
LANES = 32


def _sext(v: int, width: int) -> int:
    """The 32-bit register value of a `width`-bit field sign-extended (``*_bfe_i32``)."""
    if width and v >> (width - 1) & 1:
        v -= 1 << width
    return v & M


WAVES = 4
#: SDWA selector -> (bit offset, width)
SDWA_FIELDS = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16),
               "WORD_1": (16, 16), "DWORD": (0, 32)}
LAUNCH = LaunchInfo("gfx1250", 32, 0, LANES * WAVES, (LANES * WAVES, 1, 1))
CONSTS = [0, 1, 2, 3, 4, 5, 8, 15, 16, 31, 32, 63, 0x7f, 0xff, 0x100, 0x110, 0x1f0, 0x200, 0x3ff, 0x400,
          0x7f0, 0x800, 0xfff, 0x1000, 0x1ff0, 0x2000, 0x3ff0, 0x4000, 0x7ff0, 0x8000, 0xfff0, 0xffff, 0x10000,
          0xfffffff0, 0xffffff00]
SHIFTS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 16]
SCRATCH_S = [f"s{i}" for i in range(4, 16)]
SCRATCH_V = [f"v{i}" for i in range(1, 12)]

#: SDWA selectors, and operations with them (16-bit ones compute 16 bits)
SDWA_SELS = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"]
SDWA_OPS = ["v_lshlrev_b32_sdwa", "v_lshrrev_b32_sdwa", "v_ashrrev_i16_sdwa", "v_lshlrev_b16_sdwa",
            "v_add_u16_sdwa", "v_add_u32_sdwa", "v_and_b32_sdwa", "v_mov_b32_sdwa"]

SETTINGS = settings(max_examples=int(os.environ.get("LDS_PROPERTY_EXAMPLES", "300")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- generation --------------------------------------------------------------------------------------

class Gen:
    def __init__(self, data):
        self.d = data
        self.lines: list[str] = []
        self.sdef = ["s0", "s1"]
        self.vdef = ["v0"]
        self.accesses: list[int] = []
        self.n = 0

    def draw(self, strat):
        return self.d(strat)

    def emit(self, text: str, access: bool = False) -> None:
        self.lines.append(text)
        if access:
            self.accesses.append(len(self.lines))

    def const(self) -> str:
        return hex(self.draw(st.sampled_from(CONSTS)))

    def s_src(self) -> str:
        if self.draw(st.booleans()):
            return self.const()
        return self.draw(st.sampled_from(self.sdef))

    def v_src(self) -> str:
        return self.draw(st.sampled_from(self.vdef))

    def any_src(self) -> str:
        k = self.draw(st.integers(0, 2))
        return self.const() if k == 0 else self.draw(st.sampled_from(self.sdef)) if k == 1 else self.v_src()

    def s_dst(self) -> str:
        d = self.draw(st.sampled_from(SCRATCH_S))
        if d not in self.sdef:
            self.sdef.append(d)
        return d

    def v_dst(self) -> str:
        d = self.draw(st.sampled_from(SCRATCH_V))
        if d not in self.vdef:
            self.vdef.append(d)
        return d

    def op(self) -> None:
        k = self.draw(st.integers(0, 34))
        if k >= 31:
            self.subdword(k)
            return
        if k == 0:
            self.emit(f"s_mov_b32 {self.s_dst()}, {self.s_src()}")
        elif k == 1:
            a, b = self.s_src(), self.s_src()
            self.emit(f"s_add_co_u32 {self.s_dst()}, {a}, {b}")
        elif k == 2:
            a, b = self.s_src(), self.s_src()
            self.emit(f"s_sub_co_u32 {self.s_dst()}, {a}, {b}")
        elif k == 3:
            a = self.draw(st.sampled_from(self.sdef))
            sh = self.draw(st.sampled_from(SHIFTS))
            self.emit(f"{self.draw(st.sampled_from(['s_lshl_b32', 's_lshr_b32']))} {self.s_dst()}, {a}, {sh}")
        elif k == 4:
            a, b = self.draw(st.sampled_from(self.sdef)), self.s_src()
            mn = self.draw(st.sampled_from(["s_and_b32", "s_or_b32", "s_xor_b32"]))
            self.emit(f"{mn} {self.s_dst()}, {a}, {b}")
        elif k == 5:
            a = self.draw(st.sampled_from(self.sdef))
            self.emit(f"s_mul_i32 {self.s_dst()}, {a}, {self.const()}")
        elif k == 6:
            a = self.draw(st.sampled_from(self.sdef + ["ttmp8"]))
            off, w = self.draw(st.integers(0, 31)), self.draw(st.integers(0, 12))
            mn = self.draw(st.sampled_from(["s_bfe_u32", "s_bfe_i32"]))
            self.emit(f"{mn} {self.s_dst()}, {a}, {hex(off | w << 16)}")
        elif k == 7:
            a, b = self.draw(st.sampled_from(self.sdef)), self.s_src()
            self.emit(f"s_cmp_lt_u32 {a}, {b}")
            self.emit(f"s_cselect_b32 {self.s_dst()}, {self.s_src()}, {self.s_src()}")
        elif k == 8:
            self.emit(f"s_load_b32 {self.s_dst()}, s[0:1], {hex(4 * self.draw(st.integers(0, 7)))}")
            self.emit("s_wait_kmcnt 0x0")
        elif k == 9:
            self.emit(f"s_movk_i32 {self.s_dst()}, {hex(self.draw(st.integers(0, 0xffff)))}")
        elif k == 10:
            self.emit(f"v_mov_b32 {self.v_dst()}, {self.any_src()}")
        elif k == 11:
            a, b = self.any_src(), self.v_src()
            mn = self.draw(st.sampled_from(["v_add_nc_u32", "v_sub_nc_u32", "v_and_b32", "v_or_b32", "v_xor_b32"]))
            self.emit(f"{mn} {self.v_dst()}, {a}, {b}")
        elif k == 12:
            sh, b = self.draw(st.sampled_from(SHIFTS)), self.v_src()
            mn = self.draw(st.sampled_from(["v_lshlrev_b32", "v_lshrrev_b32"]))
            self.emit(f"{mn} {self.v_dst()}, {sh}, {b}")
        elif k == 13:
            a, b, c = self.any_src(), self.v_src(), self.any_src()
            self.emit(f"v_mad_u32_u24 {self.v_dst()}, {a}, {b}, {c}")
        elif k == 14:
            a, b = self.any_src(), self.v_src()
            self.emit(f"v_mul_u32_u24 {self.v_dst()}, {a}, {b}")
        elif k == 15:
            b = self.v_src()
            mn = self.draw(st.sampled_from(["v_bfe_u32", "v_bfe_i32"]))
            self.emit(f"{mn} {self.v_dst()}, {b}, {self.draw(st.integers(0, 31))}, {self.draw(st.integers(0, 12))}")
        elif k == 16:
            a, sh, c = self.v_src(), self.draw(st.sampled_from(SHIFTS)), self.any_src()
            mn = self.draw(st.sampled_from(["v_lshl_or_b32", "v_lshl_add_u32"]))
            self.emit(f"{mn} {self.v_dst()}, {a}, {sh}, {c}")
        elif k == 17:
            self.emit(f"v_readfirstlane_b32 {self.s_dst()}, {self.v_src()}")
        elif k == 18:
            self.emit(f"v_cmp_gt_u32 vcc_lo, {self.const()}, {self.v_src()}")
            a, b = self.any_src(), self.v_src()
            self.emit(f"v_cndmask_b32 {self.v_dst()}, {a}, {b}, vcc_lo")
        elif k == 19:
            a, b, c = self.any_src(), self.v_src(), self.any_src()
            mn = self.draw(st.sampled_from(["v_or3_b32", "v_add3_u32"]))
            self.emit(f"{mn} {self.v_dst()}, {a}, {b}, {c}")
        elif k == 20:
            a, b = self.v_src(), self.v_src()
            self.emit(f"v_dual_lshlrev_b32 {self.v_dst()}, {self.draw(st.sampled_from(SHIFTS))}, {a} :: "
                      f"v_dual_and_b32 {self.v_dst()}, {self.const()}, {b}")
        elif k == 21:
            # a flag from a bit test selects between two values (SCC as the result != 0)
            a = self.draw(st.sampled_from(self.sdef))
            mn = self.draw(st.sampled_from(["s_and_b32", "s_lshr_b32", "s_bfe_u32"]))
            b = {"s_and_b32": hex(self.draw(st.sampled_from([1, 2, 3, 0x10]))),
                 "s_lshr_b32": str(self.draw(st.sampled_from([1, 2, 3, 31]))),
                 "s_bfe_u32": hex(self.draw(st.integers(0, 3)) | self.draw(st.integers(1, 2)) << 16)}[mn]
            self.emit(f"{mn} {self.s_dst()}, {a}, {b}")
            self.emit(f"s_cselect_b32 {self.s_dst()}, {self.s_src()}, {self.s_src()}")
        elif k == 22:
            # an equality test of a small value selects
            a = self.draw(st.sampled_from(self.sdef))
            mn = self.draw(st.sampled_from(["s_cmp_eq_u32", "s_cmp_lg_u32"]))
            self.emit(f"{mn} {a}, {self.draw(st.integers(0, 3))}")
            self.emit(f"s_cselect_b32 {self.s_dst()}, {self.s_src()}, {self.s_src()}")
        elif k == 23:
            # the same computation twice (value numbering must not confuse the copies)
            a = self.draw(st.sampled_from(self.sdef + ["ttmp8"]))
            mn, b = self.draw(st.sampled_from([("s_and_b32", "1"), ("s_lshr_b32", "1"), ("s_and_b32", "3"),
                                               ("s_lshr_b32", "2"), ("s_bfe_u32", "0x50019"), ("s_or_b32", "s1")]))
            self.emit(f"{mn} {self.s_dst()}, {a}, {b}")
            for _ in range(self.draw(st.integers(0, 2))):
                self.op()
            self.emit(f"{mn} {self.s_dst()}, {a}, {b}")
        elif k == 25:
            self.roles()
        elif k == 24:
            # a conditional swap on a flag (per-wave ping-pong), or a two-way diamond
            self.n += 1
            a = self.draw(st.sampled_from(self.sdef))
            x, y = self.v_dst(), self.v_dst()
            self.emit(f"v_add_nc_u32 {y}, {self.any_src()}, {x if x in self.vdef else 'v0'}")
            if self.draw(st.booleans()):
                self.emit(f"s_and_b32 {self.s_dst()}, {a}, {self.draw(st.sampled_from(['1', '2', '3']))}")
            else:
                self.emit(f"s_cmp_eq_u32 {a}, {self.draw(st.integers(0, 2))}")
            if self.draw(st.booleans()):
                self.emit(f"{self.draw(st.sampled_from(['s_cbranch_scc0', 's_cbranch_scc1']))} .Lsw{self.n}")
                self.emit(f"v_swap_b32 {x}, {y}")
                self.emit(f".Lsw{self.n}:")
            else:
                self.emit(f"{self.draw(st.sampled_from(['s_cbranch_scc0', 's_cbranch_scc1']))} .Lel{self.n}")
                self.emit(f"v_add_nc_u32 {x}, {self.const()}, {y}")
                self.emit(f"s_branch .Lj{self.n}")
                self.emit(f".Lel{self.n}:")
                self.emit(f"v_add_nc_u32 {x}, {self.const()}, {y}")
                self.emit(f".Lj{self.n}:")
        else:
            self.access()

    def sel_operand(self) -> tuple[str, str]:
        """(operand text, selector) of an SDWA source: a VGPR, maybe sign-extended."""
        v = self.v_src()
        sel = self.draw(st.sampled_from(SDWA_SELS))
        return (f"sext({v})" if self.draw(st.booleans()) else v), sel

    def subdword(self, k: int) -> None:
        """Sub-dword arithmetic of compiled gfx9 code: SDWA, 16-bit operations, an i1 mask."""
        if k == 31:
            mn = self.draw(st.sampled_from(SDWA_OPS))
            dst_sel = self.draw(st.sampled_from(SDWA_SELS[:5] + ["DWORD", "DWORD"]))
            unused = self.draw(st.sampled_from(["UNUSED_PAD", "UNUSED_PRESERVE", "UNUSED_SEXT"]))
            x, xs = self.sel_operand()
            tail = f"dst_sel:{dst_sel} dst_unused:{unused}"
            if mn == "v_mov_b32_sdwa":
                self.emit(f"{mn} {self.v_dst()}, {x} {tail} src0_sel:{xs}")
                return
            if "sh" in mn:  # the amount first, a whole register
                amt = self.v_dst()
                self.emit(f"v_mov_b32 {amt}, {self.draw(st.integers(0, 17))}")
                a, a_sel = amt, "DWORD"
            else:
                a, a_sel = self.sel_operand()
            self.emit(f"{mn} {self.v_dst()}, {a}, {x} {tail} src0_sel:{a_sel} src1_sel:{xs}")
        elif k == 32:
            a = self.draw(st.sampled_from([self.v_src(), self.v_src(), "0x30"]))
            b = self.v_src()
            c = self.draw(st.sampled_from([self.v_src(), "3", "0", "0xff", "0xf0f0", "-1"]))
            t = self.draw(st.sampled_from([0x78, 0x96, 0x80, 0xFE, 0xF0, 0xCC, 0xAA, 0x6C, 0x1E, 0x48])
                          | st.integers(0, 255))
            self.emit(f"v_bitop3_b16 {self.v_dst()}, {a}, {b}, {c} bitop3:{hex(t)}")
        elif k == 33:
            mn = self.draw(st.sampled_from(["v_lshlrev_b16", "v_lshrrev_b16", "v_ashrrev_i16", "v_add_u16",
                                            "v_sub_u16"]))
            if "sh" in mn:
                self.emit(f"{mn} {self.v_dst()}, {self.draw(st.integers(0, 17))}, {self.v_src()}")
            else:
                a, b = self.v_src(), self.v_src()
                self.emit(f"{mn} {self.v_dst()}, {a}, {b}")
        else:
            # an i1 condition as a lane mask, tested against EXEC before each use
            a = self.draw(st.sampled_from(self.sdef))
            self.emit(f"s_cmp_lt_u32 {a}, {self.const()}")
            wide = self.draw(st.booleans())
            m = self.draw(st.sampled_from(["s40", "s42"]))
            mm = f"s[{m[1:]}:{int(m[1:]) + 1}]" if wide else m
            lo, hi = self.draw(st.sampled_from([("-1", "0"), ("0", "-1")]))
            self.emit(f"s_cselect_b{64 if wide else 32} {mm}, {lo}, {hi}")
            for _ in range(self.draw(st.integers(0, 2))):
                self.op()
            for _ in range(self.draw(st.integers(1, 2))):
                if wide:
                    self.emit(f"s_and_b64 s[44:45], {mm}, exec")
                else:
                    self.emit(f"s_and_b32 s44, {mm}, exec_lo")
                self.emit(f"s_cselect_b32 {self.s_dst()}, {self.s_src()}, {self.s_src()}")

    def roles(self) -> None:
        """A dispatch on the wave index (aiter's f4gemm): each role sets its own base, value and
        tile width, then the roles join (analysis/wave_roles.py narrows each path)."""
        self.n += 1
        w = self.s_dst()
        if self.draw(st.booleans()):
            self.emit(f"s_bfe_u32 {w}, ttmp8, 0x50019")
        else:
            self.emit("v_lshrrev_b32 v11, 5, v0")
            self.emit(f"v_readfirstlane_b32 {w}, v11")
            if "v11" not in self.vdef:
                self.vdef.append("v11")
        n = self.draw(st.integers(2, 4))
        x = self.s_dst() if self.draw(st.booleans()) else self.v_dst()
        y = self.s_dst()
        mov = "s_mov_b32" if x.startswith("s") else "v_mov_b32"
        for r in range(n - 1):
            cmp = self.draw(st.sampled_from(["s_cmp_eq_u32", "s_cmp_lt_u32", "s_cmp_lg_u32"]))
            self.emit(f"{cmp} {w}, {r + (cmp == 's_cmp_lt_u32')}")
            self.emit(f"{self.draw(st.sampled_from(['s_cbranch_scc1', 's_cbranch_scc0']))} .Lrole{self.n}_{r}")
        for r in range(n):
            if r:
                self.emit(f".Lrole{self.n}_{r - 1}:")
            self.emit(f"{mov} {x}, {self.const()}")
            self.emit(f"s_mov_b32 {y}, {self.const()}")
            if self.draw(st.booleans()):
                self.emit(f"s_mov_b32 s27, {hex(self.draw(st.sampled_from([4, 16, 64, 256])) << 16)}")
            if self.draw(st.integers(0, 2)) == 0:
                self.access()
            self.emit(f"s_branch .Lrj{self.n}")
        self.emit(f".Lrj{self.n}:")

    def access(self) -> None:
        k = self.draw(st.integers(0, 5))
        a = self.v_src()
        off = hex(self.draw(st.sampled_from([0, 4, 8, 16, 64, 0x100, 0x1000, 0x4000])))
        if k == 0:
            mn, dst = self.draw(st.sampled_from([("ds_load_b32", "v12"), ("ds_load_b64", "v[12:13]"),
                                                 ("ds_load_b128", "v[12:15]"), ("ds_load_u8", "v12")]))
            self.emit(f"{mn} {dst}, {a} offset:{off}", True)
        elif k == 1:
            self.emit(f"ds_store_b32 {a}, v12 offset:{off}", True)
        elif k == 2:
            o0, o1 = self.draw(st.integers(0, 255)), self.draw(st.integers(0, 255))
            mn = self.draw(st.sampled_from(["ds_load_2addr_b32", "ds_load_2addr_stride64_b32"]))
            self.emit(f"{mn} v[12:13], {a} offset0:{o0} offset1:{o1}", True)
        elif k == 3:
            self.emit(f"global_load_async_to_lds_b32 {a}, v14, s[0:1] offset:{off}", True)
        else:
            self.emit(f"s_mov_b32 s21, {self.draw(st.sampled_from(self.sdef))}")
            self.emit("tensor_load_to_lds s[20:23], s[24:31]", True)

    def descriptor(self) -> None:
        es, pad = self.draw(st.integers(0, 2)), self.draw(st.integers(0, 1))
        pint, pamt = self.draw(st.integers(0, 5)), self.draw(st.integers(0, 3))
        tile0, tile1 = self.draw(st.sampled_from([4, 16, 64, 256])), self.draw(st.sampled_from([0, 1, 2, 4, 16]))
        words = [es << 16 | pad << 20 | pint << 22 | pamt << 25, 0x1000000, 0x100000, tile0 << 16, tile1, 0xc00, 0, 0]
        for i, w in enumerate(words):
            self.emit(f"s_mov_b32 s{24 + i}, {hex(w)}")
        self.emit("s_mov_b32 s20, 1")
        self.emit("s_mov_b32 s22, 0")
        self.emit("s_mov_b32 s23, 0x80000000")


@st.composite
def programs(draw):
    g = Gen(draw)
    g.emit("k:")
    g.descriptor()
    for _ in range(draw(st.integers(1, 6))):
        g.op()
    loop = draw(st.booleans())
    toggle = draw(st.sampled_from([0x800, 0x1000, 0x2000, 0x4000, 0x8000]))
    if loop:
        pp = draw(st.sampled_from(SCRATCH_S))
        g.emit(f"s_mov_b32 {pp}, {draw(st.sampled_from([0, toggle, 0x100, 0x10000]))}")
        if pp not in g.sdef:
            g.sdef.append(pp)
        g.emit(f"s_mov_b32 s3, {draw(st.integers(1, 5))}")
        g.emit(".Lloop:")
        if draw(st.booleans()):
            # double buffering: read this trip's buffer, fill the other one
            lane = g.v_dst()
            g.emit(f"v_and_b32 {lane}, {hex(draw(st.sampled_from([0x3f0, 0x7f0, 0xff0])))}, "
                   f"{draw(st.sampled_from(['v0', lane]))}")
            cur = g.v_dst()
            g.emit(f"v_add_nc_u32 {cur}, {pp}, {lane}")
            g.emit(f"ds_load_b128 v[12:15], {cur} offset:{hex(draw(st.sampled_from([0, 0x10, 0x400])))}", True)
            g.emit(f"s_xor_b32 s21, {pp}, {hex(toggle)}")
            g.emit("tensor_load_to_lds s[20:23], s[24:31]", True)
    for _ in range(draw(st.integers(2, 14))):
        g.op()
    if draw(st.integers(0, 3)) == 0:
        # some lanes off: VALU writes keep the old value in them
        g.emit(f"v_cmp_gt_u32 vcc_lo, {g.const()}, {g.v_src()}")
        g.emit("s_and_saveexec_b32 s2, vcc_lo")
        for _ in range(draw(st.integers(1, 3))):
            k = draw(st.integers(0, 2))
            if k == 0:
                g.emit(f"v_mov_b32 {g.v_dst()}, {g.any_src()}")
            elif k == 1:
                a, b = g.any_src(), g.v_src()
                g.emit(f"v_add_nc_u32 {g.v_dst()}, {a}, {b}")
            else:
                g.access()
        g.emit("s_or_b32 exec_lo, exec_lo, s2")
    if draw(st.booleans()):
        g.emit(f"s_cmp_lt_u32 {draw(st.sampled_from(g.sdef))}, {g.const()}")
        g.emit("s_cbranch_scc1 .Lskip")
        for _ in range(draw(st.integers(1, 4))):
            g.op()
        g.emit(".Lskip:")
        g.access()
    if loop:
        kind = draw(st.integers(0, 3))
        if kind == 3:  # a ring index: pp = pp + 1 == n ? 0 : pp + 1
            g.emit(f"s_add_co_u32 {pp}, {pp}, 1")
            g.emit(f"s_cmp_eq_u32 {pp}, {draw(st.integers(2, 5))}")
            g.emit(f"s_cselect_b32 {pp}, 0, {pp}")
        elif kind == 0:
            g.emit(f"s_xor_b32 {pp}, {pp}, {hex(toggle) if draw(st.booleans()) else g.const()}")
        elif kind == 1:
            g.emit(f"s_add_co_u32 {pp}, {pp}, {hex(toggle) if draw(st.booleans()) else g.const()}")
            g.emit(f"s_and_b32 {pp}, {pp}, {hex(toggle * 2 - 1) if draw(st.booleans()) else g.const()}")
        else:
            g.emit(f"v_xor_b32 v11, {pp}, v11")
            g.vdef.append("v11")
        g.emit("s_sub_co_u32 s3, s3, 1")
        g.emit("s_cmp_lg_u32 s3, 0")
        g.emit("s_cbranch_scc1 .Lloop")
        for _ in range(draw(st.integers(0, 2))):
            g.access()
    g.access()
    g.emit("s_endpgm")
    return "\n".join(("" if ln.endswith(":") else "  ") + ln for ln in g.lines) + "\n", g.accesses


@st.composite
def subdword_programs(draw):
    """Short chains of sub-dword arithmetic (SDWA, 16-bit operations, i1 masks) on small
    lane values, each feeding an access: the reported range must hold every byte touched."""
    g = Gen(draw)
    g.emit("k:")
    g.descriptor()
    for _ in range(draw(st.integers(1, 3))):
        src = draw(st.sampled_from(g.vdef))
        g.emit(f"v_and_b32 {g.v_dst()}, {hex(draw(st.sampled_from([0x3f, 0xff, 0x3f0, 0x1fff, 0xffff, 0x8f00])))}, "
               f"{src}")
    for _ in range(draw(st.integers(1, 6))):
        k = draw(st.integers(31, 34))
        g.subdword(k)
        if k == 34:
            g.emit(f"v_add_nc_u32 {g.v_dst()}, {g.sdef[-1]}, {g.vdef[0]}")
        g.emit(f"ds_load_b32 v12, {g.vdef[-1]}", True)
    g.emit("s_endpgm")
    return "\n".join(("" if ln.endswith(":") else "  ") + ln for ln in g.lines) + "\n", g.accesses


@SETTINGS
@given(subdword_programs(), st.lists(st.integers(0, 1 << 20), min_size=2, max_size=3))
def test_subdword_values_hold(prog, seeds):
    text, accesses = prog
    facts, by_line, lines = _analysed(text)
    for w in range(WAVES):
        for seed in seeds:
            out: dict = {}
            Wave(w, seed).run(lines, set(accesses), out)
            for ln in accesses:
                r = facts.access(by_line[ln]).byte_range()
                for _, got in out.get(ln, ()):
                    assert r is None or not got or (r[0] <= min(got) and max(got) <= r[1]), \
                        (ln, hex(min(got)), hex(max(got)), r)


# --- execution ---------------------------------------------------------------------------------------

class Wave:
    """One wave's registers; `run` executes the kernel and records LDS bytes per access."""

    def __init__(self, wave: int, seed: int) -> None:
        self.s = {"s0": 0x1000, "s1": 0, "ttmp8": (wave << 25) | (seed * 2654435761 & 0x1FFFFFF) | (seed & 3) << 30}
        self.v = {"v0": [wave * LANES + i for i in range(LANES)], "v11": [0] * LANES, "v14": [0] * LANES}
        self.scc = 0
        self.vcc = [0] * LANES
        self.exec = [1] * LANES
        self.seed = seed

    def sval(self, t: str) -> int:
        if t in self.s:
            return self.s[t]
        if t in ("exec_lo", "exec"):
            return sum(b << i for i, b in enumerate(self.exec))
        if t.startswith("s[") and ":" in t:  # a pair read as 64 bits by the 64-bit forms here
            lo = int(t[2:t.index(":")])
            return self.sval(f"s{lo}") | self.sval(f"s{lo + 1}") << 32
        if t.startswith(("0x", "-")) or t[0].isdigit():
            return int(t, 0) & M
        return self.seed * 0x9E3779B1 & M  # an SGPR nobody wrote: some value

    def lane(self, t: str, i: int) -> int:
        if t in self.v:
            return self.v[t][i]
        return self.sval(t)

    def setv(self, d: str, f) -> None:
        old = self.v.get(d, [self.seed * 0x27D4EB2F & M] * LANES)  # a VGPR nobody wrote: some value
        self.v[d] = [f(i) & M if self.exec[i] else old[i] for i in range(LANES)]

    def run(self, lines: list[str], accesses: set[int], out: dict) -> None:
        labels = {ln.strip()[:-1]: n for n, ln in enumerate(lines) if ln.strip().endswith(":")}
        pc, trip, steps = 0, 0, 0
        while pc < len(lines) and steps < 5000:
            steps += 1
            raw = lines[pc].split("//")[0].strip()
            lineno = pc + 1
            pc += 1
            if not raw or raw.endswith(":"):
                continue
            mn, _, rest = raw.partition(" ")
            ops = [o.strip() for o in rest.split(",")] if rest else []
            if mn == "s_endpgm":
                return
            if mn == "s_branch":
                pc = labels[ops[0]]
                continue
            if mn == "s_cbranch_scc0":
                if not self.scc:
                    pc = labels[ops[0]]
                continue
            if mn == "s_cbranch_scc1":
                if self.scc:
                    target = labels[ops[0]]
                    if target < pc:
                        trip += 1
                    pc = target
                continue
            if lineno in accesses:
                out.setdefault(lineno, []).append((trip, self.touch(mn, ops, raw)))
                continue
            self.step(mn, ops, raw)

    def touch(self, mn: str, ops: list, raw: str) -> set:
        def off(name: str) -> int:
            for part in raw.split():
                if part.startswith(name + ":"):
                    return int(part.split(":")[1], 0)
            return 0
        got: set = set()
        on = [i for i in range(LANES) if self.exec[i]]
        if mn.startswith("ds_"):
            addr = ops[1].split()[0] if mn.startswith("ds_load") else ops[0]
            if "2addr" in mn:
                scale = 4 * (64 if "stride64" in mn else 1)
                for i in on:
                    for o in (off("offset0"), off("offset1")):
                        base = (self.lane(addr, i) + o * scale) & M
                        got.update(range(base, base + 4))
                return got
            size = {"b32": 4, "b64": 8, "b128": 16, "u8": 1}[mn.split("_")[-1]]
            for i in on:
                base = (self.lane(addr, i) + off("offset")) & M
                got.update(range(base, base + size))
            return got
        if mn.startswith("global_load_async"):
            for i in on:
                base = (self.lane(ops[0], i) + off("offset")) & M
                got.update(range(base, base + 4))
            return got
        # tensor_load_to_lds s[20:23], s[24:31]: a linear stream of elements with padding
        g1 = [self.s.get(f"s{24 + i}", 0) for i in range(8)]
        lds = self.s.get("s21", 0)
        esize = 1 << (g1[0] >> 16 & 3)
        elems = max(1, g1[3] >> 16) * max(1, g1[4] & 0xFFFF) * max(1, g1[4] >> 16)
        pad_on = g1[0] >> 20 & 1
        interval = 4 << ((g1[0] >> 22 & 7) + 1)
        pad = 4 * ((g1[0] >> 25) + 1)
        pos = data = 0
        for _ in range(elems):
            got.update(range(lds + pos, lds + pos + esize))
            pos += esize
            data += esize
            if pad_on and data % interval == 0:
                pos += pad  # the pad follows every `interval` bytes of data
        return got

    def sdwa(self, mn: str, raw: str) -> None:
        """An SDWA instruction: sources selected (and sign-extended), the operation, the
        destination placed; a 16-bit operation's upper half is left as some value."""
        fields = dict(f.split(":", 1) for f in raw.split() if ":" in f and "_" in f.split(":")[0])
        body = raw.split(None, 1)[1].split(" dst_sel")[0]
        opnds = [o.strip() for o in body.split(",")]
        d, srcs = opnds[0], opnds[1:]

        def pick(i: int, lane: int) -> int:
            t = srcs[i]
            sx = t.startswith("sext(")
            v = self.lane(t[5:-1] if sx else t, lane)
            off, width = SDWA_FIELDS[fields[f"src{i}_sel"]]
            v = (v >> off) & ((1 << width) - 1)
            return _sext(v, width) if sx and width < 32 else v

        op = mn[:-len("_sdwa")]
        junk = self.seed * 0x61C88647 & 0xFFFF0000

        def compute(lane: int) -> int:
            a = pick(0, lane)
            b = pick(1, lane) if len(srcs) > 1 else 0
            if op == "v_mov_b32":
                return a
            if op == "v_lshlrev_b32":
                return (b << (a & 31)) & M
            if op == "v_lshrrev_b32":
                return b >> (a & 31)
            if op == "v_add_u32":
                return (a + b) & M
            if op == "v_and_b32":
                return a & b
            a16, b16 = a & 0xFFFF, b & 0xFFFF
            if op == "v_lshlrev_b16":
                r = (b16 << (a16 & 15)) & 0xFFFF
            elif op == "v_ashrrev_i16":
                r = (_sext(b16, 16) >> (a16 & 15)) & 0xFFFF if b16 & 0x8000 else b16 >> (a16 & 15)
            elif op == "v_add_u16":
                r = (a16 + b16) & 0xFFFF
            else:
                raise AssertionError(f"interpreter lacks {mn}")
            return r | junk  # (the upper half of a 16-bit result: not defined here)

        off, width = SDWA_FIELDS[fields["dst_sel"]]
        old = self.v.get(d, [self.seed * 0x27D4EB2F & M] * LANES)

        def place(lane: int) -> int:
            r = compute(lane)
            if width == 32:
                return r
            fmask = (1 << width) - 1
            field = r & fmask
            out = field << off
            unused = fields["dst_unused"]
            if unused == "UNUSED_PRESERVE":
                out |= old[lane] & ~(fmask << off) & M
            elif unused == "UNUSED_SEXT" and field >> (width - 1) & 1:
                out |= M & ~((1 << (off + width)) - 1)
            return out

        self.setv(d, place)

    def op16(self, mn: str, ops: list) -> None:
        """A 16-bit operation without SDWA: the upper half zeroed or kept (both happen)."""
        d = ops[0]
        old = self.v.get(d, [self.seed * 0x27D4EB2F & M] * LANES)
        keep = self.seed & 1

        def low(t: str, lane: int) -> int:
            return self.lane(t, lane) & 0xFFFF

        def r16(lane: int) -> int:
            if mn == "v_bitop3_b16":
                t = int(ops[3].split("bitop3:")[1], 0)
                x, y, z = low(ops[1], lane), low(ops[2], lane), low(ops[3].split()[0], lane)
                return sum((t >> ((x >> i & 1) << 2 | (y >> i & 1) << 1 | (z >> i & 1)) & 1) << i for i in range(16))
            a, b = low(ops[1], lane), low(ops[2], lane)
            if mn == "v_lshlrev_b16":
                return (b << (a & 15)) & 0xFFFF
            if mn == "v_lshrrev_b16":
                return b >> (a & 15)
            if mn == "v_ashrrev_i16":
                return (_sext(b, 16) >> (a & 15)) & 0xFFFF
            if mn == "v_add_u16":
                return (a + b) & 0xFFFF
            if mn == "v_sub_u16":
                return (a - b) & 0xFFFF
            raise AssertionError(f"interpreter lacks {mn}")

        self.setv(d, lambda i: r16(i) | (old[i] & 0xFFFF0000 if keep else 0))

    def step(self, mn: str, ops: list, raw: str) -> None:
        s, d = self.sval, ops[0] if ops else None
        if mn.endswith("_sdwa"):
            self.sdwa(mn, raw)
        elif mn in ("v_bitop3_b16", "v_lshlrev_b16", "v_lshrrev_b16", "v_ashrrev_i16", "v_add_u16", "v_sub_u16"):
            self.op16(mn, ops)
        elif mn == "s_cselect_b64":
            lo = int(d[2:d.index(":")])
            v = s(ops[1]) if self.scc else s(ops[2])
            self.s[f"s{lo}"] = self.s[f"s{lo + 1}"] = v  # (-1 and 0 only: both halves alike)
        elif mn == "s_and_b64":
            r = s(ops[1]) & s(ops[2])
            lo = int(d[2:d.index(":")])
            self.s[f"s{lo}"], self.s[f"s{lo + 1}"] = r & M, r >> 32
            self.scc = int(r != 0)
        elif mn == "s_mov_b32":
            self.s[d] = s(ops[1])
        elif mn == "s_movk_i32":
            c = int(ops[1], 0) & 0xFFFF
            self.s[d] = c | 0xFFFF0000 if c & 0x8000 else c
        elif mn == "s_add_co_u32":
            r = s(ops[1]) + s(ops[2])
            self.s[d] = r & M
            self.scc = int(r > M)
        elif mn == "s_sub_co_u32":
            r = s(ops[1]) - s(ops[2])
            self.s[d] = r & M
            self.scc = int(r < 0)
        elif mn == "s_lshl_b32":  # these SALU operations set SCC = (result != 0)
            self.s[d] = (s(ops[1]) << (s(ops[2]) & 31)) & M
            self.scc = int(self.s[d] != 0)
        elif mn == "s_lshr_b32":
            self.s[d] = s(ops[1]) >> (s(ops[2]) & 31)
            self.scc = int(self.s[d] != 0)
        elif mn in ("s_and_b32", "s_or_b32", "s_xor_b32") and d != "exec_lo":
            a, b = s(ops[1]), s(ops[2])
            self.s[d] = a & b if "and" in mn else a | b if "_or" in mn else a ^ b
            self.scc = int(self.s[d] != 0)
        elif mn == "s_mul_i32":
            self.s[d] = (s(ops[1]) * s(ops[2])) & M
        elif mn in ("s_bfe_u32", "s_bfe_i32"):
            spec = s(ops[2])
            o, w = spec & 31, spec >> 16 & 0x7F
            self.s[d] = (s(ops[1]) >> o) & ((1 << w) - 1 if w < 32 else M)
            if mn == "s_bfe_i32":
                self.s[d] = _sext(self.s[d], min(w, 32))
            self.scc = int(self.s[d] != 0)
        elif mn == "s_cmp_lt_u32":
            self.scc = int(s(ops[0]) < s(ops[1]))
        elif mn == "s_cmp_lg_u32":
            self.scc = int(s(ops[0]) != s(ops[1]))
        elif mn == "s_cmp_eq_u32":
            self.scc = int(s(ops[0]) == s(ops[1]))
        elif mn == "s_and_saveexec_b32":
            self.s[d] = sum(b << i for i, b in enumerate(self.exec))
            self.exec = [e & v for e, v in zip(self.exec, self.vcc)]
        elif mn == "s_or_b32" and d == "exec_lo":
            m = s(ops[2])
            self.exec = [e | (m >> i & 1) for i, e in enumerate(self.exec)]
        elif mn == "s_cselect_b32":
            self.s[d] = s(ops[1]) if self.scc else s(ops[2])
        elif mn == "s_load_b32":
            self.s[d] = (self.seed * 0x85EBCA6B + int(ops[2], 0) * 0xC2B2AE35) & M
        elif mn == "s_wait_kmcnt":
            pass
        elif mn == "v_swap_b32":
            a, b = [self.lane(ops[0], i) for i in range(LANES)], [self.lane(ops[1], i) for i in range(LANES)]
            self.setv(ops[0], lambda i: b[i])
            self.setv(ops[1], lambda i: a[i])
        elif mn == "v_mov_b32":
            self.setv(d, lambda i: self.lane(ops[1], i))
        elif mn in ("v_add_nc_u32", "v_sub_nc_u32", "v_and_b32", "v_or_b32", "v_xor_b32"):
            f = {"v_add_nc_u32": lambda a, b: a + b, "v_sub_nc_u32": lambda a, b: a - b,
                 "v_and_b32": lambda a, b: a & b, "v_or_b32": lambda a, b: a | b,
                 "v_xor_b32": lambda a, b: a ^ b}[mn]
            self.setv(d, lambda i: f(self.lane(ops[1], i), self.lane(ops[2], i)))
        elif mn == "v_lshlrev_b32":
            self.setv(d, lambda i: self.lane(ops[2], i) << (self.lane(ops[1], i) & 31))
        elif mn == "v_lshrrev_b32":
            self.setv(d, lambda i: self.lane(ops[2], i) >> (self.lane(ops[1], i) & 31))
        elif mn == "v_mad_u32_u24":
            self.setv(d, lambda i: (self.lane(ops[1], i) & 0xFFFFFF) * (self.lane(ops[2], i) & 0xFFFFFF)
                      + self.lane(ops[3], i))
        elif mn == "v_mul_u32_u24":
            self.setv(d, lambda i: (self.lane(ops[1], i) & 0xFFFFFF) * (self.lane(ops[2], i) & 0xFFFFFF))
        elif mn == "v_bfe_u32":
            self.setv(d, lambda i: (self.lane(ops[1], i) >> (self.lane(ops[2], i) & 31))
                      & ((1 << (self.lane(ops[3], i) & 31)) - 1))
        elif mn == "v_bfe_i32":
            self.setv(d, lambda i: _sext((self.lane(ops[1], i) >> (self.lane(ops[2], i) & 31))
                                         & ((1 << (self.lane(ops[3], i) & 31)) - 1), self.lane(ops[3], i) & 31))
        elif mn == "v_lshl_or_b32":
            self.setv(d, lambda i: (self.lane(ops[1], i) << (self.lane(ops[2], i) & 31)) | self.lane(ops[3], i))
        elif mn == "v_lshl_add_u32":
            self.setv(d, lambda i: (self.lane(ops[1], i) << (self.lane(ops[2], i) & 31)) + self.lane(ops[3], i))
        elif mn == "v_readfirstlane_b32":
            first = next((i for i in range(LANES) if self.exec[i]), 0)
            self.s[d] = self.lane(ops[1], first)
        elif mn == "v_cmp_gt_u32":  # inactive lanes read as 0
            self.vcc = [int(self.lane(ops[1], i) > self.lane(ops[2], i)) & self.exec[i] for i in range(LANES)]
        elif mn == "v_cndmask_b32":
            self.setv(d, lambda i: self.lane(ops[2], i) if self.vcc[i] else self.lane(ops[1], i))
        elif mn == "v_or3_b32":
            self.setv(d, lambda i: self.lane(ops[1], i) | self.lane(ops[2], i) | self.lane(ops[3], i))
        elif mn == "v_add3_u32":
            self.setv(d, lambda i: self.lane(ops[1], i) + self.lane(ops[2], i) + self.lane(ops[3], i))
        elif mn == "v_dual_lshlrev_b32":
            # ops: dX, shift, srcX :: v_dual_and_b32 dY, c, srcY (both read before writing)
            rest = raw.split("::")
            x = [o.strip() for o in rest[0].split(" ", 1)[1].split(",")]
            y = [o.strip() for o in rest[1].strip().split(" ", 1)[1].split(",")]
            xv = [(self.lane(x[2], i) << (self.lane(x[1], i) & 31)) & M for i in range(LANES)]
            yv = [self.lane(y[1], i) & self.lane(y[2], i) for i in range(LANES)]
            self.setv(x[0], lambda i: xv[i])
            self.setv(y[0], lambda i: yv[i])
        else:
            raise AssertionError(f"interpreter lacks {mn}")


# --- the property ------------------------------------------------------------------------------------

@SETTINGS
@given(programs(), st.lists(st.integers(0, 1 << 20), min_size=2, max_size=3))
def test_analysis_never_calls_overlapping_accesses_disjoint(prog, seeds):
    _check_same_wave(prog, seeds)


@st.composite
def mask_programs(draw):
    """Two LDS bases selected on two tests of one i1 lane mask (``s_cselect_b64 s, -1, 0``,
    later ``s_and_b64 s, s, exec; s_cselect_b32``), as compiled ping-pong code does; EXEC may
    be narrowed (even to nothing) between them."""
    g = Gen(draw)
    g.emit("k:")
    g.descriptor()
    g.emit(f"s_load_b32 s4, s[0:1], {hex(4 * draw(st.integers(0, 7)))}")
    g.emit("s_wait_kmcnt 0x0")
    g.sdef.append("s4")
    g.emit(f"s_cmp_lt_u32 s4, {hex(draw(st.sampled_from([0x10000000, 0x80000000, 0xc0000000])))}")
    wide = draw(st.booleans())
    lo, hi = draw(st.sampled_from([("-1", "0"), ("0", "-1")]))
    g.emit(f"s_cselect_b{64 if wide else 32} {'s[40:41]' if wide else 's40'}, {lo}, {hi}")
    size = draw(st.sampled_from([0x100, 0x1000, 0x2000]))
    for dst in ("s6", "s7"):
        narrowed = draw(st.integers(0, 2)) == 0
        if narrowed:
            g.emit(f"v_cmp_gt_u32 vcc_lo, {hex(draw(st.sampled_from([0, 1, 16])))}, v0")
            g.emit("s_and_saveexec_b32 s2, vcc_lo")
        g.emit("s_and_b64 s[44:45], s[40:41], exec" if wide else "s_and_b32 s44, s40, exec_lo")
        a, b = draw(st.sampled_from([("0", hex(size)), (hex(size), "0"), ("0", hex(size // 2))]))
        g.emit(f"s_cselect_b32 {dst}, {a}, {b}")
        if narrowed:
            g.emit("s_or_b32 exec_lo, exec_lo, s2")
    g.emit("v_lshlrev_b32 v1, 2, v0")
    g.emit("v_add_nc_u32 v2, s6, v1")
    g.emit("v_add_nc_u32 v3, s7, v1")
    g.emit("ds_store_b32 v2, v12", True)
    g.emit("ds_load_b32 v12, v3", True)
    g.emit("s_endpgm")
    return "\n".join(("" if ln.endswith(":") else "  ") + ln for ln in g.lines) + "\n", g.accesses


@SETTINGS
@given(mask_programs(), st.lists(st.integers(0, 1 << 20), min_size=3, max_size=4))
def test_mask_tests_never_call_overlapping_bases_disjoint(prog, seeds):
    _check_same_wave(prog, seeds)


def _analysed(text: str) -> tuple:
    """(LDS facts, instructions by line, lines) of a generated kernel (noted for a failure)."""
    note(text)
    m = parse_asm(text, "gen.s")
    assert not [d for d in m.diagnostics if d.severity == "error"], m.diagnostics
    f = m.functions[0]
    facts = lds_facts(f, m, launch=LAUNCH)
    return facts, {i.line: i for b in f.blocks for i in b.instrs if not i.is_label}, text.splitlines()


def _check_same_wave(prog, seeds) -> None:
    text, accesses = prog
    facts, by_line, lines = _analysed(text)
    acc_lines = set(accesses)
    runs = []
    for w in range(WAVES):
        for seed in seeds:
            out: dict = {}
            Wave(w, seed).run(lines, acc_lines, out)
            runs.append(out)
    for ln in accesses:
        acc = facts.access(by_line[ln])
        r = acc.byte_range()
        if r is None:
            continue
        for out in runs:
            for _, got in out.get(ln, ()):
                assert not got or (r[0] <= min(got) and max(got) <= r[1]), (ln, hex(min(got)), hex(max(got)), r)
    for ia, la in enumerate(accesses):
        for lb in accesses[ia:]:
            any_trip = same_trip = False
            for out in runs:
                for ta, ga in out.get(la, ()):
                    for tb, gb in out.get(lb, ()):
                        if la == lb and ta == tb:
                            continue  # one execution with itself
                        if ga & gb:
                            any_trip = True
                            same_trip = same_trip or ta == tb
            a, b = by_line[la], by_line[lb]
            if any_trip:
                assert facts.may_overlap(a, b, same_trip=False), (la, lb, facts.why_not_proven(a, b))
            if same_trip:
                assert facts.may_overlap(a, b, same_trip=True), (la, lb, facts.why_not_proven(a, b, True))


@SETTINGS
@given(programs(), st.integers(0, 1 << 20))
def test_cross_wave_answers_hold(prog, seed):
    """`may_overlap_waves` (the publish rule's question): two different waves of one workgroup
    (the same kernel arguments, their own wave index) never share a byte between accesses it
    calls disjoint (with `same_trip`, in the same trip of the loop)."""
    text, accesses = prog
    note(text)
    m = parse_asm(text, "gen.s")
    f = m.functions[0]
    facts = lds_facts(f, m, launch=LAUNCH)
    by_line = {i.line: i for b in f.blocks for i in b.instrs if not i.is_label}
    lines = text.splitlines()
    acc_lines = set(accesses)
    runs = []
    for w in range(WAVES):
        out: dict = {}
        Wave(w, seed).run(lines, acc_lines, out)
        runs.append(out)
    for la in accesses:
        for lb in accesses:
            any_trip = same_trip = False
            for w1, o1 in enumerate(runs):
                for w2, o2 in enumerate(runs):
                    if w1 == w2:
                        continue
                    for ta, ga in o1.get(la, ()):
                        for tb, gb in o2.get(lb, ()):
                            if ga & gb:
                                any_trip = True
                                same_trip = same_trip or ta == tb
            a, b = by_line[la], by_line[lb]
            if any_trip:
                assert facts.may_overlap_waves(a, b, same_trip=False), (la, lb)
            if same_trip:
                assert facts.may_overlap_waves(a, b, same_trip=True), (la, lb)
