"""Which LDS bytes one instruction can touch, per wave: the `LdsAccess` of every LDS operation.

An access is a list of `Piece`s, each "every lane reads or writes `size` bytes starting at
`addr`", where `addr` is an abstract value (`values.Val`: lanes differ, trips may differ).
The union over the wave's lanes and the pieces is what the instruction touches.

Forms and their addresses (facts from the sources named):

* DS (``ds_load*``/``ds_read*``, ``ds_store*``/``ds_write*``, DS atomics): ``vaddr + offset``,
  the access size from the mnemonic (``b32``/``u16``/``b96``/``b128``..., transposing loads
  such as ``ds_load_tr16_b128`` read their ``bN`` per lane).  The two-address forms
  (``ds_read2*``, ``ds_load_2addr*``, ``ds_write2*``, ``ds_store_2addr*``, ``ds_wrxchg2*``)
  touch ``vaddr + offset0*E`` and ``vaddr + offset1*E`` with E the element size, times 64 for
  the ``st64``/``stride64`` forms (AMDGPU ISA DS encoding).  ``ds_swizzle``/``ds_permute``/
  ``ds_bpermute``/GWS touch no LDS memory.  M0-addressed forms (``*_addtid_*``,
  ``ds_append``/``ds_consume``) are left unknown.
* GFX9 LDS DMA (``buffer_load_* ... lds``, ``global_load_lds_*``, ``scratch_load_lds_*``):
  lane i writes at ``M0 + offset + i*4`` for sizes up to a dword and ``M0 + offset + i*16``
  for the 12- and 16-byte forms (LLVM, AMDGPUDMAOperations "GFX9 LDS DMA"; reviews.llvm.org
  D125409: "M0 + inst_offset + (TIDinWave * 4)").
* GFX1250 async (``global_load_async_to_lds_bN``, ``cluster_load_async_to_lds_bN``,
  ``global_store_async_from_lds_bN``): the per-lane LDS address VGPR plus ``offset`` (the
  offset applies to both addresses: LLVM AMDGPUDMAOperations "GFX1250 LDS DMA").
* GFX1250 tensor DMA (``tensor_load_to_lds``/``tensor_store_from_lds`` with descriptor
  groups D#0..D#3 in SGPRs): the LDS byte address is D#0 dword 1 (bits 63:32); D#1 dword 0
  holds the element size (bits 17:16, log2 bytes), iterate enable (bit 19), padding enable
  (bit 20), pad interval (bits 24:22, ``2^(v+1)`` dwords) and pad amount (bits 31:25, v+1
  dwords); the tile is D#1 dword 3 bits 31:16 (tile_dim0, innermost), dword 4 bits 15:0 and
  31:16 (tile_dim1, tile_dim2), D#2 dword 3 bits 31:16 (tile_dim3) and D#3 dword 2 bits 31:16
  (tile_dim4); D#0 bit 31 enables gather/scatter.  Source: the bit layout Triton's AMD backend
  writes and reads (triton-lang/triton ``third_party/amd/lib/TritonAMDGPUToLLVM/TDMUtility.cpp``,
  ``createTDMDescriptor`` / ``decodeTDMDescriptorFull``), consistent with the real kernels in
  ``../shared/corpus/asm/aiter_gfx1250_*`` (a 256-byte row padded by 16 bytes there is read
  back with a 0x110 row stride; ROCm/composable_kernel's ck_tile TDM fmha tests give a
  128x128 bf16 tile padded 16 bytes per 256 an element space of 34,800 bytes, row 1 at byte
  272).  The tile is written to LDS as one linear stream with the padding inserted; the data
  is bounded by the product of the tile dimensions (each at least 1) times the element size.
  The pad is counted along that stream, not per tile row (Triton's AMD backend, which lays
  out its padded shared memory for this unit: "TDM writes data as a linear element stream with
  LDS padding applied every padInterval elements", TDMUtility.cpp; aiter's gfx1250 fmha fwd
  mxfp8 pads 0x110-byte rows every 256 bytes).
  With padding certainly on and a single interval and amount, and the start a multiple of the
  interval, the footprint is the chunks written (one piece: ``interval`` bytes every
  ``interval + pad``): the pad bytes are skipped, not written, and may hold another tile
  (aiter's gfx1250 fmha v3 bwd loads each half row of a 256-byte row from another wave, into
  the other's pad).  Otherwise it is one span: the data plus one pad per started interval,
  the start taken down to a multiple of 16 bytes (the alignment the unit may impose is not
  documented).
  Gather or iterate mode, or a field whose range is unbounded, leaves the access unknown.

Multicast tensor loads and cluster loads also write other workgroups' LDS at the same offsets;
that is another workgroup's concern and not modelled here.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..ir import Instruction, Reg
from ..syntax.asm_expr import eval_expr
from . import intervals as I
from .launch import LaunchInfo
from .value_flow import ValueFlow
from .values import Val, const_val, si_val, v_add, v_and, v_bfe

#: LDS access kinds
READ, WRITE, RW = "read", "write", "rw"
#: engines: the counter that tracks the access
DS, TENSOR, ASYNC, DMA = "ds", "tensor", "async", "dma"

_SIZE_TOKEN = re.compile(r'_(?:b|u|i|f|bf)(8|16|32|64|96|128)(?![0-9])')
_OFFSET = re.compile(r'\boffset(0|1)?:\s*(0x[0-9a-fA-F]+|\d+)')
_OFFSET_START = re.compile(r'\boffset(0|1)?:')
#: where an offset expression ends: the next modifier
_NEXT_MODIFIER = re.compile(r'\s(?:offset[01]?:|gds\b|sc[01]\b|nt\b|glc\b|slc\b|dlc\b|lds\b|th:|scope:|swz\b|'
                            r'idxen\b|offen\b|addr64\b|tfe\b|lwe\b)')
_NO_MEMORY = ("ds_nop", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_gws", "ds_sema", "ds_ordered_count",
              "ds_bvh_stack")
_M0_FORMS = ("addtid", "ds_append", "ds_consume")
_DMA_BYTES = (("dwordx4", 16), ("dwordx3", 12), ("dwordx2", 8), ("dword", 4), ("ushort", 2), ("sshort", 2),
              ("short", 2), ("ubyte", 1), ("sbyte", 1), ("byte", 1), ("b128", 16), ("b96", 12), ("b64", 8),
              ("b32", 4), ("u16", 2), ("i16", 2), ("u8", 1), ("i8", 1))
_TDM_ALIGN = 16
_LDS_FLAG = re.compile(r'\blds\b')


class Piece:
    """Each lane touches bytes ``[addr, addr + size)``."""

    __slots__ = ("addr", "size", "_span")

    def __init__(self, addr: Val, size: int) -> None:
        self.addr = addr
        self.size = size
        self._span: I.SI | None = None

    def span(self) -> I.SI:
        """The 32-bit addresses over all lanes and trips (memoised)."""
        if self._span is None:
            self._span = self.addr.concrete()
        return self._span

    def __repr__(self) -> str:
        return f"Piece({I.fmt(self.addr.concrete())} +{self.size})"


class LdsAccess:
    """An instruction's LDS access.

    `kind`: read, write or rw (atomics); `engine`: ds, tensor, async or dma; `pieces`:
    the bytes (None when unknown, with `unknown` saying why); `trusted`: the declared region
    (`lds_regions.Region`) the pieces come from, when they are the user's word rather than
    a proof.
    """

    __slots__ = ("inst", "kind", "engine", "pieces", "unknown", "trusted")

    def __init__(self, inst: Instruction, kind: str, engine: str, pieces: tuple | None,
                 unknown: str | None = None) -> None:
        self.inst = inst
        self.kind = kind
        self.engine = engine
        self.pieces = pieces
        self.unknown = unknown
        self.trusted = None

    def __repr__(self) -> str:
        return f"<LdsAccess {self.inst!r} {self.kind} {self.engine} {self.pieces or self.unknown}>"

    @property
    def known(self) -> bool:
        return self.pieces is not None

    def byte_range(self) -> I.SI | None:
        """Lowest and highest byte touched (over lanes, trips and pieces), or None."""
        if self.pieces is None:
            return None
        lo, hi = None, None
        for p in self.pieces:
            c = p.span()
            lo = c[0] if lo is None else min(lo, c[0])
            hi = c[1] + p.size - 1 if hi is None else max(hi, c[1] + p.size - 1)
        if lo is None:
            return None
        return I.make(lo, hi, 1)


@lru_cache(maxsize=8192)
def touches_lds(mnemonic: str) -> bool:
    """Cheap filter: could this mnemonic access LDS memory at all?"""
    mn = mnemonic
    if mn.startswith("ds_"):
        return not mn.startswith(_NO_MEMORY)
    if mn.startswith(("tensor_load_to_lds", "tensor_store_from_lds", "global_load_async_to_lds",
                      "cluster_load_async_to_lds", "global_store_async_from_lds", "global_load_lds_",
                      "scratch_load_lds_")):
        return True
    # gfx9 DMA spelled with the `lds` modifier (``buffer_load_dword ... lds``, gfx90a's
    # ``global_load_dword v0, s[0:1] lds``): checked in `access_of`
    return mn.startswith(("buffer_load_", "global_load_", "scratch_load_"))


@lru_cache(maxsize=8192)
def _offsets(suffix: str) -> dict:
    """`offset:N` / `offset0:` / `offset1:` of a suffix -> value; None for an expression we
    cannot evaluate.  The value may be an expression (aiter writes ``offset: 0x8e0 * 1 + 64 * 0
    + 0x46f0``, which the assembler folds to 0x4fd0): it runs to the next modifier."""
    out: dict[str, int | None] = {}
    for m in _OFFSET_START.finditer(suffix):
        rest = suffix[m.end():]
        stop = _NEXT_MODIFIER.search(rest)
        text = (rest[:stop.start()] if stop else rest).strip()
        m2 = _OFFSET.match(m.group(0) + text)
        if m2 is not None and m2.end() == len(m.group(0) + text):
            out[m.group(1) or ""] = int(m2.group(2), 0)
        else:
            out[m.group(1) or ""] = eval_expr(text)
    return out


def _unknown_offset(offs: dict) -> bool:
    return any(v is None for v in offs.values())


def _vgpr(op) -> bool:
    return type(op) is Reg and op.kind in ("v", "a")


def access_of(inst: Instruction, flow: ValueFlow, launch: LaunchInfo) -> LdsAccess | None:
    """The LDS access of `inst`, or None when it does not touch LDS memory."""
    mn = inst.mnemonic
    if not touches_lds(mn):
        return None
    if mn.startswith("ds_"):
        return _ds(inst, flow)
    if mn.startswith("tensor_"):
        return _tensor(inst, flow)
    if mn.startswith(("global_load_async_to_lds", "cluster_load_async_to_lds")):
        return _async(inst, flow, WRITE, 0)
    if mn.startswith("global_store_async_from_lds"):
        return _async(inst, flow, READ, 1)
    if "load_lds_" not in mn and not _LDS_FLAG.search(inst.suffix):
        return None
    return _dma(inst, flow, launch)


@lru_cache(maxsize=4096)
def _size_of(mn: str) -> int | None:
    if "_pk_" in mn:
        return 4
    sizes = [int(t) // 8 for t in _SIZE_TOKEN.findall(mn)]
    return max(sizes) if sizes else None


def _ds(inst: Instruction, flow: ValueFlow) -> LdsAccess:
    mn = inst.mnemonic
    if mn.startswith(("ds_load", "ds_read")):
        kind = READ
    elif mn.startswith(("ds_store", "ds_write")):
        kind = WRITE
    else:
        kind = RW
    if any(f in mn for f in _M0_FORMS):
        return LdsAccess(inst, kind, DS, None, f"{mn} at line {inst.line} is addressed through M0 (not analysed)")
    size = _size_of(mn)
    if size is None or not inst.srcs or not _vgpr(inst.srcs[0]):
        return LdsAccess(inst, kind, DS, None, f"{mn} at line {inst.line}: unrecognised operands or size")
    base = flow.operand(inst, 0)
    offs = _offsets(inst.suffix)
    if _unknown_offset(offs):
        return LdsAccess(inst, kind, DS, None, f"{mn} at line {inst.line}: offset expression not evaluated")
    if _two_address(mn):
        scale = size * (64 if ("st64" in mn or "stride64" in mn) else 1)
        pieces = tuple(Piece(v_add(base, const_val(offs.get(k, 0) * scale)), size) for k in ("0", "1"))
    else:
        pieces = (Piece(v_add(base, const_val(offs.get("", 0))), size),)
    return LdsAccess(inst, kind, DS, pieces)


@lru_cache(maxsize=4096)
def _two_address(mn: str) -> bool:
    return "2addr" in mn or re.match(r'ds_(read|write|wrxchg)2', mn) is not None or "wrxchg2" in mn


def _async(inst: Instruction, flow: ValueFlow, kind: str, lds_operand: int) -> LdsAccess:
    mn = inst.mnemonic
    size = _size_of(mn)
    if size is None or len(inst.srcs) <= lds_operand or not _vgpr(inst.srcs[lds_operand]):
        return LdsAccess(inst, kind, ASYNC, None, f"{mn} at line {inst.line}: unrecognised operands or size")
    off = _offsets(inst.suffix).get("", 0)
    if off is None:
        return LdsAccess(inst, kind, ASYNC, None, f"{mn} at line {inst.line}: offset expression not evaluated")
    addr = v_add(flow.operand(inst, lds_operand), const_val(off))
    return LdsAccess(inst, kind, ASYNC, (Piece(addr, size),))


def _dma(inst: Instruction, flow: ValueFlow, launch: LaunchInfo) -> LdsAccess:
    mn = inst.mnemonic
    size = None
    tail = mn.split("load_lds_")[-1] if "load_lds_" in mn else mn.split("_load_", 1)[-1]
    for name, n in _DMA_BYTES:
        if tail.startswith(name):
            size = n
            break
    if size is None:
        return LdsAccess(inst, WRITE, DMA, None, f"{mn} at line {inst.line}: unrecognised size")
    stride = 4 if size <= 4 else 16
    m0 = flow.value_at(inst, ("m", 0))
    lanes = si_val(I.make(0, (launch.wave_size - 1) * stride, stride), False)
    off = _offsets(inst.suffix).get("", 0)
    if off is None:
        return LdsAccess(inst, WRITE, DMA, None, f"{mn} at line {inst.line}: offset expression not evaluated")
    addr = v_add(v_add(m0, const_val(off)), lanes)
    return LdsAccess(inst, WRITE, DMA, (Piece(addr, size),))


def _field_max(v: Val, offset: int, width: int) -> int:
    return v_bfe(v, offset, width).concrete()[1]


def _field_min(v: Val, offset: int, width: int) -> int:
    return v_bfe(v, offset, width).concrete()[0]


def _tensor(inst: Instruction, flow: ValueFlow) -> LdsAccess:
    mn = inst.mnemonic
    kind = WRITE if mn.startswith("tensor_load_to_lds") else READ
    srcs = inst.srcs
    where = f"{mn} at line {inst.line}"
    if len(srcs) < 2 or type(srcs[0]) is not Reg or type(srcs[1]) is not Reg or srcs[0].hi - srcs[0].lo < 3 \
            or srcs[1].hi - srcs[1].lo < 7:
        return LdsAccess(inst, kind, TENSOR, None, f"{where}: unrecognised descriptor operands")
    g0w0 = flow.operand(inst, 0, 0)
    if _field_max(g0w0, 31, 1):
        return LdsAccess(inst, kind, TENSOR, None, f"{where}: gather/scatter mode may be enabled (D#0 bit 31)")
    g1 = [flow.operand(inst, 1, u) for u in (0, 3, 4)]
    if _field_max(g1[0], 19, 1):
        return LdsAccess(inst, kind, TENSOR, None, f"{where}: iterate mode may be enabled (D#1 bit 19)")
    esize = 1 << _field_max(g1[0], 16, 2)
    dims = [_field_max(g1[1], 16, 16), _field_max(g1[2], 0, 16), _field_max(g1[2], 16, 16)]
    for gi, unit in ((2, 3), (3, 2)):
        if len(srcs) > gi and type(srcs[gi]) is Reg and srcs[gi].kind != "null" and srcs[gi].hi - srcs[gi].lo >= unit:
            dims.append(_field_max(flow.operand(inst, gi, unit), 16, 16))
    if dims[0] == 0:
        return LdsAccess(inst, kind, TENSOR, None, f"{where}: tile width (D#1 dword 3 bits 31:16) is 0 or unknown")
    elems = 1
    for d in dims:
        elems *= max(1, d)
    nbytes = elems * esize
    lds = flow.operand(inst, 0, 1)
    rows = _padded_rows(g1[0], lds, nbytes)
    if rows is not None:
        return LdsAccess(inst, kind, TENSOR, (rows,))
    if _field_max(g1[0], 20, 1):
        interval = 4 << (_field_min(g1[0], 22, 3) + 1)
        pad = 4 * (_field_max(g1[0], 25, 7) + 1)
        nbytes += -(-nbytes // interval) * pad
    start = v_and(lds, const_val(I.MASK32 & ~(_TDM_ALIGN - 1)))
    slack = 0 if start == lds else _TDM_ALIGN - 1  # no slack when the address is aligned
    return LdsAccess(inst, kind, TENSOR, (Piece(start, nbytes + slack),))


def _padded_rows(g1w0: Val, lds: Val, nbytes: int) -> Piece | None:
    """The bytes of a padded tile as its chunks: `interval` bytes written, then `pad` bytes
    skipped, from the start on (the pad bytes are not written: another tile may live there,
    as aiter's fmha v3 bwd puts the other wave's half rows in them).  Only when padding is
    certainly on, its interval and amount are single values and the start is a multiple of the
    interval (and of 16): then counting the interval from the stream's start (as the unit
    does, whatever the row width) or from interval-aligned addresses gives the same chunks.
    `nbytes` bounds the data (the tile's largest size): chunk k covers ``[start + k*(interval+pad), + interval)`` for every k below
    ``ceil(nbytes / interval)`` (the last one full: an over-approximation of a partial one).
    None: one span instead (the caller's)."""
    if _field_min(g1w0, 20, 1) != 1:
        return None
    code = v_bfe(g1w0, 22, 3).concrete()
    amount = v_bfe(g1w0, 25, 7).concrete()
    if code[0] != code[1] or amount[0] != amount[1]:
        return None
    interval = 4 << (code[0] + 1)
    stride = interval + 4 * (amount[0] + 1)
    span = lds.concrete()
    if span[0] < 0 or I.align_bits(span) < max(interval, _TDM_ALIGN).bit_length() - 1:
        return None
    chunks = -(-nbytes // interval)
    if chunks <= 1:
        return Piece(lds, min(nbytes, interval))
    return Piece(v_add(lds, si_val(I.make(0, (chunks - 1) * stride, stride), False)), interval)
