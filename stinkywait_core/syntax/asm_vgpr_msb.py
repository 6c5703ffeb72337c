"""gfx1250 ``s_set_vgpr_msb``: which physical VGPR (v0..v1023) each operand names.

An instruction encodes VGPRs in 8 bits.  gfx1250 has 1024 of them: the wave's *VGPR MSB mode*
supplies bits 9:8, per operand slot, until it is changed again.  ``s_set_vgpr_msb imm`` sets
it from ``imm[7:0]``: two bits per slot, src0 in [1:0], src1 in [3:2], src2 in [5:4], the
destination in [7:6].  ``imm[15:8]`` is bookkeeping (LLVM records the previous mode there, the
hardware ignores it).  The assembler only accepts v0..v255, so ``v80`` under a mode whose
src0 field is 1 names v336 when it is the src0 operand, and LLVM's printer writes it
``v80 /*v336*/``.

Which operand a slot means depends on the encoding (LLVM's `getVGPRLoweringOperandTables`,
checked operand by operand against `llvm-objdump-22`, which prints the notes; see
`tests/test_asm_vgpr_msb.py`):

* VALU (VOP1/2/3/3P/C, DPP, WMMA): the VGPR destination is `dst`; the explicit sources, in
  text order after the destinations, are src0, src1, src2 (an SGPR destination such as a carry
  out takes no slot; a literal takes its source's slot, so ``v_fmamk_f32 v1, v2, K, v3`` reads
  v3 through src2); further sources (WMMA scale operands) and ``v_wmma_ld_scale*_paired`` have
  none.  A dual (VOPD) instruction's halves use the same fields, each laid out like that.
* DS: the destination is `dst`; the address, data0, data1 are src0, src1, src2 (an
  ``addtid`` store or a GWS operation has no address: its data is src1).
* FLAT, global, scratch, cluster: the destination is `dst`, the address src0, the data src1
  (``*_addtid`` stores: the data is src1); an async load to LDS's LDS-address operand is `dst`.
* MUBUF (``buffer_*``): the data register (destination or stored value) is `dst`, the
  address src0.
* SMEM, SALU, tensor, control: no VGPR operands.

The mode is machine state, so it flows along the CFG: 0 when a function is entered (the
calling convention), unchanged across branches, 0 after a call to code outside the function
(the callee returns with it cleared, as LLVM's ``AMDGPULowerVGPREncoding`` guarantees).  A
call to a subroutine of the function itself (``s_call_i64 s[100:101], .Lsub``) enters it with
the caller's mode, and the code after the call gets the mode the subroutine's returns leave
(aiter's gfx1250 f4gemm subroutine returns with 0xc0).  Where paths bring different modes
to one block the registers are ambiguous: the mode of the fall-through path is used and a
warning names both.  LLVM itself clears the mode before every branch, call and block end,
so its output never meets that case.  ``s_setreg_imm32_b32`` to MODE writes the same mode
through MODE[19:12] (there in the order dst, src0, src1, src2): followed on gfx1250 only.

A ``/*vN*/`` note is checked against the mode; the mode wins when they disagree (a warning
says so), since the hardware reads the mode, not the comment.  In a file without any
``s_set_vgpr_msb`` or ``s_setreg`` the notes are all there is, and are trusted.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache
from operator import attrgetter

from ..diagnostics import WARNING, Diagnostic
from ..ir import Imm, Instruction, Reg, Special
from .asm_flow import is_call
from .asm_split import _simple_split, _split_dst_src, explicit_dst_count
from .asm_tables import MAX_REG_INDEX

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from ..ir import Block, Function, Operand
    from .asm_records import LineSyntax
    from .asm_structure import _AsmState

#: operand slots: the field of the mode (and of the s_set_vgpr_msb immediate) at bits 2k+1:2k
SRC0, SRC1, SRC2, DST = 0, 1, 2, 3
NO_SLOT = -1
SLOT_NAMES = ("src0", "src1", "src2", "dst")
#: a block reached with different modes on different paths
CONFLICT = -1

_NO_SLOT_MNEMONICS = ("v_wmma_ld_scale",)
_FLAT_FAMILIES = ("global_", "flat_", "scratch_", "cluster_")
_ASYNC_LOADS = ("global_load_async_to_lds", "cluster_load_async_to_lds")
#: encodings without VGPR operands (scalar, tensor data mover)
_NO_VGPRS = ("s_", "tensor_")
_HWREG_MODE = frozenset({"hw_reg_mode", "hw_reg_wave_mode", "1"})
#: MODE[19:12] holds the VGPR MSBs (order dst, src0, src1, src2)
_MODE_MSB_SHIFT = 12


@lru_cache(maxsize=8192)
def vgpr_slots(mnemonic: str, n_ops: int, n_dst: int, dual_at: int) -> tuple[int, ...]:
    """The mode slot of each explicit operand (text order), NO_SLOT for none.

    `n_dst`: how many leading operands are destinations (`asm_split.explicit_dst_count`);
    `dual_at`: where a dual instruction's second half starts (-1: not dual).
    """
    slots = [NO_SLOT] * n_ops
    mn = mnemonic
    if dual_at >= 0:
        for start, end in ((0, dual_at), (dual_at, n_ops)):
            if end > start:
                slots[start] = DST
                for k in range(start + 1, min(end, start + 4)):
                    slots[k] = k - start - 1
        return tuple(slots)
    if mn.startswith("v_"):
        if mn.startswith(_NO_SLOT_MNEMONICS):
            return tuple(slots)
        first_src = n_dst
        if mn.startswith(("v_swap_", "v_swaprel_")):
            first_src = 1  # both operands are written, but the second is the src0 field
        if n_dst and n_ops:
            slots[0] = DST
        _sources(slots, first_src, SRC0, SRC2)
    elif mn.startswith("ds_"):
        if n_dst and n_ops:
            slots[0] = DST
        no_address = ("addtid" in mn and n_dst == 0) or mn.startswith("ds_gws_")
        _sources(slots, n_dst, SRC1 if no_address else SRC0, SRC2)
    elif mn.startswith(("buffer_", "tbuffer_")):
        if n_ops:
            slots[0] = DST
        if n_ops > 1:
            slots[1] = SRC0
    elif mn.startswith(_FLAT_FAMILIES):
        if mn.startswith(_ASYNC_LOADS):
            n_dst = 1  # the LDS address is read, but it is encoded in the destination field
        if n_dst and n_ops:
            slots[0] = DST
        no_address = "addtid" in mn and n_dst == 0
        _sources(slots, n_dst, SRC1 if no_address else SRC0, SRC1)
    return tuple(slots)


@lru_cache(maxsize=8192)
def _slotted(mnemonic: str, n_ops: int, n_dst: int, dual_at: int) -> tuple[tuple[int, int, str], ...]:
    """(operand index, shift of its field in the mode, slot name) of the operands with a slot."""
    return tuple((i, 2 * slot, SLOT_NAMES[slot]) for i, slot in enumerate(vgpr_slots(mnemonic, n_ops, n_dst, dual_at))
                 if slot >= 0)


@lru_cache(maxsize=8192)
def _fixed_slotted(mnemonic: str, n_ops: int) -> tuple[tuple[int, int, str], ...] | None:
    """`_slotted` for a mnemonic whose destination count is fixed; None when it is not."""
    simple = _simple_split(mnemonic)
    return None if simple is None else _slotted(mnemonic, n_ops, min(simple[0], n_ops), -1)


def _sources(slots: list[int], first: int, first_slot: int, last_slot: int) -> None:
    """Consecutive sources from operand `first` get slots `first_slot`..`last_slot`."""
    for k, slot in zip(range(first, len(slots)), range(first_slot, last_slot + 1)):
        slots[k] = slot


#: `remapped_operands` by (line syntax identity, mode): a re-parse meets the same (memoised)
#: `LineSyntax` objects again.  Values keep their `LineSyntax` so an identity is never reused.
_REMAPPED: dict[tuple[int, int], tuple[LineSyntax, tuple]] = {}
_REMAPPED_SIZE = 1 << 16


def _remapped_cached(ls: LineSyntax, mode: int) -> tuple:
    hit = _REMAPPED.get((id(ls), mode))
    if hit is not None and hit[0] is ls:
        return hit[1]
    result = remapped_operands(ls, mode)
    if len(_REMAPPED) >= _REMAPPED_SIZE:
        _REMAPPED.clear()
    _REMAPPED[(id(ls), mode)] = (ls, result)
    return result


def remapped_operands(ls: LineSyntax, mode: int) -> tuple[tuple[Operand, ...], tuple[Operand, ...], int | None,
                                                             list[tuple[Reg, int, int, str, int]]]:
    """(dsts, srcs, key, disagreements) of a line's instruction under `mode`.

    A VGPR keeps its low 8 bits (its spelling, or a note's register) and takes bits 9:8 from
    its slot's field.  `key` is None when that changes nothing (the line's own `dsts` and
    `srcs` are returned), else the effective mode: `mode` restricted to the fields of the
    slots holding a VGPR, so that two modes with the same key give the same operands.
    A disagreement is (operand, its register, the one the mode gives or -1 when that would
    end past v1023, slot name, field): `disagreement_message` words it.
    """
    operands = ls.operands
    if not operands:
        return ls.dsts, ls.srcs, None, []
    ops, modifiers, dual_at = operands
    mn = ls.mnemonic
    if mn.startswith(_NO_VGPRS):
        return ls.dsts, ls.srcs, None, []
    slotted = _slotted(mn, len(ops), 1, dual_at) if dual_at >= 0 else _fixed_slotted(mn, len(ops))
    if slotted is None:  # the destinations depend on the operands
        slotted = _slotted(mn, len(ops), explicit_dst_count(mn, ops, modifiers), -1)
    new_ops: list[Operand] | None = None
    effective = 0
    disagree: list[tuple[Reg, int, int, str, int]] = []
    for i, shift, name in slotted:
        op = ops[i]
        if op.__class__ is not Reg or op.kind != "v":  # type: ignore[union-attr]
            continue
        bits = (mode >> shift) & 3
        effective |= mode & (3 << shift)
        lo = op.lo  # type: ignore[union-attr]
        new_lo = (lo & 0xFF) | (bits << 8)
        if new_lo == lo:
            continue
        if lo >= 256:
            disagree.append((op, lo, new_lo, name, bits))
        new_hi = new_lo + op.hi - lo  # type: ignore[union-attr]
        if new_hi > MAX_REG_INDEX:  # no such register: LLVM leaves the operand as it is, so do we
            disagree.append((op, lo, -1, name, bits))
            continue
        if new_ops is None:
            new_ops = list(ops)
        new_ops[i] = Reg("v", new_lo, new_hi, op.neg, op.spelling)  # type: ignore[union-attr]
    if new_ops is None:
        return ls.dsts, ls.srcs, None, disagree
    if dual_at >= 0:
        left, right = new_ops[:dual_at], new_ops[dual_at:]
        return tuple(left[:1]) + tuple(right[:1]), tuple(left[1:]) + tuple(right[1:]), effective, disagree
    dsts, srcs = _split_dst_src(ls.mnemonic, new_ops, modifiers)
    return dsts, srcs, effective, disagree


def disagreement_message(d: tuple[Reg, int, int, str, int], mode: int) -> str:
    op, lo, new_lo, name, bits = d
    if new_lo < 0:
        return f"'{op.text()}' in the {name} field {bits} would end past v{MAX_REG_INDEX} (left as it is)"
    return f"'{op.text()}' is noted as v{lo} but reads v{new_lo} ({name} field {bits}) under s_set_vgpr_msb 0x{mode:x}"


#: note disagreements reported per function (a file whose notes are all stale says so once)
MAX_NOTE_WARNINGS = 20


# --- the mode along the CFG ----------------------------------------------------------------

def _hwreg_field(op: Operand) -> tuple[str, int, int] | None:
    """(register id or name, offset, size) of a ``hwreg(...)`` operand or a raw simm16."""
    if op.__class__ is Imm:
        v = op.value  # type: ignore[union-attr]
        return str(v & 0x3F), (v >> 6) & 0x1F, ((v >> 11) & 0x1F) + 1
    if op.__class__ is not Special:
        return None
    text = op.spelling.strip()  # type: ignore[union-attr]
    if not text.lower().startswith("hwreg(") or not text.endswith(")"):
        return None
    parts = [p.strip() for p in text[6:-1].split(",")]
    try:
        offset = int(parts[1], 0) if len(parts) > 1 else 0
        size = int(parts[2], 0) if len(parts) > 2 else 32
    except ValueError:
        return None
    return parts[0].lower(), offset, size


def _rotate_to_mode_register(mode: int) -> int:
    return ((mode << 2) | (mode >> 6)) & 0xFF


def _rotate_from_mode_register(bits: int) -> int:
    return ((bits >> 2) | (bits << 6)) & 0xFF


def mode_after(inst: Instruction, mode: int, setreg: bool) -> tuple[int, str | None]:
    """The mode after `inst` (given the mode before it), and a reason when it is unknowable."""
    mn = inst.mnemonic
    if mn == "s_set_vgpr_msb":
        imm = inst.first_literal()
        if imm is None:
            return mode, "the s_set_vgpr_msb operand is not a constant: the VGPR MSBs are unknown after it"
        return imm & 0xFF, None
    if is_call(mn):
        return 0, None
    if setreg and mn.startswith("s_setreg") and inst.srcs:
        field = _hwreg_field(inst.srcs[0])
        if field is None or field[0] not in _HWREG_MODE:
            return mode, None
        _, offset, size = field
        mask = ((1 << size) - 1) << offset
        msb_mask = (mask >> _MODE_MSB_SHIFT) & 0xFF
        if not msb_mask:
            return mode, None
        value = inst.srcs[1] if len(inst.srcs) > 1 else None
        if mn != "s_setreg_imm32_b32" or value is None or value.__class__ is not Imm:
            return mode, "s_setreg writes the VGPR MSBs (MODE[19:12]) from a register: they are unknown after it"
        written = ((value.value << offset) >> _MODE_MSB_SHIFT) & msb_mask  # type: ignore[union-attr]
        bits = (_rotate_to_mode_register(mode) & ~msb_mask) | written
        return _rotate_from_mode_register(bits), None
    return mode, None


def _changes_mode(inst: Instruction) -> bool:
    mn = inst.mnemonic
    return mn == "s_set_vgpr_msb" or mn.startswith("s_setreg") or is_call(mn)


class _BlockEffect:
    """What a block does to the mode: the instructions that may change it (those whose line has
    a FLOW_* bit: mode setters and calls, which end their block)."""

    __slots__ = ("changers",)

    def __init__(self, block: Block, syntax: list[LineSyntax]) -> None:
        self.changers = [i for i, inst in enumerate(block.instrs)
                         if not inst.is_label and syntax[inst.span.line - 1].flow and _changes_mode(inst)]


def _exit_mode(block: Block, effect: _BlockEffect, entry: int, setreg: bool, before_call: bool = False) -> int:
    """The mode a block leaves with (`before_call`: the mode its closing call enters the callee with)."""
    mode = entry
    for i in effect.changers:
        inst = block.instrs[i]
        if before_call and is_call(inst.mnemonic):
            break
        if mode == CONFLICT and inst.mnemonic.startswith("s_setreg"):
            continue  # a partial write keeps the ambiguity
        mode = mode_after(inst, 0 if mode == CONFLICT else mode, setreg)[0]
    return mode


def block_entry_modes(f: Function, syntax: list[LineSyntax], setreg: bool) -> tuple[list[int], list[tuple[int, ...]]]:
    """Per block: the mode at entry (CONFLICT when paths disagree), and the distinct modes its
    predecessors bring (for the warning).  A fixpoint over a three-level lattice per block
    (unvisited, one mode, CONFLICT)."""
    blocks = f.blocks
    n = len(blocks)
    effects = [_BlockEffect(b, syntax) for b in blocks]
    index = {id(b): i for i, b in enumerate(blocks)}
    entry: list[int | None] = [None] * n
    exits: list[int | None] = [None] * n
    if n:
        entry[0] = 0
    # a block ending in a call to code of this function: the callee is entered with the mode
    # before the call, and the block after the call is reached through the callee's returns
    # (which bring the mode the subroutine leaves, e.g. aiter's f4gemm: 0xc0), not through
    # the fall-through edge; after a call to code elsewhere the mode is 0 (the convention)
    at_call: list[int | None] = [None] * n
    local_call = [False] * n
    for i, b in enumerate(blocks):
        term = b.terminator()
        if term is not None and is_call(term.mnemonic):
            nxt = blocks[i + 1] if i + 1 < n else None
            local_call[i] = any(s is not nxt for s in b.succs)

    def incoming_of(i: int, b: Block) -> set:
        got = set()
        for p in b.preds:
            k = index[id(p)]
            e = exits[k]
            if e is None:
                continue
            if local_call[k] or at_call[k] is not None:
                if k + 1 == i and b is not p:
                    if local_call[k]:
                        continue  # the callee's returns bring the mode back
                else:
                    e = at_call[k]
            got.add(e)
        return got

    changed = True
    while changed:  # entries only rise (unvisited -> a mode -> CONFLICT), and exits with them
        changed = False
        for i, b in enumerate(blocks):
            incoming = incoming_of(i, b) - {None}
            if i == 0:
                incoming.add(0)
            if not incoming:
                continue
            new = incoming.pop() if len(incoming) == 1 else CONFLICT
            if entry[i] is not None and entry[i] != new:
                new = CONFLICT
            if new != entry[i] or exits[i] is None:
                entry[i] = new
                exits[i] = _exit_mode(b, effects[i], new, setreg)
                if local_call[i]:
                    at_call[i] = _exit_mode(b, effects[i], new, setreg, before_call=True)
                changed = True
    brought = []
    for i, b in enumerate(blocks):
        modes = sorted(incoming_of(i, b) - {None, CONFLICT} | ({0} if i == 0 else set()))
        brought.append(tuple(modes))
    return [0 if e is None else e for e in entry], brought


class _Walk:
    """The settings and the outputs of one pass over (some of) a file's blocks."""

    __slots__ = ("st", "previous", "fresh", "active", "setreg", "keys")

    def __init__(self, st: _AsmState, previous: dict[Instruction, int] | None, active: bool, setreg: bool) -> None:
        self.st = st
        self.fresh = previous is None
        self.previous = {} if previous is None else previous
        self.active = active
        self.setreg = setreg
        self.keys: dict[Instruction, int] = {}

    def block(self, b: Block, record: int, mode: int, start: int = 0, stop: int | None = None
              ) -> tuple[int, list[tuple], list[Instruction]]:
        """Remap block `b` (block record `record`), or its instructions `start`..`stop`,
        entered with `mode`: (exit mode, warnings as (kind, instruction, payload); formatted by
        `msb_diagnostics`, the instructions that change the mode)."""
        from .asm_structure import _new_instruction

        st, previous, active, setreg, keys = self.st, self.previous, self.active, self.setreg, self.keys
        syntax, raw, line_inst = st.syntax, st.raw, st.line_inst
        entries: list[tuple] = []
        changers: list[Instruction] = []
        replaced = False
        instrs = b.instrs
        for k in range(start, len(instrs) if stop is None else stop):
            inst = instrs[k]
            if inst.is_label or inst.span is None:
                continue
            idx = inst.span.line - 1
            ls = syntax[idx]
            old = previous.get(inst) if previous else None
            before = mode
            if ls.flow and active and _changes_mode(inst):
                changers.append(inst)
                mode, why = mode_after(inst, mode, setreg)  # takes effect after this instruction
                if why is not None:
                    entries.append(("unknown", inst, why))
            if not (before or old is not None or (active and "/*" in raw[idx])) or (
                    old is None and ls.mnemonic.startswith(_NO_VGPRS)):
                continue  # mode 0 and no note to check, or no VGPR operand: operands as parsed
            if active:
                dsts, srcs, key, disagree = _remapped_cached(ls, before)
            else:
                dsts, srcs, key, disagree = ls.dsts, ls.srcs, None, []
            if key != old:
                if self.fresh:
                    inst.dsts, inst.srcs = list(dsts), list(srcs)
                else:
                    new = _new_instruction(ls, idx, raw)
                    new.span = inst.span
                    new.dsts, new.srcs = list(dsts), list(srcs)
                    new.block = b
                    instrs[k] = line_inst[idx] = inst = new
                    replaced = True
            if key is not None:
                keys[inst] = key
            for d in disagree:  # on the instruction that stays (its span follows later edits)
                entries.append(("note", inst, (d, before)))
        if replaced:
            rec = st.blocks[record]
            st.blocks[record] = (rec[0], tuple(instrs), rec[2], rec[3], rec[4], rec[5])
        return mode, entries, changers


