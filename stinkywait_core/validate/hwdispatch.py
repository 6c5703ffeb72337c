"""The checker's own proof of which epilogue a wave takes after each exit of an unrolled loop.

Written for the hardware checker alone (the pass's counterpart is analysis/exit_dispatch.py;
nothing is shared).  The epoch walk of another wave (validate/hwpublish.py `epoch_of`) follows
every CFG edge; after an exit of aiter's gfx1250 fmha v3 bwd loop the stage-count dispatch
``((x + 31) >> 5) & 3`` can take only one epilogue (two where a later test reads the wave
index), and the LDS reads of the other epilogues are no other wave's.

How, here.  A forward dataflow over block indices gives every 32-bit SGPR a *form*: a sum of
anchors with coefficients plus an offset known modulo ``2^bits`` (anchors: the register's
value at the entry, or the result of an instruction in a block on no cycle, which runs at
most once per wave).  Moves, adds, subtracts and ``s_addk`` combine forms; any other write
makes a fresh anchor (or nothing, on a cycle).  Beside the forms, *test facts* ``(c, bnd,
k)``: the last ``s_cmp_lt_i32 c, bnd`` passed when `c` held its value minus `k`, with only
positive constant steps of `c` since and `bnd` unchanged.  Paths join by keeping forms with
the same anchors (offsets modulo what both agree on) and the facts both hold.

At an exit edge (the failing side of ``s_cmp_lt_i32 c, bnd``) with a fact ``k >= 1``,
``c - k < bnd <= c`` without wrap (had ``c - k + k`` wrapped it would be below `bnd`), so
``bnd - c = u`` for some ``u ∈ [1 - k, 0]``.  A register `r` whose form minus `bnd`'s plus
`c`'s has no anchors is ``D + u`` with `D` known modulo ``2^bits``.  The dispatch blocks are
then run on values ``D + u`` (D modulo a power of two, u in an integer interval): an add of a
constant moves the interval; a right shift by `sh` is exact when D's low `sh` bits are zero
and the interval lies in ``[0, 2^sh)``; an ``s_and`` of an exact-modulo value with a mask
below that modulus is a constant; an equality compare of a constant decides its branch.
Blocks of anything else are where the wave goes on.  No calls, returns or computed jumps in
the function.
"""

from __future__ import annotations

from ..ir import Function, Imm, Instruction, Reg

_MOD = 1 << 32
_ADD = ("s_add_co_u32", "s_add_co_i32", "s_add_u32", "s_add_i32")
_SUB = ("s_sub_co_u32", "s_sub_co_i32", "s_sub_u32", "s_sub_i32")
_ADDK = ("s_addk_co_i32", "s_addk_i32")
_CHAIN = _ADD + ("s_lshr_b32", "s_and_b32", "s_cmp_eq_u32", "s_cmp_lg_u32", "s_cmp_eq_i32", "s_cmp_lg_i32",
                 "s_cbranch_scc0", "s_cbranch_scc1", "s_branch", "s_nop")
_AWAY = ("s_call", "s_swappc", "s_setpc", "s_set_pc", "s_rfe")
#: most block visits of the dataflow, per block
_VISITS = 48


def _one(op) -> int | None:
    return op.lo if type(op) is Reg and op.kind == "s" and op.lo == op.hi else None


def _lit(op) -> int | None:
    return op.value % _MOD if type(op) is Imm and isinstance(op.value, int) else None


def _units(inst: Instruction) -> list[int]:
    return [u for r in inst.dsts if type(r) is Reg and r.kind == "s" for u in range(r.lo, r.hi + 1)]


def _writes_scc(inst: Instruction) -> bool:
    return any(type(r) is Reg and r.kind == "SCC" for r in inst.dsts)


def _form_add(f: tuple, g: tuple, sign: int) -> tuple:
    """f + sign * g over forms ``(terms, off, bits)``."""
    terms = dict(f[0])
    for a, c in g[0]:
        terms[a] = (terms.get(a, 0) + sign * c) % _MOD
    bits = min(f[2], g[2])
    return (tuple(sorted((a, c) for a, c in terms.items() if c)), (f[1] + sign * g[1]) % (1 << bits), bits)


