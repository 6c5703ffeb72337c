"""Random gfx1250 assembly kernels for the publish rule: LDS stores, loads and tensor fills
around split barriers, at constant and wave-indexed addresses, with ping-pong buffers in a
loop, branches on the wave index and on a kernel argument, two paths by wave index with
barriers on both (wave-specialised, sometimes with loops of equal trip counts), and
hand-written waits stripped
(the pass inserts them).  Used by tests/test_publish_props.py and
benchmarks/bench_hwcheck.py (`--publish N`).

`random_publish_program(seed)` returns the kernel's text.  Addresses are small (below 64 KiB)
and every access has a proven range, so the publish rule is asked at every barrier.
"""

from __future__ import annotations

import random

HEAD = ('.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n.text\n.globl k\n.p2align 8\n.type k,@function\nk:\n')
#: buffers the program's accesses pick from (bytes), and the per-wave stride
BASES = (0x0, 0x400, 0x800, 0x1000, 0x2000, 0x3000)
STRIDES = (0, 0x100, 0x200, 0x1000)


class _Gen:
    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd
        self.lines: list[str] = []
        self.nlabel = 0
        self.vdata = 20

    def emit(self, s: str) -> None:
        self.lines.append(s)

    def label(self) -> str:
        self.nlabel += 1
        return f".L{self.nlabel}"

    def addr(self) -> str:
        """A VGPR holding an LDS address: base + wave * stride (+ a small lane spread)."""
        r = self.r
        base, stride = r.choice(BASES), r.choice(STRIDES)
        v = f"v{r.randint(1, 6)}"
        self.emit(f"s_mul_i32 s5, s2, {hex(stride)}")
        self.emit(f"s_add_co_u32 s5, s5, {hex(base)}")
        if r.random() < 0.3:
            self.emit("v_and_b32 v8, 15, v0")
            self.emit("v_lshlrev_b32 v8, 2, v8")
            self.emit(f"v_add_nc_u32 {v}, s5, v8")
        else:
            self.emit(f"v_mov_b32 {v}, s5")
        return v

    def access(self, ring: bool = False) -> None:
        r = self.r
        k = r.random()
        if ring:
            self.emit("v_mov_b32 v7, s6")
            v = "v7"
        else:
            v = self.addr()
        if k < 0.4:
            self.emit(f"ds_store_b32 {v}, v{self.vdata}")
        elif k < 0.8:
            d = f"v{r.randint(20, 27)}"
            self.emit(f"ds_load_b32 {d}, {v}")
            if r.random() < 0.5:
                self.emit(f"v_add_nc_u32 v30, v30, {d}")
        else:
            self.fill(ring)

    def fill(self, ring: bool) -> None:
        """A tensor fill of a small 1-D tile (256 bytes) at a base in s[13] (D#0 dword 1)."""
        r = self.r
        if ring:
            self.emit("s_mov_b32 s13, s6")
        else:
            self.emit(f"s_mul_i32 s13, s2, {hex(r.choice(STRIDES))}")
            self.emit(f"s_add_co_u32 s13, s13, {hex(r.choice(BASES))}")
        self.emit("s_mov_b32 s12, 1")
        self.emit("s_mov_b32 s14, 0")
        self.emit("s_mov_b32 s15, 0")
        self.emit("s_mov_b32 s16, 0x20000")  # D#1 dword 0: 4-byte elements, no pad
        self.emit("s_mov_b32 s17, 0")
        self.emit("s_mov_b32 s18, 0")
        self.emit("s_mov_b32 s19, 0x400000")  # tile_dim0 = 64 (bits 31:16)
        self.emit("s_mov_b32 s20, 0x10001")  # tile_dim1 = tile_dim2 = 1
        self.emit("s_mov_b32 s21, 0")
        self.emit("s_mov_b32 s22, 0")
        self.emit("s_mov_b32 s23, 0")
        self.emit("tensor_load_to_lds s[12:15], s[16:23]")

    def barrier(self) -> None:
        if self.r.random() < 0.3:
            self.emit("s_wait_tensorcnt 0x0")
        self.emit("s_barrier_signal -1")
        self.emit("s_barrier_wait 0xffff")

    def specialised(self) -> None:
        """Two paths by wave index, each with barriers (often as many as the other's) and
        sometimes a loop on a uniform trip count (s11), as aiter's fmha bwd: the barrier
        instances are then paired between waves (waitcnt/wave_match.py)."""
        r = self.r
        other, join = self.label(), self.label()
        self.emit(f"s_cmp_lt_u32 s2, {r.randint(1, 3)}")
        self.emit(f"s_cbranch_scc1 {other}")
        bars = r.randint(0, 2)
        loop = r.random() < 0.5
        trips = r.randint(1, 3)
        for side in (0, 1):
            if side:
                self.emit(f"s_branch {join}")
                self.emit(f"{other}:")
            if loop:
                self.emit(f"s_mov_b32 s11, {trips if side == 0 or r.random() < 0.8 else trips + 1}")
                top = self.label()
                self.emit(f"{top}:")
            for _ in range(bars if r.random() < 0.8 else bars + 1):
                self.items(r.randint(0, 2))
                self.barrier()
            self.items(r.randint(0, 2))
            if loop:
                self.emit("s_sub_co_u32 s11, s11, 1")
                self.emit("s_cmp_lg_u32 s11, 0")
                self.emit(f"s_cbranch_scc1 {top}")
        self.emit(f"{join}:")

    def items(self, n: int, ring: bool = False) -> None:
        for _ in range(n):
            k = self.r.random()
            if k < 0.3:
                self.barrier()
            else:
                self.access(ring and self.r.random() < 0.5)


def random_publish_program(seed: int) -> str:
    r = random.Random(seed)
    g = _Gen(r)
    g.emit("s_load_b32 s9, s[0:1], 0x0")
    g.emit("s_wait_kmcnt 0x0")
    g.emit("s_bfe_u32 s2, ttmp8, 0x50019")  # the wave's index in its workgroup
    g.emit("v_mov_b32 v30, 0")
    g.items(r.randint(1, 4))
    if r.random() < 0.6:
        # a loop with ping-pong buffers: s6 alternates between two bases each trip
        a, b = r.choice(BASES), r.choice(BASES)
        g.emit(f"s_mov_b32 s6, {hex(a)}")
        g.emit(f"s_mov_b32 s10, {r.randint(2, 4)}")
        top = g.label()
        g.emit(f"{top}:")
        g.items(r.randint(2, 6), ring=True)
        g.emit(f"s_xor_b32 s6, s6, {hex(a ^ b)}")
        g.emit("s_sub_co_u32 s10, s10, 1")
        g.emit("s_cmp_lg_u32 s10, 0")
        g.emit(f"s_cbranch_scc1 {top}")
    if r.random() < 0.5:
        # a branch on the wave index (barriers inside it make the kernel unaligned) or on a
        # kernel argument (every wave goes the same way)
        cond = "s_cmp_eq_u32 s2, 0" if r.random() < 0.5 else "s_cmp_eq_u32 s9, 0"
        skip = g.label()
        g.emit(cond)
        g.emit(f"s_cbranch_scc1 {skip}")
        g.items(r.randint(1, 3))
        g.emit(f"{skip}:")
    if r.random() < 0.5:
        g.specialised()
    g.items(r.randint(1, 4))
    g.emit("v_add_nc_u32 v31, v30, v20")
    g.emit("s_endpgm")
    return HEAD + "\n".join(("" if ln.endswith(":") else "  ") + ln for ln in g.lines) + "\n"