def apply_vgpr_msb(st: _AsmState, functions: list[Function], previous: dict[Instruction, int] | None,
                   setreg: bool, active: bool = True) -> dict[Instruction, int]:
    """Give every instruction the physical VGPRs of the mode in effect where it stands.

    `previous`: the key (`remapped_operands`) each reused instruction's operands were made
    under, absent for the line's own operands (an incremental re-parse); None for a fresh
    parse, whose new instructions are changed in place.  In a re-parse an instruction whose
    key changes is replaced by a new object (the analysis keys its caches on instruction
    identity); the block lists, `st.line_inst` and the block records are updated.  `setreg`:
    ``s_setreg`` to MODE writes the mode (gfx1250).  `active` False: the file sets no mode
    (any more): every instruction gets its line's own operands back, notes trusted.  Returns
    the keys (of the instructions that have one); `st.msb_blocks` gets, per block record,
    the mode it was walked with and its warnings (`msb_diagnostics` words them).
    """
    walk = _Walk(st, previous, active, setreg)
    per_block: list[tuple[int, list[tuple]]] = []
    record = 0
    for f in functions:
        entry, brought = block_entry_modes(f, st.syntax, setreg) if active else ([0] * len(f.blocks), [])
        prev_exit = 0
        for bi, b in enumerate(f.blocks):
            mode = entry[bi]
            conflict = None
            if mode == CONFLICT:
                fall = f.blocks[bi - 1] if bi else None
                mode = prev_exit if fall is not None and fall in b.preds else (brought[bi] or (0,))[0]
                if len(brought[bi]) > 1:  # where the paths meet, not after
                    conflict = ("conflict", b.instrs[0], (b.label, brought[bi], mode))
            prev_exit, entries, changers = walk.block(b, record, mode)
            per_block.append((mode, [conflict] + entries if conflict else entries, changers))
            record += 1
    st.msb_blocks = per_block
    return walk.keys


