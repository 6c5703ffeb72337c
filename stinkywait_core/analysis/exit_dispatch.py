"""Which way a stage-count dispatch goes after each exit of an unrolled loop (one wave's paths).

aiter's gfx1250 fmha v3 bwd unrolls its loop four times; each copy of the body adds 32 to a
counter `c` and leaves when ``s_cmp_lt_i32 c, bnd`` fails.  After the loop one block computes
the number of stages run, ``d = ((x + 31) >> 5) & 3`` with ``x = bnd - c`` taken before the
first stage, and branches on ``d`` to one of four epilogues.  A plain CFG walk from a loop
barrier reaches all four epilogues from every exit, and the cross-wave publish rule
(waitcnt/publish.py) then meets LDS reads of an epilogue no wave can run after that exit.

The fact.  On one wave's path, let ``x ≡ bnd - c + δ (mod 2^32)`` hold (δ a constant known
modulo ``2^w``) and let the last passing test ``c' < bnd`` (signed) have been made with
``c = c' + s`` (only constant steps since, ``1 <= s < 2^31``).  At an exit where
``c < bnd`` fails, ``c' < bnd <= c' + s`` without wrapping (a wrapped ``c' + s`` is below
``c'``, so below ``bnd``, and the test would pass), so ``t = bnd - c ∈ [1 - s, 0]``.  Then
``x + a ≡ δ + (t + a)`` and, when ``0 <= t + a < 2^sh`` for every such t and δ is a multiple
of ``2^sh`` known modulo ``2^(sh + j)``, ``((x + a) >> sh) & (2^j - 1) = (δ >> sh) & (2^j - 1)``
for every 32-bit value of the registers (the low ``sh`` bits carry nothing into the shift).

The analysis is a forward dataflow per candidate ``(x, c, bnd)`` (from each dispatch head and
the exit tests into it), joined over paths (δ modulo the largest power of two both paths agree
on, `s` kept only when equal, copies of `bnd` intersected); it answers per exit *edge*, which
is what path sensitivity needs here.  Recognised narrowly: a head block of exactly
``s_add t, x, a; s_lshr_b32 t, t, sh; s_and_b32 t, t, m`` and compare-and-branch instructions;
dispatch blocks after it hold only ``s_cmp_*`` of a register with a constant and an SCC
branch; the exit test ``s_cmp_lt_i32 c, bnd`` with an SCC branch, neither register written
after the compare in its block; steps of `c` by a positive constant (``s_addk``, ``s_add``,
``s_sub`` of a negative one is not taken); `x` defined as ``s_sub_* x, p, c`` with `p`
holding `bnd`'s value (``s_mov_b32``).  No local calls in the function.  The answer is used by
the publish rule's segment walk only (waitcnt/publish.py); the hardware checker proves the
same edges by its own code (validate/hwdispatch.py).
"""

from __future__ import annotations

from ..ir import Block, Function, Imm, Instruction, Reg

_ADDS = ("s_add_co_u32", "s_add_co_i32", "s_add_u32", "s_add_i32")
_SUBS = ("s_sub_co_u32", "s_sub_co_i32", "s_sub_u32", "s_sub_i32")
_STEPS = ("s_addk_co_i32", "s_addk_i32")
_M32 = (1 << 32) - 1
_JUMPS = ("s_call", "s_swappc", "s_setpc", "s_set_pc", "s_rfe")
#: most dataflow rounds over the function per candidate
_ROUNDS = 64


def _sreg(op) -> int | None:
    """The unit of a 32-bit SGPR operand."""
    return op.lo if type(op) is Reg and op.kind == "s" and op.lo == op.hi else None


def _imm(op) -> int | None:
    return op.value if type(op) is Imm and isinstance(op.value, int) else None


def _written(inst: Instruction) -> set[int]:
    out: set[int] = set()
    for r in inst.dsts:
        if type(r) is Reg and r.kind == "s":
            out.update(range(r.lo, r.hi + 1))
    return out


def _code(b: Block) -> list[Instruction]:
    return [i for i in b.instrs if not i.is_label and not i.is_phi and i.mnemonic != "s_nop"]