def _form_join(f: tuple, g: tuple) -> tuple | None:
    if f[0] != g[0]:
        return None
    bits = min(f[2], g[2])
    while bits and (f[1] - g[1]) % (1 << bits):
        bits -= 1
    return (f[0], f[1] % (1 << bits) if bits else 0, bits)


class _Env:
    """One path's knowledge at a point: forms per SGPR unit, test facts."""

    __slots__ = ("forms", "facts")

    def __init__(self, forms: dict, facts: frozenset) -> None:
        self.forms, self.facts = forms, facts

    def same(self, o: "_Env") -> bool:
        return self.forms == o.forms and self.facts == o.facts

    def meet(self, o: "_Env") -> "_Env":
        forms = {}
        for u, f in self.forms.items():
            g = o.forms.get(u)
            if g is not None:
                j = _form_join(f, g)
                if j is not None:
                    forms[u] = j
        return _Env(forms, self.facts & o.facts)


class ExitDispatch:
    """Per edge (exit block, dispatch block) by index: (dispatch blocks run, blocks a wave may
    go on to), where the checker proves the dispatch's way (`ways`)."""

    def __init__(self, func: Function, succs: list[list[int]]) -> None:
        self.blocks = list(func.blocks)
        self.succs = succs
        self.ways: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        if any(i.mnemonic.startswith(_AWAY) for b in self.blocks for i in b.instrs if not i.is_label):
            return
        exits = self._exits()
        if not exits:
            return
        self.looped = self._on_cycles()
        env_out = self._flow()
        if env_out is None:
            return
        for e, h, c, bnd in exits:
            env = env_out.get(e)
            if env is None:
                continue
            ks = [k for (fc, fb, k) in env.facts if fc == c and fb == bnd and k >= 1]
            if not ks:
                continue
            got = self._run_chain(h, env, c, bnd, min(ks))
            if got is not None:
                self.ways[(e, h)] = got

    # ---- where -----------------------------------------------------------------------------
    def _sides(self, i: int) -> tuple[int, int] | None:
        """(successor on SCC 1, successor on SCC 0) of an SCC branch at the end of block i."""
        b = self.blocks[i]
        code = [x for x in b.instrs if not x.is_label and not x.is_phi]
        if not code or code[-1].mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1") or len(self.succs[i]) != 2:
            return None
        lab = next((op.value for op in code[-1].srcs if isinstance(getattr(op, "value", None), str)), None)
        hit = [j for j in self.succs[i] if self.blocks[j].label == lab]
        if len(hit) != 1:
            return None
        other = [j for j in self.succs[i] if j != hit[0]][0]
        return (hit[0], other) if code[-1].mnemonic == "s_cbranch_scc1" else (other, hit[0])

    def _lt_test(self, i: int) -> tuple[int, int] | None:
        """(c, bnd) when block i ends in ``s_cmp_lt_i32 c, bnd`` and an SCC branch with neither
        register nor SCC written between."""
        code = [x for x in self.blocks[i].instrs if not x.is_label and not x.is_phi]
        later: set[int] = set()
        for inst in reversed(code[:-1]):
            if _writes_scc(inst):
                if inst.mnemonic == "s_cmp_lt_i32" and len(inst.srcs) == 2:
                    c, bnd = _one(inst.srcs[0]), _one(inst.srcs[1])
                    if c is not None and bnd is not None and c != bnd and not {c, bnd} & later:
                        return c, bnd
                return None
            later.update(_units(inst))
        return None

    def _exits(self) -> list[tuple[int, int, int, int]]:
        out = []
        for i in range(len(self.blocks)):
            sides = self._sides(i)
            test = self._lt_test(i) if sides is not None else None
            if test is None or sides[0] == sides[1]:
                continue
            h = sides[1]
            first = next((x for x in self.blocks[h].instrs if not x.is_label and not x.is_phi), None)
            if first is not None and first.mnemonic in _ADD:
                out.append((i, h) + test)
        return out

    def _on_cycles(self) -> set[int]:
        """Blocks on some cycle (a block that reaches itself)."""
        n = len(self.blocks)
        out = set()
        for i in range(n):
            seen, work = set(), list(self.succs[i])
            while work:
                j = work.pop()
                if j == i:
                    out.add(i)
                    break
                if j not in seen:
                    seen.add(j)
                    work.extend(self.succs[j])
        return out

    # ---- the dataflow ----------------------------------------------------------------------
    def _value(self, forms: dict, op) -> tuple | None:
        k = _lit(op)
        if k is not None:
            return ((), k, 32)
        u = _one(op)
        return forms.get(u) if u is not None else None

    def _apply(self, env: _Env, bi: int, k: int, inst: Instruction) -> _Env:
        units = _units(inst)
        if not units:
            return env
        forms = dict(env.forms)
        mn, srcs = inst.mnemonic, inst.srcs
        new = None
        step = None
        if len(units) == 1:
            d = units[0]
            if mn == "s_mov_b32" and len(srcs) == 1:
                new = self._value(env.forms, srcs[0])
            elif mn in (_ADD + _SUB) and len(srcs) == 2:
                f, g = self._value(env.forms, srcs[0]), self._value(env.forms, srcs[1])
                if f is not None and g is not None:
                    new = _form_add(f, g, 1 if mn in _ADD else -1)
                if mn in _ADD:
                    if _one(srcs[0]) == d and _lit(srcs[1]) is not None:
                        step = _lit(srcs[1])
                    elif _one(srcs[1]) == d and _lit(srcs[0]) is not None:
                        step = _lit(srcs[0])
            elif mn in _ADDK and len(srcs) == 2:
                imm = next((_lit(s) for s in srcs if _lit(s) is not None), None)
                if imm is not None:
                    # the 16-bit immediate of a SOPK is sign-extended
                    imm = (imm & 0x7FFF) - (imm & 0x8000)
                    imm %= _MOD
                if imm is not None and any(_one(s) == d for s in srcs):
                    f = env.forms.get(d)
                    step = imm
                    if f is not None:
                        new = _form_add(f, ((), imm, 32), 1)
        for u in units:
            forms.pop(u, None)
        if new is None and bi not in self.looped:
            for u in units:
                forms[u] = (((("at", bi, k, u), 1),), 0, 32)
        elif new is not None:
            forms[units[0]] = new
        facts = set()
        for (c, bnd, kk) in env.facts:
            if bnd in units:
                continue
            if c in units:
                if step is None or not 0 < step < (1 << 31) or kk + step >= (1 << 31) or len(units) != 1:
                    continue
                kk += step
            facts.add((c, bnd, kk))
        return _Env(forms, frozenset(facts))

    def _flow(self) -> dict[int, _Env] | None:
        """Each block's state at its end (before the branch), joined over the paths to it."""
        n = len(self.blocks)
        start = _Env({u: (((("in", u), 1),), 0, 32) for u in range(106)}, frozenset())
        ins: dict[int, _Env] = {0: start}
        ends: dict[int, _Env] = {}
        visits = [0] * n
        work = [0]
        while work:
            i = work.pop()
            visits[i] += 1
            if visits[i] > _VISITS:
                return None
            env = ins[i]
            for k, inst in enumerate(self.blocks[i].instrs):
                if not inst.is_label and not inst.is_phi:
                    env = self._apply(env, i, k, inst)
            ends[i] = env
            sides = self._sides(i)
            test = self._lt_test(i) if sides is not None else None
            for j in self.succs[i]:
                out = env
                if test is not None and j == sides[0] and sides[0] != sides[1]:
                    c, bnd = test
                    out = _Env(env.forms, frozenset({f for f in env.facts if f[:2] != (c, bnd)} | {(c, bnd, 0)}))
                old = ins.get(j)
                nxt = out if old is None else old.meet(out)
                if old is None or not nxt.same(old):
                    ins[j] = nxt
                    work.append(j)
        return ends

    # ---- the dispatch --------------------------------------------------------------------------
    def _run_chain(self, h: int, env: _Env, c: int, bnd: int, k: int):
        fc, fb = env.forms.get(c), env.forms.get(bnd)
        vals: dict[int, tuple] = {}
        for u, f in env.forms.items():
            if fc is not None and fb is not None:
                g = _form_add(_form_add(f, fb, -1), fc, 1)
                if not g[0]:
                    vals[u] = (g[1], g[2], 1 - k, 0)
                    continue
            if not f[0]:
                vals[u] = (f[1], f[2], 0, 0)
        run: list[int] = []
        onward: list[int] = []
        decided = False
        todo = [(h, vals)]
        while todo:
            i, vals = todo.pop()
            code = [x for x in self.blocks[i].instrs if not x.is_label and not x.is_phi]
            if any(x.mnemonic not in _CHAIN for x in code) or not code:
                if i not in onward:
                    onward.append(i)
                continue
            if i in run:
                return None  # (a dispatch block met twice: not a chain)
            run.append(i)
            vals = dict(vals)
            scc = None
            for inst in code:
                scc = self._chain_step(inst, vals, scc)
            sides = self._sides(i)
            if sides is None:
                if code[-1].mnemonic.startswith("s_cbranch"):
                    return None
                todo += [(j, vals) for j in self.succs[i]]
            elif scc is None:
                todo += [(sides[0], vals), (sides[1], vals)]
            else:
                decided = True
                todo.append((sides[0] if scc else sides[1], vals))
        if set(run) & set(onward) or not decided:
            return None
        return tuple(run), tuple(onward)

    def _chain_step(self, inst: Instruction, vals: dict, scc):
        """Run one dispatch instruction on values ``D + u`` (`vals`: unit -> (off, bits, lo,
        hi)); returns SCC as known after it (None: unknown)."""
        mn, srcs = inst.mnemonic, inst.srcs
        units = _units(inst)

        def get(op):
            v = _lit(op)
            if v is not None:
                return (v, 32, 0, 0)
            u = _one(op)
            return vals.get(u) if u is not None else None
        res = None
        if mn in _ADD and len(srcs) == 2:
            a, b = get(srcs[0]), get(srcs[1])
            if a is not None and b is not None and b[1] == 32 and b[2] == b[3] == 0:
                res = (a[0], a[1], a[2] + b[0], a[3] + b[0])
            elif a is not None and b is not None and a[1] == 32 and a[2] == a[3] == 0:
                res = (b[0], b[1], b[2] + a[0], b[3] + a[0])
        elif mn == "s_lshr_b32" and len(srcs) == 2:
            a, sh = get(srcs[0]), _lit(srcs[1])
            if a is not None and sh is not None and 0 < sh < 32 and a[1] >= sh and a[0] % (1 << sh) == 0 \
                    and 0 <= a[2] <= a[3] < (1 << sh):
                bits = min(a[1], 32) - sh
                res = ((a[0] >> sh) % (1 << bits), bits, 0, 0)
        elif mn == "s_and_b32" and len(srcs) == 2:
            a, m = get(srcs[0]), _lit(srcs[1])
            if m is None:
                a, m = get(srcs[1]), _lit(srcs[0])
            if a is not None and m is not None and a[2] == a[3] and m < (1 << a[1]):
                res = (((a[0] + a[2]) % (1 << a[1])) & m, 32, 0, 0)
        elif mn.startswith("s_cmp_"):
            a, b = get(srcs[0]), get(srcs[1]) if len(srcs) == 2 else None
            exact = [x is not None and x[1] == 32 and x[2] == x[3] for x in (a, b)]
            if all(exact):
                eq = (a[0] + a[2]) % _MOD == (b[0] + b[2]) % _MOD
                return eq if "_eq_" in mn else not eq
            return None
        for u in units:
            vals.pop(u, None)
        if res is not None and len(units) == 1:
            vals[units[0]] = res
        return None if _writes_scc(inst) else scc