def respliced_vgpr_msb(st: _AsmState, prev: _AsmState, functions: list[Function], block: int,
                       window: tuple[int, int], gone: list[Instruction | None], setreg: bool) -> dict[Instruction, int]:
    """`apply_vgpr_msb` after an edit that left the structure as it was (`asm_incremental._splice`)
    and changed only the lines `window` (first, last; 1-based, this version) of block record
    `block` (-1: none): no mode changed anywhere (the edited lines set none), so only the
    new lines' instructions are remapped, with the mode their block carries to them; `gone`:
    the previous version's instructions of the edited lines."""
    removed = {id(i) for i in gone if i is not None}
    keys = {inst: k for inst, k in prev.vgpr_modes.items() if id(inst) not in removed}
    st.msb_blocks = list(prev.msb_blocks)
    if block >= 0 and window[0] <= window[1]:
        b = _function_block(functions, block)
        first, last = window
        walk = _Walk(st, {}, True, setreg)
        entry, entries, changers = st.msb_blocks[block]
        instrs = b.instrs
        start = bisect_left(instrs, first, key=_LINE)
        stop = bisect_right(instrs, last, lo=start, key=_LINE)
        mode = entry
        for inst in changers:  # the mode the block carries to the edited lines (they change none)
            if inst.span.line >= first:
                break
            mode = mode_after(inst, mode, setreg)[0]
        added = walk.block(b, block, mode, start, stop)[1]
        kept = [e for e in entries if e[0] == "conflict" or id(e[1]) not in removed]
        before = [e for e in kept if e[0] == "conflict" or e[1].span.line < first]
        after = [e for e in kept if e[0] != "conflict" and e[1].span.line > last]
        st.msb_blocks[block] = (entry, before + added + after, changers)
        keys.update(walk.keys)
    return keys