def _taken(b: Block) -> tuple[Block | None, Block | None]:
    """(the block an SCC branch goes to when SCC is 1, when it is 0), or Nones."""
    term = b.terminator()
    if term is None or term.mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1") or len(b.succs) != 2:
        return None, None
    label = next((op.value for op in term.srcs if hasattr(op, "value") and isinstance(op.value, str)), None)
    target = next((s for s in b.succs if s.label == label), None)
    other = next((s for s in b.succs if s is not target), None)
    if target is None or other is None:
        return None, None
    return (target, other) if term.mnemonic == "s_cbranch_scc1" else (other, target)


class _Head:
    """A dispatch head: ``t = ((x + a) >> sh) & mask`` then compare-and-branch."""

    __slots__ = ("block", "x", "t", "a", "sh", "bits")

    def __init__(self, block: Block, x: int, t: int, a: int, sh: int, bits: int) -> None:
        self.block, self.x, self.t, self.a, self.sh, self.bits = block, x, t, a, sh, bits


def _head(b: Block) -> _Head | None:
    code = _code(b)
    if len(code) < 5:
        return None
    add, shr, and_ = code[0], code[1], code[2]
    if add.mnemonic not in _ADDS or shr.mnemonic != "s_lshr_b32" or and_.mnemonic != "s_and_b32":
        return None
    t = _sreg(add.dsts[0]) if add.dsts else None
    ops = add.srcs[:2]
    if t is None or len(ops) != 2:
        return None
    x, a = _sreg(ops[0]), _imm(ops[1])
    if x is None:
        x, a = _sreg(ops[1]), _imm(ops[0])
    if x is None or a is None or not 0 <= a <= _M32:
        return None
    sh = _imm(shr.srcs[1]) if len(shr.srcs) >= 2 and _sreg(shr.srcs[0]) == t else None
    m = _imm(and_.srcs[1]) if len(and_.srcs) >= 2 and _sreg(and_.srcs[0]) == t else None
    if m is None and len(and_.srcs) >= 2 and _sreg(and_.srcs[1]) == t:
        m = _imm(and_.srcs[0])
    if sh is None or m is None or not 0 < sh < 32 or m <= 0 or m & (m + 1):
        return None
    if _sreg(shr.dsts[0]) != t or _sreg(and_.dsts[0]) != t:
        return None
    if not _tests_only(code[3:]):
        return None
    return _Head(b, x, t, a, sh, m.bit_length())


def _tests_only(code: list[Instruction]) -> bool:
    """A compare of a register with a constant and an SCC branch, nothing else."""
    return (len(code) == 2 and code[0].mnemonic.startswith("s_cmp_") and code[1].mnemonic in
            ("s_cbranch_scc0", "s_cbranch_scc1") and len(code[0].srcs) == 2
            and _sreg(code[0].srcs[0]) is not None and _imm(code[0].srcs[1]) is not None)


def _compare(mn: str, v: int, k: int) -> bool | None:
    """SCC of ``s_cmp_<op>_u32 v, k`` for the equality tests (None: not one)."""
    if mn == "s_cmp_eq_u32" or mn == "s_cmp_eq_i32":
        return v == k
    if mn == "s_cmp_lg_u32" or mn == "s_cmp_lg_i32":
        return v != k
    return None


def _follow(head: _Head, d: int) -> tuple[tuple[Block, ...], tuple[Block, ...]] | None:
    """(dispatch blocks walked, blocks a wave may go on to) from `head` with ``t == d``."""
    walked: list[Block] = []
    targets: list[Block] = []
    decided = False
    work = [head.block]
    while work:
        b = work.pop()
        if b in walked:
            continue
        code = _code(b)
        tests = code[3:] if b is head.block else code
        if b is not head.block and (not _tests_only(tests) or any(head.t in _written(i) for i in tests)):
            if b not in targets:
                targets.append(b)
            continue
        walked.append(b)
        on1, on0 = _taken(b)
        if on1 is None:
            return None
        cmp = tests[0]
        scc = _compare(cmp.mnemonic, d, _imm(cmp.srcs[1]) & _M32) if _sreg(cmp.srcs[0]) == head.t else None
        if scc is None:
            work += [on0, on1]
        else:
            decided = True
            work.append(on1 if scc else on0)
    if not decided or any(t in walked for t in targets):
        return None
    return tuple(walked), tuple(targets)


