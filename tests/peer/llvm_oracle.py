"""LLVM 22's SIInsertWaitcnts as an oracle for the per-target instruction table.

For a family sample (a producer instruction: a DS read, a global store, an s_load, ...) we write
small MIR functions -- producer, then a consumer or an overwriter -- run
``llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=CPU -run-pass=si-insert-waitcnts`` on them and read
back which waits LLVM inserted: counter, value and position.  The same MIR run through
``llc-22 -start-after=si-insert-waitcnts`` gives the producer as LLVM prints it in assembly,
which is what stinkywait's table is asked about.  Nothing is hard-coded: every answer comes from
the installed LLVM at the time of the run (cached per CPU and MIR text in a temp directory).

Hazards (one MIR function each, `HAZARDS`):
* ``pending``: the producer, then one *soft* wait per counter of the generation
  (``S_WAITCNT_soft 0``, ``S_WAIT_LOADCNT_soft 0``, ...).  The pass keeps a soft wait only for
  a counter that still has something pending, so what survives is exactly the set of counters
  LLVM counts the producer on (plus, on gfx1250, xcnt for its address translation).
* ``raw``: a VALU/SALU reads the producer's result (a VGPR, SGPRs, SCC, or LDS through a
  ``DS_READ`` for the LDS DMA forms).
* ``waw_valu``: a VALU overwrites the VGPR a pending load will write.
* ``waw_same``: the same load again into the same register (in-order VGPR writes on gfx9-11).
* ``war_data`` / ``war_addr`` / ``war_base``: a VALU/SALU overwrites the store data, the load's
  address VGPRs or the s_load base SGPRs while the op may still read them (gfx1250 xcnt).
* ``return``: the producer pending at ``S_SETPC_B64_return`` in a non-entry function.
* ``call``: an ``s_load`` of the call target, then ``SI_CALL`` through it.

Wait immediates are decoded per generation (``s_waitcnt`` field layouts of gfx9, gfx10 and
gfx11; gfx12's split and combined ``s_wait_*`` forms).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

LLC = "llc-22"
TRIPLE = "amdgcn-amd-amdhsa"


def generation(cpu: str) -> str:
    """gfx9, gfx10, gfx11, gfx12 or gfx1250 (the wait encodings and MIR opcode spellings)."""
    if cpu == "gfx1250":
        return "gfx1250"
    for gen in ("gfx12", "gfx11", "gfx10"):
        if cpu.startswith(gen):
            return gen
    if cpu.startswith("gfx9"):
        return "gfx9"
    raise ValueError(f"unknown AMDGPU generation for {cpu}")


# --- wait decoding ----------------------------------------------------------------------------

def decode_s_waitcnt(gen: str, imm: int) -> dict[str, int]:
    """The counters an ``S_WAITCNT imm`` waits on (a field at its maximum does not wait)."""
    if gen == "gfx11":
        vm, exp, lgkm, lgkm_max = (imm >> 10) & 0x3F, imm & 0x7, (imm >> 4) & 0x3F, 0x3F
    else:
        vm = (imm & 0xF) | ((imm >> 14) & 0x3) << 4
        exp = (imm >> 4) & 0x7
        lgkm_max = 0x3F if gen == "gfx10" else 0xF
        lgkm = (imm >> 8) & lgkm_max
    out = {}
    if vm != 0x3F:
        out["vmcnt"] = vm
    if exp != 0x7:
        out["expcnt"] = exp
    if lgkm != lgkm_max:
        out["lgkmcnt"] = lgkm
    return out


_GFX12_SINGLE = {"S_WAIT_LOADCNT": "loadcnt", "S_WAIT_STORECNT": "storecnt",
                 "S_WAIT_SAMPLECNT": "samplecnt", "S_WAIT_BVHCNT": "bvhcnt",
                 "S_WAIT_EXPCNT": "expcnt", "S_WAIT_DSCNT": "dscnt", "S_WAIT_KMCNT": "kmcnt",
                 "S_WAIT_XCNT": "xcnt", "S_WAIT_TENSORCNT": "tensorcnt",
                 "S_WAIT_ASYNCCNT": "asynccnt"}
_GFX12_PAIR = {"S_WAIT_LOADCNT_DSCNT": "loadcnt", "S_WAIT_STORECNT_DSCNT": "storecnt"}
_WAIT_LINE = re.compile(r"^(S_WAIT[A-Z_]*?)(?:_soft)?\s+(?:undef\s+)?(?:\$sgpr_null,\s*)?(-?\d+)")


def decode_wait(gen: str, line: str) -> dict[str, int] | None:
    """Counter -> value of one MIR wait instruction; None if the line is not a wait."""
    m = _WAIT_LINE.match(line.strip())
    if not m:
        return None
    op, imm = m.group(1), int(m.group(2))
    if op == "S_WAITCNT":
        return decode_s_waitcnt(gen, imm)
    if op == "S_WAITCNT_VSCNT":
        return {"vscnt": imm}
    if op in _GFX12_SINGLE:
        return {_GFX12_SINGLE[op]: imm}
    if op in _GFX12_PAIR:
        out = {}
        if (imm >> 8) & 0x3F != 0x3F:
            out[_GFX12_PAIR[op]] = (imm >> 8) & 0x3F
        if imm & 0x3F != 0x3F:
            out["dscnt"] = imm & 0x3F
        return out
    return None


#: the soft waits that ask "is anything pending on this counter" (gfx12 has no soft expcnt)
SOFT_WAITS = {
    "gfx9": ("S_WAITCNT_soft 0",),
    "gfx10": ("S_WAITCNT_soft 0", "S_WAITCNT_VSCNT_soft undef $sgpr_null, 0"),
    "gfx11": ("S_WAITCNT_soft 0", "S_WAITCNT_VSCNT_soft undef $sgpr_null, 0"),
    "gfx12": ("S_WAIT_LOADCNT_soft 0", "S_WAIT_STORECNT_soft 0", "S_WAIT_SAMPLECNT_soft 0",
              "S_WAIT_BVHCNT_soft 0", "S_WAIT_DSCNT_soft 0", "S_WAIT_KMCNT_soft 0"),
    "gfx1250": ("S_WAIT_LOADCNT_soft 0", "S_WAIT_STORECNT_soft 0", "S_WAIT_DSCNT_soft 0",
                "S_WAIT_KMCNT_soft 0", "S_WAIT_XCNT_soft 0"),
}
#: the counters LLVM's return keeps pending (the callee does not wait for its stores)
STORE_COUNTERS = ("vscnt", "storecnt")


# --- family samples ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Producer:
    """One family sample: the MIR of the producer on each generation it may exist on, and the
    mnemonics it assembles to (a probe runs on a CPU only if one of them is in that CPU's
    llvm-mc inventory: llc does not check that an opcode exists on the subtarget).

    `dst`: the register the result lands in ("" none, "$scc", "lds" for DMA into LDS);
    `data` / `addr` / `base`: the source registers a WAR probe overwrites; `setup`: MIR lines
    before the producer (``$m0`` for LDS DMA); `note`: why LLVM 22 counts the producer on no
    counter at all (empty for every producer LLVM does count)."""

    family: str
    mnemonics: tuple[str, ...]
    mir: dict[str, str]
    dst: str = ""
    data: str = ""
    addr: str = ""
    base: str = ""
    setup: tuple[str, ...] = ()
    note: str = ""

    def line(self, gen: str) -> str | None:
        return self.mir.get(gen, self.mir.get("*"))


def _all(text: str) -> dict[str, str]:
    return {"*": text}


_BUF = "$sgpr0_sgpr1_sgpr2_sgpr3"
_IMG = "$sgpr8_sgpr9_sgpr10_sgpr11_sgpr12_sgpr13_sgpr14_sgpr15"
_SMP = "$sgpr16_sgpr17_sgpr18_sgpr19"
_GA = "$vgpr10_vgpr11"
_M0 = ("$m0 = S_MOV_B32 0",)
_BVH_DST = "$vgpr20_vgpr21_vgpr22_vgpr23"
_BVH11 = "$vgpr30, $vgpr31, $vgpr32_vgpr33_vgpr34, $vgpr35_vgpr36_vgpr37, $vgpr38_vgpr39_vgpr40"

def _vmem(dst: str, op: str, args: str, memop: str) -> str:
    """One VMEM/FLAT/DS MIR line: ``[dst =] OP args, implicit $exec :: (memop)``."""
    return f"{dst + ' = ' if dst else ''}{op} {args}, implicit $exec :: ({memop})"


def _buffer(dst: str, op: str, vdata: str, memop: str) -> dict[str, str]:
    """A MUBUF ``offen`` access (address $vgpr1): the gfx12+ pseudos are ``*_VBUFFER_*`` and
    take an explicit soffset register."""
    out = {"*": _vmem(dst, f"{op}_OFFEN", f"{vdata}$vgpr1, {_BUF}, 0, 0, 0, 0", memop)}
    for gen in ("gfx12", "gfx1250"):
        out[gen] = _vmem(dst, f"{op}_VBUFFER_OFFEN", f"{vdata}$vgpr1, {_BUF}, $sgpr_null, 0, 0, 0",
                         memop)
    return out


_LD, _ST, _RMW = "load (s32)", "store (s32)", "load store monotonic (s32)"
_FS = "implicit $flat_scr"

PRODUCERS: tuple[Producer, ...] = (
    Producer("ds_load", ("ds_read_b32", "ds_load_b32"),
             _all(_vmem("$vgpr5", "DS_READ_B32_gfx9", "$vgpr1, 0, 0", f"{_LD}, addrspace 3")),
             dst="$vgpr5", addr="$vgpr1"),
    Producer("ds_store", ("ds_write_b32", "ds_store_b32"),
             _all(_vmem("", "DS_WRITE_B32_gfx9", "$vgpr1, $vgpr7, 0, 0", f"{_ST}, addrspace 3")),
             data="$vgpr7", addr="$vgpr1"),
    Producer("ds_atomic_ret", ("ds_add_rtn_u32",),
             _all(_vmem("$vgpr5", "DS_ADD_RTN_U32_gfx9", "$vgpr1, $vgpr7, 0, 0",
                        f"{_RMW}, addrspace 3")),
             dst="$vgpr5", data="$vgpr7", addr="$vgpr1"),
    Producer("ds_atomic_noret", ("ds_add_u32",),
             _all(_vmem("", "DS_ADD_U32_gfx9", "$vgpr1, $vgpr7, 0, 0", f"{_RMW}, addrspace 3")),
             data="$vgpr7", addr="$vgpr1"),
    Producer("global_load", ("global_load_dword", "global_load_b32"),
             _all(_vmem("$vgpr5", "GLOBAL_LOAD_DWORD", f"{_GA}, 0, 0", f"{_LD}, addrspace 1")),
             dst="$vgpr5", addr=_GA),
    Producer("global_store", ("global_store_dword", "global_store_b32"),
             _all(_vmem("", "GLOBAL_STORE_DWORD", f"{_GA}, $vgpr7, 0, 0", f"{_ST}, addrspace 1")),
             data="$vgpr7", addr=_GA),
    Producer("global_atomic_ret", ("global_atomic_add", "global_atomic_add_u32"),
             _all(_vmem("$vgpr5", "GLOBAL_ATOMIC_ADD_RTN", f"{_GA}, $vgpr7, 0, 1",
                        f"{_RMW}, addrspace 1")),
             dst="$vgpr5", data="$vgpr7", addr=_GA),
    Producer("global_atomic_noret", ("global_atomic_add", "global_atomic_add_u32"),
             _all(_vmem("", "GLOBAL_ATOMIC_ADD", f"{_GA}, $vgpr7, 0, 0", f"{_RMW}, addrspace 1")),
             data="$vgpr7", addr=_GA),
    Producer("scratch_load", ("scratch_load_dword", "scratch_load_b32"),
             _all(_vmem("$vgpr5", "SCRATCH_LOAD_DWORD", f"$vgpr1, 0, 0, {_FS}",
                        f"{_LD}, addrspace 5")),
             dst="$vgpr5", addr="$vgpr1"),
    Producer("scratch_store", ("scratch_store_dword", "scratch_store_b32"),
             _all(_vmem("", "SCRATCH_STORE_DWORD", f"$vgpr7, $vgpr1, 0, 0, {_FS}",
                        f"{_ST}, addrspace 5")),
             data="$vgpr7", addr="$vgpr1"),
    # no address space on the memory operand: a generic FLAT access that may reach LDS
    Producer("flat_load", ("flat_load_dword", "flat_load_b32"),
             _all(_vmem("$vgpr5", "FLAT_LOAD_DWORD", f"{_GA}, 0, 0, {_FS}", _LD)),
             dst="$vgpr5", addr=_GA),
    Producer("flat_store", ("flat_store_dword", "flat_store_b32"),
             _all(_vmem("", "FLAT_STORE_DWORD", f"{_GA}, $vgpr7, 0, 0, {_FS}", _ST)),
             data="$vgpr7", addr=_GA),
    Producer("flat_atomic_ret", ("flat_atomic_add", "flat_atomic_add_u32"),
             _all(_vmem("$vgpr5", "FLAT_ATOMIC_ADD_RTN", f"{_GA}, $vgpr7, 0, 1, {_FS}", _RMW)),
             dst="$vgpr5", data="$vgpr7", addr=_GA),
    Producer("flat_atomic_noret", ("flat_atomic_add", "flat_atomic_add_u32"),
             _all(_vmem("", "FLAT_ATOMIC_ADD", f"{_GA}, $vgpr7, 0, 0, {_FS}", _RMW)),
             data="$vgpr7", addr=_GA),
    Producer("buffer_load", ("buffer_load_dword", "buffer_load_b32"),
             _buffer("$vgpr5", "BUFFER_LOAD_DWORD", "", f"{_LD}, addrspace 8"),
             dst="$vgpr5", addr="$vgpr1"),
    Producer("buffer_store", ("buffer_store_dword", "buffer_store_b32"),
             _buffer("", "BUFFER_STORE_DWORD", "$vgpr7, ", f"{_ST}, addrspace 8"),
             data="$vgpr7", addr="$vgpr1"),
    # LDS DMA: the result lands in LDS, read back by a DS_READ with an LDS memory operand
    Producer("buffer_load_lds", ("buffer_load_dword",), {
        g: _vmem("", "BUFFER_LOAD_DWORD_LDS_OFFEN", f"$vgpr1, {_BUF}, 0, 0, 0, 0, implicit $m0",
                 "load (s32), addrspace 1), (store (s32), addrspace 3") for g in ("gfx9", "gfx10")},
        dst="lds", addr="$vgpr1", setup=_M0),
    Producer("global_load_lds", ("global_load_lds_dword",), {
        "gfx9": _vmem("", "GLOBAL_LOAD_LDS_DWORD", f"{_GA}, 0, 0, implicit $m0",
                      "load (s32), addrspace 1), (store (s32), addrspace 3")},
        dst="lds", addr=_GA, setup=_M0),
    Producer("cluster_load", ("cluster_load_b32",), {
        "gfx1250": _vmem("$vgpr5", "CLUSTER_LOAD_B32", f"{_GA}, 0, 0, implicit $m0",
                         f"{_LD}, addrspace 1")},
        dst="$vgpr5", addr=_GA, setup=_M0),
    Producer("smem_load", ("s_load_dwordx2", "s_load_b64"),
             _all("$sgpr20_sgpr21 = S_LOAD_DWORDX2_IMM $sgpr0_sgpr1, 0, 0 :: (load (s64),"
                  " addrspace 4)"), dst="$sgpr20", base="$sgpr0"),
    Producer("memtime", ("s_memtime",), _all("$sgpr20_sgpr21 = S_MEMTIME"), dst="$sgpr20"),
    Producer("memrealtime", ("s_memrealtime",), _all("$sgpr20_sgpr21 = S_MEMREALTIME"),
             dst="$sgpr20"),
    Producer("image_load", ("image_load",), {
        **{g: _vmem("$vgpr5", f"IMAGE_LOAD_V1_V1_{g}",
                    f"$vgpr1, {_IMG}, 1, 0, -1, 0, 0, 0, 0, 0, 0", f"{_LD}, addrspace 8")
           for g in ("gfx10", "gfx11")},
        "gfx12": _vmem("$vgpr5", "IMAGE_LOAD_V1_V1_gfx12", f"$vgpr1, {_IMG}, 1, 0, 0, 0, 0, 0, 0",
                       f"{_LD}, addrspace 8")},
        dst="$vgpr5", addr="$vgpr1"),
    Producer("image_sample", ("image_sample",), {
        g: _vmem("$vgpr5", f"IMAGE_SAMPLE_V1_V1_{g}",
                 f"$vgpr1, {_IMG}, {_SMP}, 1, 0, 0, 0, 0, 0, 0, 0, 0", f"{_LD}, addrspace 8")
        for g in ("gfx10", "gfx11", "gfx12")},
        dst="$vgpr5", addr="$vgpr1"),
    Producer("image_bvh", ("image_bvh_intersect_ray",), {
        "gfx10": _vmem(_BVH_DST, "IMAGE_BVH_INTERSECT_RAY_nsa_gfx10",
                       ", ".join(f"$vgpr{r}" for r in range(30, 41)) + f", {_SMP}, 0",
                       "load (s128), addrspace 8"),
        "gfx11": _vmem(_BVH_DST, "IMAGE_BVH_INTERSECT_RAY_nsa_gfx11", f"{_BVH11}, {_SMP}, 0",
                       "load (s128), addrspace 8"),
        "gfx12": _vmem(_BVH_DST, "IMAGE_BVH_INTERSECT_RAY_gfx12", f"{_BVH11}, {_SMP}, 0",
                       "load (s128), addrspace 8")},
        dst="$vgpr20", addr="$vgpr30"),
    Producer("sendmsg_rtn", ("s_sendmsg_rtn_b32",), _all("$sgpr20 = S_SENDMSG_RTN_B32 131"),
             dst="$sgpr20"),
    Producer("get_barrier_state", ("s_get_barrier_state",),
             _all("$sgpr20 = S_GET_BARRIER_STATE_IMM -1"), dst="$sgpr20"),
    Producer("barrier_signal_isfirst", ("s_barrier_signal_isfirst",),
             _all("S_BARRIER_SIGNAL_ISFIRST_IMM -1, implicit-def $scc, implicit undef $scc"),
             dst="$scc"),
    # instructions without a result that LLVM may still count: messages, scalar stores, cache
    # write-back, prefetches (not TENSOR_STOP: llc crashes on it in SIInsertHardClauses)
    Producer("sendmsg", ("s_sendmsg",), _all("S_SENDMSG 1, implicit $exec, implicit $m0"),
             setup=_M0),
    Producer("smem_store", ("s_store_dword",),
             {"gfx9": "S_STORE_DWORD_IMM $sgpr20, $sgpr0_sgpr1, 0, 0 :: (store (s32),"
                      " addrspace 1)"}, data="$sgpr20", base="$sgpr0"),
    Producer("dcache_wb", ("s_dcache_wb",), _all("S_DCACHE_WB")),
    Producer("smem_prefetch", ("s_prefetch_data",), _all("S_PREFETCH_DATA $sgpr0_sgpr1, 0, $sgpr4, 0"),
             base="$sgpr0"),
    Producer("global_prefetch", ("global_prefetch_b8",),
             _all(f"GLOBAL_PREFETCH_B8 {_GA}, 0, 0, implicit $exec"), addr=_GA,
             note="LLVM 22 counts a VMEM prefetch on nothing"),
    Producer("tensor_load", ("tensor_load_to_lds",), {
        "gfx1250": "TENSOR_LOAD_TO_LDS $sgpr0_sgpr1_sgpr2_sgpr3, $sgpr8_sgpr9_sgpr10_sgpr11_sgpr12"
                   f"_sgpr13_sgpr14_sgpr15, {_SMP}, {_SMP}, 0, 0, implicit-def $tensorcnt,"
                   " implicit $exec, implicit $tensorcnt"},
        dst="lds", note="LLVM 22 has no tensorcnt model"),
    Producer("async_load", ("global_load_async_to_lds_b32",), {
        "gfx1250": "GLOBAL_LOAD_ASYNC_TO_LDS_B32 $vgpr1, $vgpr10_vgpr11, 0, 0, implicit-def"
                   " $asynccnt, implicit $exec, implicit $asynccnt :: (load store (s32),"
                   " addrspace 3)"},
        dst="lds", addr=_GA, note="LLVM 22 has no asynccnt model"),
)

HAZARDS = ("pending", "raw", "waw_valu", "waw_same", "war_data", "war_addr", "war_base",
           "return", "call")


@dataclass(frozen=True)
class Probe:
    """One MIR function: `body` lines; waits after `producer` and up to `upto` count."""

    name: str
    family: str
    hazard: str
    cpu: str
    body: tuple[str, ...]
    producer: int
    upto: int
    liveins: tuple[str, ...]
    entry: bool = True


_REG = re.compile(r"\$(?:vgpr|sgpr)\d+(?:_(?:vgpr|sgpr)\d+)*")


def _consumer(dst: str) -> str:
    if dst == "$scc":
        return "$sgpr40 = S_CSELECT_B32 1, 0, implicit $scc"
    if dst == "lds":
        return _vmem("$vgpr45", "DS_READ_B32_gfx9", "$vgpr2, 0, 0", f"{_LD}, addrspace 3")
    if dst.startswith("$sgpr"):
        return f"$sgpr40 = S_MOV_B32 {dst}"
    return f"$vgpr45 = V_MOV_B32_e32 {dst}, implicit $exec"


def _overwrite(reg: str) -> str:
    first = reg.split("_")[0] if reg.startswith("$vgpr") or reg.startswith("$sgpr") else reg
    if first.startswith("$sgpr"):
        return f"{first} = S_MOV_B32 0"
    return f"{first} = V_MOV_B32_e32 0, implicit $exec"


def build_probes(cpu: str, accepted: set[str] | dict, families: set[str] | None = None
                 ) -> list[Probe]:
    """Every probe that applies to `cpu`: the producer has a MIR spelling for its generation
    and one of its mnemonics is `accepted` (llvm-mc-22's inventory of the CPU)."""
    gen = generation(cpu)
    out = []
    for p in PRODUCERS:
        line = p.line(gen)
        if line is None or (families is not None and p.family not in families):
            continue
        if not any(m in accepted for m in p.mnemonics):
            continue
        head = list(p.setup) + [line]
        k = len(head) - 1
        bodies: dict[str, tuple[list[str], int, bool]] = {}
        pending = head + list(SOFT_WAITS[gen]) + ["S_ENDPGM 0"]
        bodies["pending"] = (pending, len(pending) - 1, True)
        if p.dst:
            body = head + [_consumer(p.dst), "S_ENDPGM 0"]
            bodies["raw"] = (body, len(head), True)
        if p.dst.startswith("$vgpr"):
            bodies["waw_valu"] = (head + [_overwrite(p.dst), "S_ENDPGM 0"], len(head), True)
            bodies["waw_same"] = (head + [line, "S_ENDPGM 0"], len(head), True)
        for hazard, reg in (("war_data", p.data), ("war_addr", p.addr), ("war_base", p.base)):
            if reg:
                bodies[hazard] = (head + [_overwrite(reg), "S_ENDPGM 0"], len(head), True)
        ret = head + ["S_SETPC_B64_return $sgpr30_sgpr31"]
        bodies["return"] = (ret, len(head), False)
        if p.family == "smem_load":
            call = ["$sgpr16_sgpr17 = S_LOAD_DWORDX2_IMM $sgpr0_sgpr1, 0, 0 :: (load (s64),"
                    " addrspace 4)", "$sgpr30_sgpr31 = SI_CALL $sgpr16_sgpr17, 0, csr_amdgpu",
                    "S_SETPC_B64_return $sgpr30_sgpr31"]
            bodies["call"] = (call, 1, False)
        for hazard, (body, upto, entry) in bodies.items():
            regs = sorted({r for ln in body for r in _REG.findall(ln.split("=", 1)[-1])}
                          | {"$sgpr30_sgpr31"})
            out.append(Probe(f"{p.family}.{hazard}", p.family, hazard, cpu, tuple(body),
                             k, upto, tuple(regs), entry))
    return out


def render(probes: list[Probe]) -> str:
    """One MIR document with a function per probe."""
    parts = []
    for k, pr in enumerate(probes):
        lines = [f"  bb.0:", f"    liveins: {', '.join(pr.liveins)}"]
        lines += [f"    {ln}" for ln in pr.body]
        parts.append(f"---\nname: f{k}\ntracksRegLiveness: true\nmachineFunctionInfo:\n"
                     f"  isEntryFunction: {'true' if pr.entry else 'false'}\nbody: |\n"
                     + "\n".join(lines) + "\n...\n")
    return "".join(parts)


# --- running llc and reading its answer -----------------------------------------------------

@dataclass
class Wait:
    counters: dict[str, int]
    before: int            # index in the probe body of the instruction it precedes
    text: str


@dataclass
class Result:
    probe: Probe
    waits: list[Wait] = field(default_factory=list)   # all waits LLVM put in the function
    asm: list[str] = field(default_factory=list)      # the body as LLVM prints it (no waits)

    def window(self) -> dict[str, int]:
        """Counter -> strictest value LLVM waits for after the producer, up to the consumer."""
        out: dict[str, int] = {}
        for w in self.waits:
            if self.probe.producer < w.before <= self.probe.upto:
                for c, v in w.counters.items():
                    out[c] = min(v, out.get(c, v))
        return out

    @property
    def producer_asm(self) -> str:
        return self.asm[self.probe.producer] if self.probe.producer < len(self.asm) else ""


class OracleError(Exception):
    """llc failed or its output could not be read back."""


def available() -> bool:
    return shutil.which(LLC) is not None


def _cache_dir() -> Path:
    base = Path(os.environ.get("STINKYWAIT_ORACLE_CACHE",
                               Path(tempfile.gettempdir()) / "stinkywait-llvm-oracle"))
    base.mkdir(parents=True, exist_ok=True)
    return base


def llc(cpu: str, source: str, args: list[str], suffix: str = ".mir") -> str:
    """llc-22's output for `source` (MIR, or IR with ``suffix=".ll"``), cached per CPU, source
    text, arguments and llc version; OracleError if llc fails."""
    key = hashlib.sha256("\0".join([cpu, *args, suffix, source, _llc_version()]).encode()
                         ).hexdigest()[:24]
    cached = _cache_dir() / f"{cpu}-{key}.out"
    if cached.is_file():
        return cached.read_text()
    with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
        f.write(source)
        path = f.name
    try:
        proc = subprocess.run([LLC, f"-mtriple={TRIPLE}", f"-mcpu={cpu}", *args, path, "-o", "-"],
                              capture_output=True, text=True, check=False)
    finally:
        Path(path).unlink()
    if proc.returncode != 0:
        raise OracleError(f"{LLC} -mcpu={cpu} {' '.join(args)} failed:\n{proc.stderr[:2000]}")
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(proc.stdout)
    tmp.replace(cached)
    return proc.stdout


_VERSION: list[str] = []


def _llc_version() -> str:
    if not _VERSION:
        out = subprocess.run([LLC, "--version"], capture_output=True, text=True).stdout
        _VERSION.append(out.strip())
    return _VERSION[0]


_NOT_INSTRUCTIONS = ("bb.", "liveins", "successors", ";")


def _function_bodies(mir: str) -> dict[str, list[str]]:
    """Function name -> instruction lines of its body in an llc MIR output."""
    out: dict[str, list[str]] = {}
    name, inbody = None, False
    for line in mir.splitlines():
        m = re.match(r"^name:\s+(\S+)", line)
        if m:
            name, inbody = m.group(1), False
            out[name] = []
            continue
        if line.startswith("body:"):
            inbody = True
            continue
        if line.startswith(("---", "...")):
            inbody = False
            continue
        s = line.strip()
        if not inbody or name is None or not s or s.startswith(_NOT_INSTRUCTIONS):
            continue
        out[name].append(s)
    return out


def _opcode(line: str) -> str:
    rhs = line.split(" = ", 1)[1] if " = " in line.split("::")[0] else line
    words = [w for w in rhs.split() if w not in ("dead", "renamable", "killed", "undef")]
    return words[0].rstrip(",") if words else ""


def _asm_bodies(asm: str, count: int) -> list[list[str]]:
    """The instruction lines of functions f0..f{count-1} in llc's assembly output."""
    out: list[list[str]] = [[] for _ in range(count)]
    cur = None
    for line in asm.splitlines():
        m = re.match(r"^f(\d+):", line)
        if m:
            cur = int(m.group(1))
            continue
        s = line.split(";")[0].strip()
        if cur is None or not s or s.startswith((".", "//")) or s.endswith(":"):
            if s.startswith(".Lfunc_end"):
                cur = None
            continue
        out[cur].append(s)
    return out


def run(cpu: str, probes: list[Probe]) -> list[Result]:
    """Run every probe of one CPU through llc-22 (two invocations for all of them)."""
    if not probes:
        return []
    gen = generation(cpu)
    mir = render(probes)
    after = _function_bodies(llc(cpu, mir, ["-run-pass=si-insert-waitcnts"]))
    asm = _asm_bodies(llc(cpu, mir, ["-start-after=si-insert-waitcnts"]), len(probes))
    results = []
    for k, pr in enumerate(probes):
        lines = after.get(f"f{k}")
        if lines is None:
            raise OracleError(f"{cpu}: no function f{k} ({pr.name}) in llc's output")
        # the probe's own instructions, soft waits left out (the pass drops or hardens them)
        mine = [(i, _opcode(ln)) for i, ln in enumerate(pr.body)
                if not _opcode(ln).endswith("_soft")]
        res, pos = Result(pr), 0
        for ln in lines:
            counters = decode_wait(gen, ln)
            if pos < len(mine) and _opcode(ln) == mine[pos][1]:
                pos += 1
            elif counters is not None:
                before = mine[pos][0] if pos < len(mine) else len(pr.body)
                res.waits.append(Wait(counters, before, ln))
        if pos != len(mine):
            raise OracleError(f"{cpu} {pr.name}: llc's output lost probe instructions:\n"
                              + "\n".join(lines))
        printed = [ln for ln in asm[k] if not ln.startswith(_NOT_OURS)]
        if len(printed) != len(mine):
            raise OracleError(f"{cpu} {pr.name}: {len(printed)} assembly lines for {len(mine)}"
                              " instructions:\n" + "\n".join(asm[k]))
        res.asm = [""] * len(pr.body)
        for (i, _), text in zip(mine, printed):
            res.asm[i] = text
        results.append(res)
    return results


#: assembly lines later passes add that are not probe instructions
_NOT_OURS = ("s_nop", "s_delay_alu", "s_clause", "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)",
             "s_wait_alu",
             "s_set_vgpr_msb")