_LINE = attrgetter("span.line")


def _function_block(functions: list[Function], record: int) -> Block:
    for f in functions:
        if record < len(f.blocks):
            return f.blocks[record]
        record -= len(f.blocks)
    raise IndexError(record)


def msb_diagnostics(st: _AsmState, functions: list[Function]) -> list[Diagnostic]:
    """The warnings of the VGPR MSB pass, in block order: at most MAX_NOTE_WARNINGS stale
    notes per function, then one line saying how many more."""
    diags: list[Diagnostic] = []
    per_block = st.msb_blocks
    record = 0
    for f in functions:
        stale = 0
        for _ in f.blocks:
            for kind, inst, payload in per_block[record][1]:
                sp = inst.span
                if kind == "note":
                    stale += 1
                    if stale > MAX_NOTE_WARNINGS:
                        continue
                    message = disagreement_message(*payload)
                elif kind == "conflict":
                    label, modes, used = payload
                    listed = ", ".join(f"0x{m:x}" for m in modes)
                    message = (f"the VGPR MSB mode (s_set_vgpr_msb) differs on the paths into '{label}' ({listed}): "
                               f"its VGPR operands are read with 0x{used:x}")
                else:
                    message = payload + " (assumed unchanged)"
                diags.append(Diagnostic(WARNING, "asm-vgpr-msb", message, sp.line, sp.col, sp.end_line, sp.end_col,
                                        function=f.name))
            record += 1
        if stale > MAX_NOTE_WARNINGS:
            sp = f.name_span or f.span
            if sp is not None:
                diags.append(Diagnostic(WARNING, "asm-vgpr-msb",
                                        f"{stale - MAX_NOTE_WARNINGS} more /*vN*/ notes in '{f.name}' disagree with "
                                        "s_set_vgpr_msb (the first ones are reported; the mode is used)",
                                        sp.line, sp.col, sp.end_line, sp.end_col, function=f.name))
    return diags
