"""Where a function meets code it does not contain: its entry, its returns, its tail calls.

The calling convention both the insertion pass and the hardware checker assume (LLVM's,
docs/decisions.md 36): a callable function waits at its entry for whatever its caller left in
flight, and drains everything but stores before it returns; a call therefore leaves the caller
with only its stores in flight.  What this module decides is structural, from the IR only:

* which indirect jump (``s_setpc_b64`` / ``s_set_pc_i64``) is a *return* and which a *tail
  call*, the way LLVM tells them apart: a return jumps to the return address, the register pair
  the function received it in (``s[30:31]`` by the ABI) or the pair a call of the function
  itself wrote (a local subroutine), possibly moved (``s_mov_b64``) or restored from a spill
  (``v_readlane_b32 s30, ...``) on the way; a tail call jumps to an address computed from a
  symbol (``s_getpc_b64`` + ``f@rel32@lo``) or loaded from memory (a GOT entry).  A tail call
  needs no drain: the callee waits at its entry, exactly as after a call.  When the address's
  origin cannot be traced, the jump is taken for a return (the safe reading: it drains) and
  the reason is given, so that the user is told;
* a callable function's first instruction: the caller's operations are still in flight there.
"""

from __future__ import annotations

from ..ir import Function, Instruction, Reg, Special, Str

RETURNS = ("s_setpc_b64", "s_set_pc_i64")
CALLS = ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64")
JUMP_RETURN, JUMP_TAIL, JUMP_UNKNOWN = "return", "tail-call", "unknown"
#: the ABI's return-address pair (AMDGPU calling convention: s[30:31])
RETURN_ADDRESS = 30


def entry_instruction(func: Function) -> Instruction | None:
    """The first instruction the function executes (None: an empty function)."""
    if not func.blocks:
        return None
    for inst in func.blocks[0].instrs:
        if not inst.is_label and not inst.is_phi:
            return inst
    return None


def _pair(inst: Instruction) -> Reg | None:
    return next((op for op in inst.srcs if op.__class__ is Reg and op.kind == "s"), None)  # type: ignore[return-value]


def call_symbol(op) -> str | None:
    """The symbol a call-address operand names (``func@rel32@lo+4`` -> ``func``, a label)."""
    if op.__class__ is Str:
        return op.value  # type: ignore[union-attr]
    if op.__class__ is Special and "@" in op.spelling:  # type: ignore[union-attr]
        return op.spelling.split("@", 1)[0].strip("(") or None  # type: ignore[union-attr]
    return None


def _symbolic(inst: Instruction) -> str | None:
    for op in inst.srcs:
        if op.__class__ is Str:
            return op.value  # type: ignore[union-attr]
        if op.__class__ is Special and "@" in op.spelling:  # type: ignore[union-attr]
            return op.spelling  # type: ignore[union-attr]
    return None


def _writes(inst: Instruction, lo: int) -> bool:
    return any(op.__class__ is Reg and op.kind == "s" and op.lo <= lo <= op.hi for op in inst.dsts)


def classify_jump(func: Function, jump: Instruction) -> tuple[str, str]:
    """(JUMP_RETURN / JUMP_TAIL / JUMP_UNKNOWN, why) for an indirect jump of `func`."""
    pair = _pair(jump)
    if pair is None:
        return JUMP_UNKNOWN, "the jump's address register is not a scalar pair"
    call_pairs = {op.lo for b in func.blocks for i in b.instrs if i.mnemonic.startswith(CALLS)
                  for op in i.dsts if op.__class__ is Reg and op.kind == "s"}
    block = jump.block if jump.block is not None else next((b for b in func.blocks if jump in b.instrs), None)
    instrs = block.instrs if block is not None else [jump]
    lo = pair.lo
    at = instrs.index(jump) if jump in instrs else len(instrs)
    for inst in reversed(instrs[:at]):
        if inst.is_label or not _writes(inst, lo):
            continue
        mn = inst.mnemonic
        sym = _symbolic(inst)
        if mn.startswith(("s_getpc", "s_get_pc")) or sym is not None:
            return JUMP_TAIL, f"its address is computed from {sym or 'the program counter'} (line {inst.line})"
        if mn.startswith(("s_load", "s_buffer_load")):
            return JUMP_TAIL, f"its address is loaded from memory (line {inst.line})"
        if mn in ("s_mov_b64", "s_mov_b32") and len(inst.srcs) == 1 and inst.srcs[0].__class__ is Reg \
                and inst.srcs[0].kind == "s":
            lo = inst.srcs[0].lo + (lo - next(op.lo for op in inst.dsts if op.__class__ is Reg))  # type: ignore[union-attr]
            continue
        if mn.startswith("v_readlane") and lo == RETURN_ADDRESS and func.callable:
            return JUMP_RETURN, f"s[30:31] is restored from a VGPR lane (line {inst.line})"
        if mn.startswith(CALLS):
            return JUMP_RETURN, f"the address is the return address written by the call on line {inst.line}"
        return JUMP_UNKNOWN, f"its address comes from {mn} (line {inst.line}), which this analysis does not follow"
    if lo == RETURN_ADDRESS and func.callable:
        return JUMP_RETURN, "s[30:31] holds the return address (calling convention)"
    if lo in call_pairs:
        return JUMP_RETURN, "the address is the return address a call of this function writes"
    if lo == RETURN_ADDRESS:
        return JUMP_RETURN, "s[30:31] is the return address of the calling convention"
    return JUMP_UNKNOWN, f"where s[{lo}:{lo + 1}] comes from is not traced outside its block"


def jump_kinds(func: Function) -> dict[Instruction, tuple[str, str]]:
    """classify_jump for every indirect jump of `func` that ends a block with no successor."""
    out: dict[Instruction, tuple[str, str]] = {}
    for b in func.blocks:
        if b.succs:
            continue
        term = b.terminator()
        if term is not None and term.mnemonic in RETURNS:
            out[term] = classify_jump(func, term)
    return out


def local_transfers(func: Function) -> tuple[set[Instruction], set[Instruction]]:
    """(calls whose callee is code of `func` itself, returns that go back to such a call):
    the CFG has their edges (`asm_structure._local_call_edges`: call -> callee entry, return ->
    the instruction after each call), so the caller's state flows into the subroutine and the
    subroutine's back to the caller; neither is a boundary of the calling convention."""
    calls: set[Instruction] = set()
    returns: set[Instruction] = set()
    blocks = func.blocks
    for i, b in enumerate(blocks):
        term = b.terminator()
        if term is None:
            continue
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if term.mnemonic.startswith(CALLS) and any(s is not nxt for s in b.succs):  # a callee here
            calls.add(term)
    if calls:
        for b in blocks:
            term = b.terminator()
            if term is not None and term.mnemonic in RETURNS and b.succs:
                returns.add(term)
    return calls, returns