class _State:
    """What one wave's path knows at a point, for one candidate: ``x ≡ bnd - c + delta (mod
    2^bits)`` (bits 0: nothing), `since` (the constant added to `c` since its last passing
    test, None: no such test known), and the registers holding `bnd`'s value."""

    __slots__ = ("delta", "bits", "since", "same")

    def __init__(self, delta: int, bits: int, since: int | None, same: frozenset) -> None:
        self.delta, self.bits, self.since, self.same = delta & ((1 << bits) - 1), bits, since, same

    def key(self) -> tuple:
        return self.delta, self.bits, self.since, self.same

    def join(self, o: "_State") -> "_State":
        bits = min(self.bits, o.bits)
        while bits and (self.delta - o.delta) % (1 << bits):
            bits -= 1
        return _State(self.delta, bits, self.since if self.since == o.since else None, self.same & o.same)


class _Flow:
    """The forward dataflow for one candidate ``(x, c, bnd)``."""

    def __init__(self, func: Function, x: int, c: int, bnd: int) -> None:
        self.x, self.c, self.bnd = x, c, bnd
        self.out: dict[tuple[Block, Block], _State] = {}
        self.ok = self._solve(func)

    def _step(self, st: _State, inst: Instruction) -> _State:
        w = _written(inst)
        if not w:
            return st
        delta, bits, since, same = st.delta, st.bits, st.since, st.same
        x, c, bnd = self.x, self.c, self.bnd
        mn = inst.mnemonic
        srcs = inst.srcs
        if c in w:
            k = None
            if mn in _STEPS and len(srcs) == 2:
                k = _imm(srcs[0]) if _sreg(srcs[1]) == c else (_imm(srcs[1]) if _sreg(srcs[0]) == c else None)
                if k is not None:
                    # a SOPK immediate is 16 bits, sign-extended (`0xffe0` is -32)
                    k = ((k & 0xFFFF) ^ 0x8000) - 0x8000
            elif mn in _ADDS and len(srcs) == 2:
                k = _imm(srcs[1]) if _sreg(srcs[0]) == c else (_imm(srcs[0]) if _sreg(srcs[1]) == c else None)
            if k is not None and 0 < k < (1 << 31) and w - {c} <= set() and x not in w and bnd not in w:
                # bnd - c_new = bnd - c - k: x keeps its value, delta grows by k
                delta += k
                since = since + k if since is not None and since + k < (1 << 31) else None
            else:
                bits, since = 0, None
        if bnd in w:
            bits, since, same = 0, None, frozenset()
            if mn == "s_mov_b32" and len(srcs) == 1 and _sreg(srcs[0]) is not None and _sreg(srcs[0]) != bnd:
                same = frozenset((_sreg(srcs[0]),))
        if x in w:
            bits = 0
            if (mn in _SUBS and len(srcs) == 2 and _sreg(srcs[1]) == c and c not in w
                    and (_sreg(srcs[0]) == bnd or _sreg(srcs[0]) in same)):
                delta, bits = 0, 32
        keep = same - w
        if mn == "s_mov_b32" and len(srcs) == 1 and bnd not in w:
            s = _sreg(srcs[0])
            if s is not None and (s == bnd or s in same):
                keep = keep | w
        return _State(delta, bits, since, frozenset(keep))

    def _exit_state(self, b: Block, st: _State) -> dict[Block, _State]:
        """The state on each out-edge of `b` (the passing side of ``s_cmp_lt_i32 c, bnd``
        starts `since` at 0)."""
        outs = {s: st for s in b.succs}
        on1, on0 = _taken(b)
        if on1 is None:
            return outs
        last = None
        for inst in reversed(_code(b)[:-1]):
            if any(type(r) is Reg and r.kind == "SCC" for r in inst.dsts):
                last = inst
                break
            if self.c in _written(inst) or self.bnd in _written(inst):
                return outs
        if (last is not None and last.mnemonic == "s_cmp_lt_i32" and len(last.srcs) == 2
                and _sreg(last.srcs[0]) == self.c and _sreg(last.srcs[1]) == self.bnd and on1 is not on0):
            outs[on1] = _State(st.delta, st.bits, 0, st.same)
        return outs

    def _solve(self, func: Function) -> bool:
        if not func.blocks:
            return False
        entry = func.blocks[0]
        ins: dict[Block, _State] = {entry: _State(0, 0, None, frozenset())}
        work = [entry]
        budget = _ROUNDS * len(func.blocks)
        while work:
            budget -= 1
            if budget < 0:
                return False
            b = work.pop()
            st = ins[b]
            for inst in b.instrs:
                if not inst.is_label and not inst.is_phi:
                    st = self._step(st, inst)
            for s, o in self._exit_state(b, st).items():
                self.out[(b, s)] = o
                old = ins.get(s)
                new = o if old is None else old.join(o)
                if old is None or new.key() != old.key():
                    ins[s] = new
                    work.append(s)
        return True


def _exit_test(b: Block) -> tuple[int, int] | None:
    """(c, bnd) of a block ending in ``s_cmp_lt_i32 c, bnd`` and an SCC branch."""
    code = _code(b)
    if len(code) < 2 or code[-1].mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1"):
        return None
    for inst in reversed(code[:-1]):
        if any(type(r) is Reg and r.kind == "SCC" for r in inst.dsts):
            if inst.mnemonic != "s_cmp_lt_i32" or len(inst.srcs) != 2:
                return None
            c, bnd = _sreg(inst.srcs[0]), _sreg(inst.srcs[1])
            return (c, bnd) if c is not None and bnd is not None and c != bnd else None
    return None


def _has_jump(b: Block) -> bool:
    """`b` holds a call, return or computed jump (`dispatch_narrowing` is then empty)."""
    return any(i.mnemonic.startswith(_JUMPS) for i in b.instrs if not i.is_label)


class DispatchBlocks:
    """The blocks of one function holding a call, return or computed jump, and its dispatch
    heads: the two facts that make `dispatch_narrowing` empty (any of the first, none of the
    second), kept across versions of a function whose blocks are kept (only the blocks an
    edit changed are looked at again, so an edit of a function with no dispatch costs its
    blocks, not the function)."""

    __slots__ = ("jumps", "heads")

    def __init__(self) -> None:
        self.jumps: set[Block] = set()
        self.heads: set[Block] = set()

    def update(self, blocks) -> None:
        """Look at `blocks` (again)."""
        for b in blocks:
            if _has_jump(b):
                self.jumps.add(b)
            else:
                self.jumps.discard(b)
            if _head(b) is not None:
                self.heads.add(b)
            else:
                self.heads.discard(b)

    def none(self) -> bool:
        """`dispatch_narrowing` of the function is empty (a jump, or no dispatch head)."""
        return bool(self.jumps) or not self.heads


def dispatch_narrowing(func: Function) -> dict[tuple[Block, Block], tuple]:
    """Per exit edge ``(E, H)`` into a dispatch head whose value is proven on it: (the dispatch
    blocks a wave walks from H, the blocks it may go on to).  Empty with any call, return or
    computed jump (a subroutine's blocks run more than once per path; a computed jump's
    edges are not all in the CFG)."""
    if any(_has_jump(b) for b in func.blocks):
        return {}
    heads = [h for h in (_head(b) for b in func.blocks) if h is not None]
    out: dict[tuple[Block, Block], tuple] = {}
    flows: dict[tuple, _Flow] = {}
    for h in heads:
        for e in h.block.preds:
            test = _exit_test(e)
            if test is None:
                continue
            on1, on0 = _taken(e)
            if on0 is not h.block or on1 is h.block:
                continue
            c, bnd = test
            if h.x in (c, bnd):
                continue
            key = (h.x, c, bnd)
            flow = flows.get(key)
            if flow is None:
                flow = flows[key] = _Flow(func, h.x, c, bnd)
            st = flow.out.get((e, h.block)) if flow.ok else None
            if st is None or st.since is None or not 1 <= st.since <= h.a + 1 or h.a >= (1 << h.sh):
                continue
            if st.bits < h.sh + h.bits or st.delta % (1 << h.sh):
                continue
            d = (st.delta >> h.sh) & ((1 << h.bits) - 1)
            got = _follow(h, d)
            if got is not None:
                out[(e, h.block)] = got
    return out
