"""The value analysis over a function's CFG: what each register unit holds where it is read.

Demand driven and sparse: asking for the value a register unit has at an instruction walks
to its reaching definition and evaluates only the instructions the value depends on (the
address slice), each once.  Reaching definitions come from the pass's SSA when it is given
(`UseDefChains.src_defs`, no extra cost) and otherwise from an on-demand walk of the CFG that
creates join nodes (`VPhi`) only where a value is asked for.  Either way a join is evaluated
as the join of its operands, and a join at a loop header (an RPO back edge reaches it) is
resolved as a loop:

1. *Periodic trips.*  The header's values are computed for trip 0 (the forward operands),
   then trip k+1 from trip k (the back-edge operands evaluated with trip k's values bound),
   up to a few trips.  When trip P equals trip 0 the register is periodic (a ping-pong base
   toggled by an ``s_xor``/``v_xor``/``s_add`` each trip) and its value is a phased `Val`:
   one form per trip residue.  All registers of one header share the residue, so two
   accesses in the same trip compare residue by residue.
2. *Otherwise* a wave-uniform register becomes a loop `Atom` (one instance per trip) whose
   range is found by iteration with widening; a lane-varying one becomes its range.
   (`loop_values.LoopSolver` does both; this module owns the memos it fills.)

Soundness of symbols (why one atom may stand for one value in two places): an atom is
created where a value is defined (an instruction, or a join of differing values), and two
reads of it on a path that crosses no RPO back edge see the same instance; across trips every
atom defined in a loop is treated as a fresh instance (`Atom.variant`).

Subroutines of the function (`calls.py`): a unit that no call of a subroutine writes reaches
its entry as the join of the callers' values just before their calls (the CFG's edges from
the calls), context-insensitively; the return address a call writes is the callers' opaque
state (`CalleeEntry`), and code of the subroutine defines fresh symbols at every execution.

Writes under a partial EXEC mask keep the old value in the inactive lanes, so a VALU
definition that may run with some lanes off is joined with the register's previous value.
EXEC is tracked as "the launch mask" or "maybe partial" (saves by ``s_*_saveexec`` and their
restores are recognised; ``exec = -1`` counts as the launch mask: kernels are assumed to be
launched with whole waves; `exec_mask.ExecMask`).
"""

from __future__ import annotations

from bisect import bisect_left
import re

from ..ir import Block, Function, Imm, Instruction, Reg
from . import intervals as I
from .calls import CALLS, call_info
from .cfg import CfgInfo
from .exec_mask import ExecMask
from .launch import LaunchInfo
from .loop_values import PENDING, LoopSolver, LoopTrip
from .value_defs import ENTRY, CalleeEntry, VPhi
from .value_operands import SCALAR_KINDS, Operands
from .value_ops import base_mnemonic, semantics
from .value_sdwa import low16_key, sdwa_values, semantics16
from .values import (Atom, Val, atom_val, collapse_phase, const_val, join_vals, lin_add, lin_atom,
                     lin_mul_const, si_val, top_val, unit_name, v_and)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .ssa import UseDefChains
    from .wave_roles import WaveRestriction

Key = tuple

#: the longest chain of nested evaluations
_MAX_DEPTH = 400


def _low_mask(n: int) -> int:
    """The bits a value in [0, n] may set."""
    return (1 << n.bit_length()) - 1


_SHUFFLE = re.compile(r'row_|quad_perm|dpp|bound_ctrl|_sel:|fi:|wave_shr|wave_ror|row_bcast')
def _HIGH_HALF(d: Instruction) -> bool:
    """An operand names a 16-bit register half ``.h`` (gfx11+ true16 syntax)."""
    return any(type(r) is Reg and (r.spelling or "").endswith(".h") for r in (*d.srcs, *d.dsts))


#: lane shuffles and half selects other than SDWA's own selectors
_SHUFFLE_NOT_SDWA = re.compile(r'row_|quad_perm|dpp|bound_ctrl|op_sel|fi:|wave_shr|wave_ror|row_bcast')


_NO_VALUE = frozenset(("null", "LDS"))
def _bfe(x: int, spec: int) -> int:
    o, w = spec & 31, (spec >> 16) & 0x7F
    return (x >> o) & ((1 << min(w, 32)) - 1)


#: results that are a function of one value: mnemonic -> (value operand, constant operands,
#: the function of the value's number and the constants)
_DERIVED = {"s_and_b32": (0, (1,), lambda x, m: x & m), "v_and_b32": (1, (0,), lambda x, m: x & m),
            "s_lshr_b32": (0, (1,), lambda x, k: x >> (k & 31)), "v_lshrrev_b32": (1, (0,), lambda x, k: x >> (k & 31)),
            "s_bfe_u32": (0, (1,), _bfe),
            "v_bfe_u32": (0, (1, 2), lambda x, o, w: (x >> (o & 31)) & ((1 << (w & 31)) - 1))}

#: operations whose result depends on the destination's old value (not among the sources)
_READS_OLD = frozenset(("s_addk_i32", "s_addk_co_i32", "s_mulk_i32", "s_cmov_b32", "s_cmovk_i32", "s_bitset1_b32",
                        "s_bitset0_b32", "v_writelane_b32", "v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"))


def _dst_keys(inst: Instruction) -> list:
    out = []
    for op in inst.dsts:
        if type(op) is Reg:
            kind = op.kind
            if kind in _NO_VALUE:
                continue
            lo = op.lo
            if lo == op.hi:
                out.append((kind, lo))
            else:
                out.extend((kind, u) for u in range(lo, op.hi + 1))
    return out


class ValueFlow:
    """Abstract values of register units at instructions of one function.

    `launch` (None for a function that is not a kernel: v0 is then unknown); `chains`: the
    pass's SSA of this function, when built (its reaching definitions are used as they are).
    """

    def __init__(self, func: Function, cfg: CfgInfo, launch: LaunchInfo | None,
                 chains: UseDefChains | None = None, text_hint: str | None = None,
                 role: "WaveRestriction | None" = None) -> None:
        self.func = func
        self.cfg = cfg
        self.launch = launch
        #: one wave's view (analysis/wave_roles.py): the wave index fixed, and the CFG edges
        #: that wave never takes left out of every join
        self.role = role
        #: the file's text, when known (cheap tests for EXEC writes and calls)
        self.text_hint = text_hint
        self.calls = call_info(func)
        # the pass's SSA knows nothing of calls: with calls, reaching definitions are found here
        self.chains = chains if chains is not None and chains.src_defs and self.calls is None else None
        self.entry_block = func.blocks[0] if func.blocks else None
        self.memo: dict = {}
        self.depth = 0
        self._natoms = 0
        self._entry_atoms: dict = {}
        self._bdefs: dict = {}
        self._start: dict = {}
        self._opdefs: dict = {}
        self._bodies: dict = {}
        self._in_loops: set | None = None
        #: where EXEC may be narrower than the launch mask (computed when first asked)
        self.exec_mask = ExecMask(self)
        self._v0: Val | None = None
        self._irreducible: dict = {}
        self._sources: dict = {}
        self._regions: dict = {}
        #: value numbering: operation and exact operands -> the result (see `_number`)
        self._numbered: dict = {}
        #: every register unit whose reaching definition was asked somewhere (the values found
        #: so far rest on the definitions of these units only: waitcnt/lds_reuse.py reuses an
        #: answer across versions while no edited instruction writes one of them)
        self.read_keys: set = set()

    # --- public --------------------------------------------------------------------------------
    def value_at(self, inst: Instruction, key: Key, ctx: LoopTrip | None = None) -> Val:
        """The value unit `key` holds just before `inst` runs."""
        return self._def_val(self._before(inst, key), key, ctx)

    def operand(self, inst: Instruction, i: int, unit: int = 0) -> Val:
        """The value of unit `unit` of source operand `i` of `inst`."""
        return self._operands(inst, None).src_unit(i, unit)

    def new_atom(self, rng: I.SI, variant: int, origin: str) -> Atom:
        self._natoms += 1
        return Atom(self._natoms, rng, int(variant), origin)

    def variant(self, block: Block | None) -> int:
        """How often a symbol defined in `block` takes a new value: 0 once, 1 each loop trip,
        2 at every execution (code of a subroutine the function calls)."""
        if block is None:
            return 2
        if self.calls is not None and block in self.calls.region:
            return 2
        return 1 if self.in_loop(block) else 0

    def untrusted(self) -> str | None:
        """Why the CFG cannot be trusted at all (an indirect jump to a computed address), or
        None.  A return whose address came from a call of this function (or, outside a
        kernel, from the caller) is not such a jump."""
        if self.calls is None:
            return None
        for r in self.calls.returns:
            for op in r.srcs:
                if type(op) is not Reg:
                    continue
                for u in range(op.lo, op.hi + 1):
                    if not self._return_address(self._before(r, (op.kind, u)), (op.kind, u), set()):
                        return f"{r.mnemonic} at line {r.line} jumps to a computed address: the CFG misses its targets"
        return None

    def _return_address(self, d: Any, key: Key, seen: set) -> bool:
        while type(d) is VPhi and d.forward is not None:
            d = d.forward
        if id(d) in seen:
            return True
        seen.add(id(d))
        if d is ENTRY:
            return self.launch is None
        if type(d) is CalleeEntry:  # every call of this subroutine leaves its return address here
            return all(any(type(op) is Reg and op.kind == key[0] and op.lo <= key[1] <= op.hi for op in c.dsts)
                       for c in self.calls.entries[d.block])
        if type(d) is VPhi:
            return all(self._return_address(x, key, seen) for _, x in d.ops)
        return d.mnemonic.startswith(CALLS)

    def in_loop(self, block: Block) -> bool:
        if self._in_loops is None:
            s: set = set()
            for h in self.cfg.rpo:
                if any(self.cfg.is_back_edge(p, h) for p in h.preds if p in self.cfg.rpo_index):
                    s |= self._body(h)
            self._in_loops = s
        return block in self._in_loops

    # --- reaching definitions ------------------------------------------------------------------
    def _block_defs(self, b: Block) -> tuple:
        bd = self._bdefs.get(b)
        if bd is None:
            pos: dict = {}
            defs: dict = {}
            units = self.chains.units if self.chains is not None else None
            instrs = b.instrs
            for i, inst in enumerate(instrs):
                if inst.is_label or inst.is_phi:
                    continue
                pos[inst] = i
                u = units.get(inst) if units is not None else None
                for k in (u[1] if u is not None else _dst_keys(inst)):
                    lst = defs.get(k)
                    if lst is None:
                        defs[k] = [i]
                    elif lst[-1] != i:
                        lst.append(i)
            calls = []
            if self.calls is not None:
                calls = [(i, self.calls.clobbers.get(inst)) for i, inst in enumerate(instrs)
                         if inst in self.calls.clobbers]
            bd = self._bdefs[b] = (pos, defs, instrs, calls)
        return bd

    def _last_def(self, b: Block, key: Key, stop: int) -> Any:
        """The last definition of `key` in `b` before position `stop` (a call that may
        clobber it counts), or None."""
        self.read_keys.add(key)
        _, defs, instrs, calls = self._block_defs(b)
        lst = defs.get(key)
        best = -1
        if lst:
            j = bisect_left(lst, stop) - 1
            if j >= 0:
                best = lst[j]
        for i, clob in reversed(calls):
            if i < stop:
                if i > best and (clob is None or key in clob):
                    best = i
                    break
                if i < best:
                    break
        return instrs[best] if best >= 0 else None

    def _before(self, inst: Instruction, key: Key) -> Any:
        b = inst.block
        d = self._last_def(b, key, self._block_defs(b)[0].get(inst, 0))
        return d if d is not None else self._start_def(b, key)

    def _end_def(self, b: Block, key: Key) -> Any:
        d = self._last_def(b, key, len(b.instrs))
        return d if d is not None else self._start_def(b, key)

    def _preds(self, b: Block) -> list:
        idx = self.cfg.rpo_index
        role = self.role
        if role is not None:
            return [p for p in b.preds if p in idx and role.takes(p, b)]
        return [p for p in b.preds if p in idx]

    def _start_def(self, b: Block, key: Key) -> Any:
        memo = self._start
        chain = []
        cur = b
        while True:
            d = memo.get((cur, key))
            if d is not None:
                break
            if self.calls is not None and cur in self.calls.entries and self._entry_opaque(cur, key):
                d = CalleeEntry(cur)
                break
            preds = self._preds(cur)
            entry = cur is self.entry_block
            if not preds:
                d = ENTRY
                break
            if len(preds) == 1 and not entry and preds[0] is not cur and preds[0] not in chain:
                chain.append(cur)
                p = preds[0]
                d = self._last_def(p, key, len(p.instrs))
                if d is not None:
                    break
                cur = p
                continue
            phi = VPhi(cur, key)
            memo[(cur, key)] = phi
            if self.depth > _MAX_DEPTH:
                phi.ops = [(None, ENTRY)]
            else:
                self.depth += 1
                try:
                    phi.ops = [(p, self._end_def(p, key)) for p in preds] + ([(None, ENTRY)] if entry else [])
                finally:
                    self.depth -= 1
            distinct = {id(x): x for _, x in phi.ops if x is not phi}
            if len(distinct) == 1:
                phi.forward = next(iter(distinct.values()))
                d = phi.forward
                memo[(cur, key)] = d
            else:
                d = phi
            break
        for c in chain:
            memo[(c, key)] = d
        return d

    def _entry_opaque(self, entry: Block, key: Key) -> bool:
        """Is `key` at subroutine `entry` only "its callers' state"?  Not when every call of
        it reaches it by a CFG edge and none writes `key`: the value is then the join of the
        callers' values just before their calls (the CFG's predecessors there), as at any
        join; aiter's f4gemm keeps tensor descriptor words in SGPRs across `s_call_i64`.
        A register a call writes (its return address) stays opaque (`_return_address`)."""
        preds = set(entry.preds)
        for c in self.calls.entries[entry]:
            if c.block not in preds:
                return True
            for op in c.dsts:
                if type(op) is Reg and op.kind == key[0] and op.lo <= key[1] <= op.hi:
                    return True
        return False

    def _single_source(self, phi: Any) -> Any:
        """The one definition every operand of a web of joins comes from (a register no path
        changes around a loop), or None."""
        memo = self._sources
        got = memo.get(phi, False)
        if got is not False:
            return got
        leaf = None
        seen = {id(phi)}
        web = [phi]
        stack = [phi]
        while stack:
            x = stack.pop()
            for _, d in self._phi_ops(x):
                while type(d) is VPhi and d.forward is not None:
                    d = d.forward
                if type(d) is VPhi or (type(d) is Instruction and d.is_phi):
                    if id(d) not in seen:
                        seen.add(id(d))
                        web.append(d)
                        stack.append(d)
                    continue
                if leaf is None:
                    leaf = d
                elif d is not leaf:
                    for w in web:
                        memo[w] = None
                    return None
        for w in web:
            memo[w] = leaf
        return leaf

    def _operand_defs(self, inst: Instruction) -> list:
        """Per source operand: the reaching definition of each of its units (None: not a
        register)."""
        got = self._opdefs.get(inst)
        if got is not None:
            return got
        out: list = []
        ch = self.chains
        row = ch.src_defs.get(inst) if ch is not None else None
        if row is not None:
            n = 0
            keys = self.read_keys
            for op in inst.srcs:
                if type(op) is Reg and op.kind != "null":
                    keys.update((op.kind, u) for u in range(op.lo, op.hi + 1))
                    w = op.hi - op.lo + 1
                    out.append(tuple(ENTRY if d is None else d for d in row[n:n + w]))
                    n += w
                else:
                    out.append(None)
        else:
            for op in inst.srcs:
                if type(op) is Reg and op.kind != "null":
                    out.append(tuple(self._before(inst, (op.kind, u)) for u in range(op.lo, op.hi + 1)))
                else:
                    out.append(None)
        self._opdefs[inst] = out
        return out

    # --- evaluation --------------------------------------------------------------------------------
    def _scope(self, block: Block | None, ctx: LoopTrip | None) -> LoopTrip | None:
        c = ctx
        while c is not None:
            if block in c.body:
                return c
            c = c.parent
        return None

    def _def_val(self, d: Any, key: Key, ctx: LoopTrip | None) -> Val:
        while type(d) is VPhi and d.forward is not None:
            d = d.forward
        if d is ENTRY:
            return self._entry_value(key)
        if type(d) is CalleeEntry:
            return self._clobbered(None, key)
        if type(d) is VPhi or d.is_phi:
            leaf = self._single_source(d)
            if leaf is None:
                return self._phi_val(d, key, ctx)
            return self._def_val(leaf, key, ctx)
        if self.calls is not None and d in self.calls.clobbers:
            return self._clobbered(d, key)
        scope = self._scope(d.block, ctx)
        memo = scope.memo if scope is not None else self.memo
        vals = memo.get(d)
        if vals is None:
            if self.depth > _MAX_DEPTH:
                return top_val(key[0] in SCALAR_KINDS, f"address computation deeper than {_MAX_DEPTH} steps")
            self.depth += 1
            try:
                vals = self._evaluate(d, scope)
            finally:
                self.depth -= 1
            memo[d] = vals
        v = vals.get(key)
        return v if v is not None else self._unknown(d, key)

    def _operands(self, inst: Instruction, ctx: LoopTrip | None) -> Operands:
        return Operands(self, inst, ctx, inst.mnemonic, inst.srcs, self._operand_defs(inst), inst.dsts, inst.suffix)

    def _evaluate(self, d: Instruction, ctx: LoopTrip | None) -> dict:
        keys = _dst_keys(d)
        if not keys:
            return {}
        mn = d.mnemonic
        res: dict = {}
        if _HIGH_HALF(d):
            pass  # (a true16 high half, `v1.h`: which half is read or written is not modelled)
        elif mn.startswith("v_dual_"):
            res = self._vopd(d, ctx)
        elif mn.endswith("_sdwa") and not (d.suffix and _SHUFFLE_NOT_SDWA.search(d.suffix)):
            res = sdwa_values(self._operands(d, ctx))
        elif not (mn.endswith(("_dpp", "_sdwa")) or (d.suffix and _SHUFFLE.search(d.suffix))):
            f = semantics(mn) or semantics16(mn)
            if f is not None:
                res = f(self._operands(d, ctx))
        out = {}
        for k in keys:
            v = res.get(k)
            out[k] = self._unknown(d, k) if v is None else self._finish(d, k, v, ctx)
            low = res.get(low16_key(k)) if v is not None else None
            if low is not None:
                out[low16_key(k)] = self._finish_low16(d, k, low, ctx)
        scc = res.get(("SCC", 0))
        if scc is not None and keys[0] in out and scc is res.get(keys[0]):
            out[("SCC", 0)] = out[keys[0]]  # the flag is the result itself (its symbols too)
        return out

    def _vopd(self, d: Instruction, ctx: LoopTrip | None) -> dict:
        """A VOPD pair: both halves read their sources before either writes."""
        code = d.text
        for c in ("//", ";"):
            cut = code.find(c)
            if cut >= 0:
                code = code[:cut]
        halves = code.split("::")
        if len(halves) != 2 or len(d.dsts) != 2:
            return {}
        parts = []
        for h in halves:
            h = h.strip()
            sp = h.find(" ")
            parts.append((h[:sp] if sp > 0 else h, h[sp + 1:] if sp > 0 else ""))
        nleft = parts[0][1].count(",")
        defs = self._operand_defs(d)
        res: dict = {}
        for half, (mn, text), srcs, dfs in ((0, parts[0], d.srcs[:nleft], defs[:nleft]),
                                            (1, parts[1], d.srcs[nleft:], defs[nleft:])):
            name = "v_" + mn[len("v_dual_"):] if mn.startswith("v_dual_") else mn
            f = semantics(name)
            if f is None or _SHUFFLE.search(text):
                continue
            res.update(f(Operands(self, d, ctx, name, list(srcs), list(dfs), [d.dsts[half]], text)))
        return res

    def _clobbered(self, call: Instruction | None, key: Key) -> Val:
        """A unit after a call that may change it, or at a subroutine's entry."""
        why = (f"{unit_name(key)} may be changed by the call at line {call.line}" if call is not None
               else f"{unit_name(key)} at the entry of a subroutine (its callers' state)")
        memo = self.memo
        v = memo.get(("clobber", id(call), key))
        if v is None:
            if key[0] in SCALAR_KINDS:
                v = Val((lin_atom(self.new_atom(I.FULL32, 2, why)),), True, None, why)
            else:
                v = top_val(False, why)
            memo[("clobber", id(call), key)] = v
        return v

    def _unknown(self, d: Instruction, key: Key) -> Val:
        if key[0] == "SCC":
            return si_val((0, 1, 1), True)
        why = f"{unit_name(key)} from {d.mnemonic} at line {d.line}"
        if key[0] in SCALAR_KINDS:
            a = self.new_atom(I.FULL32, self.variant(d.block), why)
            return Val((lin_atom(a),), True, None, why + " (not a modelled address computation)")
        return top_val(False, why + " (not a modelled address computation)")

    def _finish_low16(self, d: Instruction, key: Key, low: Val, ctx: LoopTrip | None) -> Val:
        """The exact low half of a 16-bit result, with the old low half in lanes a partial
        EXEC leaves."""
        if low.bottom or not self.exec_mask.partial(d):
            return low
        old = self.value_at(d, key, ctx)
        return join_vals([low, v_and(old, const_val(0xFFFF))])

    def _low16(self, d, key: Key, ctx: LoopTrip | None) -> Val | None:
        """The low half a 16-bit result left in unit `key` at definition `d`, when `d` is an
        instruction that keeps one (`value_sdwa.low16_key`); None otherwise."""
        while type(d) is VPhi and d.forward is not None:
            d = d.forward
        if d is ENTRY or type(d) is not Instruction or d.is_phi:
            return None
        if self.calls is not None and d in self.calls.clobbers:
            return None
        self._def_val(d, key, ctx)  # (evaluates and memoises d)
        scope = self._scope(d.block, ctx)
        vals = (scope.memo if scope is not None else self.memo).get(d)
        return vals.get(low16_key(key)) if vals else None

    def _finish(self, d: Instruction, key: Key, v: Val, ctx: LoopTrip | None) -> Val:
        if v.bottom:
            return v
        kind = key[0]
        if kind in SCALAR_KINDS:
            if not v.uniform:
                v = Val(v.lins, True, v.phase, v.why)
        elif kind in ("v", "a") and self.exec_mask.partial(d):
            old = self.value_at(d, key, ctx)
            j = join_vals([v, old])
            v = Val(j.lins, False, j.phase, j.why or f"{unit_name(key)} written under a partial EXEC at line {d.line}")
        if v.uniform and kind != "SCC":
            v = self._atomize(v, d, key, ctx)
        return v

    def _atomize(self, v: Val, d: Instruction, key: Key, ctx: LoopTrip | None = None) -> Val:
        """Name the unknown part of a wave-uniform value, so that later uses correlate.

        Value numbering: an operation that a second instruction repeats on the same exact
        operands (see `_number`) gets the same symbols, so a base computed twice (once for a
        tensor descriptor, once for the DS addresses) compares exactly."""
        if all(x[1][2] == 0 for x in v.lins):
            return v
        vn = self._number(d, key, ctx, v)
        if vn is not None:
            got = self._numbered.get(vn[0])
            if got is not None:
                return got
        origin = f"{unit_name(key)} from {d.mnemonic} at line {d.line}"
        variant = self.variant(d.block) if vn is None else vn[1]
        lins = []
        for terms, s in v.lins:
            if s[2] == 0:
                lins.append((terms, s))
            else:
                a = self.new_atom(s, variant, origin)
                if vn is not None and not terms and v.phase is None:
                    a.derived = self._derivation(d, ctx)
                lins.append(lin_add((terms, (0, 0, 0)), lin_atom(a)))
        why = v.why
        if why is None and any(I.size(s) > 1 << 24 for _, s in v.lins):
            why = origin
        out = Val(tuple(lins), True, v.phase, why)
        if vn is not None:
            self._numbered[vn[0]] = out
        return out

    def _derivation(self, d: Instruction, ctx: LoopTrip | None) -> tuple | None:
        """(root atom, f) when the numbered result of `d` is ``f(root)``: a mask, a right
        shift or a bit-field extract by constants of ``c*root + k`` (one symbol, exact, no
        trip phase)."""
        mn = base_mnemonic(d.mnemonic)
        spec = _DERIVED.get(mn)
        if spec is None:
            return None
        ops = self._operands(d, ctx)
        vi, ci = spec[0], spec[1]
        if mn in ("s_and_b32", "v_and_b32") and ops.const(ci[0]) is None:
            vi, ci = ci[0], (vi,)  # the mask on the other side
        x = ops.src(vi)
        consts = [ops.const(i) for i in ci]
        if None in consts or x.phase is not None or len(x.lins[0][0]) != 1 or x.lins[0][1][2] != 0:
            return None
        (root, coeff), = x.lins[0][0]
        if root.derived is not None:
            return None
        k = x.lins[0][1][0]
        op = spec[2]
        return root, (lambda r, c=coeff, k=k, a=tuple(consts), op=op: op((c * r + k) & I.MASK32, *a))

    def _number(self, d: Instruction, key: Key, ctx: LoopTrip | None, v: Val) -> tuple | None:
        """(value-number key, symbol variant) of the wave-uniform result `key` of `d`, or None
        when `d` cannot be numbered.

        The key holds the operation, its modifiers, which unit of the result, and the value
        of every source unit (implicit ones such as SCC included: the IR lists them).  It is
        only formed when every source is *exact* (each trip residue a sum of symbols plus a
        constant: the same abstract value then means the same number in every lane), and
        the symbols' current ranges are part of it (a loop's range iteration narrows them).
        Instructions that read their destination's old value (`_READS_OLD`), VOPD pairs and
        lane shuffles are never numbered.  The symbols of a numbered result depend only on
        its operands: their variant is the largest of the operands' (a pure function of
        values fixed per wave is fixed per wave).  A result whose range is too wide to name
        in an explanation keeps its own symbols (explanations must not depend on the order
        in which the analysis met the instructions)."""
        mn = d.mnemonic
        if mn.startswith("v_dual_") or base_mnemonic(mn) in _READS_OLD or not d.srcs:
            return None
        if any(I.size(s) > 1 << 24 for _, s in v.lins):
            return None
        ops = self._operands(d, ctx)
        parts: list = [base_mnemonic(mn), d.suffix, key[1] - ops.dst_key(0)[1] if key[0] != "SCC" else -1]
        variant = 0
        for i, op in enumerate(d.srcs):
            t = type(op)
            if t is Imm:
                parts.append(op.value)
                continue
            if t is not Reg or (op.spelling and any(m in op.spelling for m in ("|", "abs", "sext", "neg"))):
                return None
            for j in range(op.hi - op.lo + 1):
                x = ops.src_unit(i, j)
                if x.bottom or any(lin[1][2] != 0 for lin in x.lins):
                    return None
                for lin in x.lins:
                    for a, _ in lin[0]:
                        parts.append(a.range)
                        variant = max(variant, a.variant)
                parts.append(x)
        return tuple(parts), variant

    def _entry_value(self, key: Key) -> Val:
        kind, idx = key
        if kind == "v":
            la = self.launch
            if la is None:
                return top_val(False, f"v{idx} at function entry (not a kernel: no work-item id)")
            if idx == 0:
                if self._v0 is None:
                    self._v0 = self._workitem_v0(la)
                return self._v0
            if idx in (1, 2) and not la.packed_ids and la.workitem_id >= idx:
                n = (la.reqd[idx] if la.reqd else la.max_flat)
                return si_val(I.make(0, n - 1, 1), False)
            return top_val(False, f"v{idx} at kernel entry")
        if kind == "SCC":
            return si_val((0, 1, 1), True)
        if key == ("ttmp", 8) and self.launch is not None and self.launch.arch.startswith("gfx12"):
            return self._ttmp8()
        if kind in SCALAR_KINDS:
            a = self._entry_atoms.get(key)
            if a is None:
                a = self._entry_atoms[key] = self.new_atom(I.FULL32, 0, f"{unit_name(key)} at kernel entry")
            return atom_val(a)
        return top_val(True, f"{unit_name(key)} at entry")

    def _ttmp8(self) -> Val:
        """TTMP8 on gfx12/gfx1250 (architected SGPRs): bits 29:25 are the wave's index in its
        workgroup, what LLVM lowers ``llvm.amdgcn.wave.id`` to (``s_bfe_u32 s, ttmp8,
        0x50019``; llvm/llvm-project PR 79689), so below the waves per workgroup; the other
        bits are unknown."""
        v = self._entry_atoms.get(("ttmp", 8))
        if v is None:
            la = self.launch
            low = self.new_atom(I.make(0, (1 << 25) - 1, 1), 0, "TTMP8[24:0] at kernel entry")
            high = self.new_atom(I.make(0, 3, 1), 0, "TTMP8[31:30] at kernel entry")
            if self.role is not None:
                index = ((), I.const(self.role.wave << 25))  # this wave's index, known
            else:
                wave = self.new_atom(I.make(0, la.waves_per_group - 1, 1), 0, "the wave's index (TTMP8[29:25])")
                index = lin_mul_const(lin_atom(wave), 1 << 25)
            form = lin_add(lin_add(lin_atom(low), index), lin_mul_const(lin_atom(high), 1 << 30))
            v = self._entry_atoms[("ttmp", 8)] = Val((form,), True)
        return v

    def _workitem_v0(self, la: LaunchInfo) -> Val:
        """v0 per wave: work-item x (and y, z when packed into it)."""
        w = la.wave_size
        if la.one_dimensional() and (la.workitem_id == 0 or la.packed_ids):
            waves = la.reqd[0] // w
            if self.role is not None:
                return si_val(I.make(self.role.wave * w, self.role.wave * w + w - 1, 1), False)
            a = self.new_atom(I.make(0, waves - 1, 1), 0, "the wave's index in its workgroup")
            return Val(((((a, w),), I.make(0, w - 1, 1)),), False)
        r = la.reqd
        x = (r[0] if r else la.max_flat) - 1
        if la.packed_ids and la.workitem_id >= 1:
            y = (r[1] if r else la.max_flat) - 1
            z = (r[2] if r else la.max_flat) - 1 if la.workitem_id >= 2 else 0
            # x in bits 9:0, y in 19:10, z in 29:20: each field stays below its own bound, so
            # the bits above each field's bound are known zeros (`v_and_b32 v0, 0x3ff, v0`
            # then gives x's range, not 0..1023)
            hi = x | (y << 10) | (z << 20)
            may = _low_mask(x) | (_low_mask(y) << 10) | (_low_mask(z) << 20)
            return si_val(I.bits(0, (1 << hi.bit_length()) - 1, 1, ~may & I.MASK32, 0), False)
        return si_val(I.make(0, x, 1), False)

    # --- joins and loops -----------------------------------------------------------------------
    def _phi_key(self, phi: Any) -> Key:
        return phi.key if type(phi) is VPhi else phi.phi_key

    def _phi_ops(self, phi: Any) -> list:
        if type(phi) is VPhi:
            return phi.ops
        b = phi.block
        idx = self.cfg.rpo_index
        ops = [(p, ENTRY if d is None else d) for p, d in zip(b.preds, phi.sources) if p in idx]
        if self.role is not None:
            ops = [(p, d) for p, d in ops if self.role.takes(p, b)]
        if b is self.entry_block:
            ops.append((None, ENTRY))
        return ops

    def _is_back(self, p: Block | None, h: Block) -> bool:
        return p is not None and self.cfg.is_back_edge(p, h)

    def _phi_val(self, phi: Any, key: Key, ctx: LoopTrip | None) -> Val:
        h = phi.block
        c = ctx
        while c is not None:
            if h in c.solver.headers:
                return c.bind(phi)
            c = c.parent
        scope = self._scope(h, ctx)
        memo = scope.memo if scope is not None else self.memo
        v = memo.get(phi)
        if v is PENDING:
            return self._cyclic(h, key)
        if v is not None:
            return v
        ops = self._phi_ops(phi)
        if scope is not None and any(self._is_back(p, h) for p, _ in ops) and not self._nestable(h, scope):
            # a loop inside a simulated trip of another loop that it is not properly nested
            # in, or too deep: unknown (solving it once per trip of each enclosing loop costs
            # a product of the trip counts)
            v = memo[phi] = self._cyclic(h, key)
            return v
        if not any(self._is_back(p, h) for p, _ in ops):
            vals = [self._def_val(d, key, scope) for _, d in ops]
            v = self._gated(h, ops, vals, scope) if len(ops) == 2 else None
            if v is None:
                v = join_vals(vals) if vals else self._entry_value(key)
            if v.uniform and len(vals) > 1:
                v = self._atomize_join(v, h, key)
            memo[phi] = v
            return v
        return self._resolve(h, phi, memo, scope)

    def _gated(self, h: Block, ops: list, vals: list, scope: LoopTrip | None) -> Val | None:
        """A two-way join decided by a wave-uniform flag, kept as a form in the flag.

        Kernels swap registers on a condition such as "this wave is odd" (``s_and_b32 s, w,
        1`` then ``s_cbranch_scc0`` over ``v_swap_b32``s): after the join a base is ``x`` or
        ``x + d``.  When the branch block B ends in ``s_cbranch_scc0/1``, the join's two
        predecessors are B itself and a block whose only predecessor is B (or two such
        blocks), and the SCC at the branch is a flag f in {0, 1}: with x the value on the f=0
        edge and y on the f=1 edge, both with the same symbolic terms T, and d the distance
        between their lowest lane parts, the joined value is ``T + d*f + s`` with s in the
        join of x's lane part and y's shifted down by d.  Sound for every lane: when f is 0
        the value is in T + S_x, when it is 1 in T + d + (S_y - d).  None when the shape does
        not apply."""
        (p0, _), (p1, _) = ops
        if p0 is None or p1 is None or p0 is p1:
            return None
        x0, x1 = vals
        if x0.phase is not None or x1.phase is not None or x0.bottom or x1.bottom or x0 == x1:
            return None
        (t0, s0), (t1, s1) = x0.lins[0], x1.lins[0]
        if t0 != t1:
            return None
        # the branch block: a predecessor that branches, or the common single predecessor
        cands = []
        for b in (p0, p1):
            other = p1 if b is p0 else p0
            if self._branch_on_scc(b) is not None and other.preds == [b] and b in self.cfg.rpo_index:
                cands.append(b)
        if not cands and p0.preds == p1.preds and len(p0.preds) == 1 and p0.preds[0] is not h:
            cands.append(p0.preds[0])
        if len(cands) != 1:
            return None
        branch = cands[0]
        got = self._branch_on_scc(branch)
        if got is None:
            return None
        inst, taken_when, target = got
        # which predecessor of h is reached when SCC == 1
        on_one = []
        for pred in (p0, p1):
            via = h if pred is branch else pred
            if via not in branch.succs:
                return None
            taken = via.label == target
            on_one.append(taken == (taken_when == 1))
        if on_one[0] == on_one[1]:
            return None
        flag = self.value_at(inst, ("SCC", 0), scope)
        fc = flag.concrete()
        if flag.bottom or flag.phase is not None or fc[0] < 0 or fc[1] > 1 or not flag.uniform:
            return None
        x, y = (x1, x0) if on_one[0] else (x0, x1)
        sx, sy = (s1, s0) if on_one[0] else (s0, s1)
        d = (sy[0] - sx[0]) & I.MASK32
        if fc[2] == 0:
            return None  # a constant flag: only one edge is ever taken (the plain join is exact enough)
        lane = I.join(sx, I.shift(sy, -(sy[0] - sx[0])))
        form = lin_add(lin_add((t0, lane), lin_mul_const(flag.lins[0], d)), ((), (0, 0, 0)))
        why = x.why or y.why
        return Val((form,), x.uniform and y.uniform, None, why)

    def _branch_on_scc(self, b: Block) -> tuple | None:
        """(the branch, the SCC it jumps on, its target label) when `b` ends in
        ``s_cbranch_scc0/1 label``; else None."""
        t = b.terminator()
        if t is None or t.mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1") or not t.srcs:
            return None
        lab = getattr(t.srcs[0], "value", None)
        if not isinstance(lab, str) or len(b.succs) != 2:
            return None
        return t, int(t.mnemonic[-1]), lab

    def _nestable(self, h: Block, scope: LoopTrip) -> bool:
        depth = 0
        c = scope
        while c is not None:
            depth += 1
            c = c.parent
        return depth < 2 and self._region(h)[0] < scope.body

    def _region(self, h: Block) -> tuple[frozenset, frozenset]:
        """(blocks, headers) solved with the joins at `h`: its natural loop, or for an
        irreducible header its strongly connected component and every header in it."""
        got = self._regions.get(h)
        if got is None:
            if not self._is_irreducible(h):
                got = (self._body(h), frozenset((h,)))
            else:
                comp = self._scc(h)
                heads = frozenset(b for b in comp if any(p in comp and self.cfg.is_back_edge(p, b) for p in b.preds))
                got = (comp, heads)
                for b in heads:
                    self._regions[b] = got
            self._regions[h] = got
        return got

    def _scc(self, h: Block) -> frozenset:
        """The strongly connected component of `h` in the reachable CFG."""
        forward = _reach(h, lambda b: b.succs, self.cfg.rpo_index)
        return frozenset(_reach(h, lambda b: b.preds, forward))

    def _is_irreducible(self, h: Block) -> bool:
        """Some back edge into `h` comes from a block `h` does not dominate."""
        got = self._irreducible.get(h)
        if got is None:
            idom = self.cfg.idom
            got = False
            for p in h.preds:
                if p in self.cfg.rpo_index and self.cfg.is_back_edge(p, h):
                    x = p
                    while x is not None and x is not h:
                        x = idom.get(x)
                    if x is None:
                        got = True
                        break
            self._irreducible[h] = got
        return got

    def _atomize_join(self, v: Val, h: Block, key: Key) -> Val:
        if v.bottom or all(x[1][2] == 0 for x in v.lins):
            return v
        origin = f"{unit_name(key)} after the join at {h.name}"
        lins = []
        for terms, s in v.lins:
            if s[2] == 0:
                lins.append((terms, s))
            else:
                lins.append(lin_add((terms, (0, 0, 0)), lin_atom(self.new_atom(s, self.variant(h), origin))))
        return Val(tuple(lins), True, v.phase, v.why)

    def _cyclic(self, h: Block, key: Key) -> Val:
        why = f"{unit_name(key)} is carried around the loop at {h.name} inside another loop (not analysed)"
        if key[0] in SCALAR_KINDS:
            return Val((lin_atom(self.new_atom(I.FULL32, max(1, self.variant(h)), why)),), True, None, why)
        return top_val(False, why)

    def _body(self, h: Block) -> frozenset:
        body = self._bodies.get(h)
        if body is None:
            idx = self.cfg.rpo_index
            seen = {h}
            work = [p for p in h.preds if p in idx and self.cfg.is_back_edge(p, h)]
            while work:
                b = work.pop()
                if b in seen:
                    continue
                seen.add(b)
                work.extend(p for p in b.preds if p in idx and p not in seen)
            body = self._bodies[h] = frozenset(seen)
        return body

    def _memo_of(self, scope: LoopTrip | None) -> dict:
        return scope.memo if scope is not None else self.memo

    def _resolve(self, h: Block, phi: Any, memo: dict, scope: LoopTrip | None) -> Val:
        finals = memo.setdefault(("finals", self._region(h)[1]), {})
        solver = LoopSolver(self, h, scope, finals)
        try:
            res = solver.solve(phi)
        except BaseException:
            for x in solver.group:
                memo.pop(x, None)
            raise
        for x, v in res.items():
            memo[x] = v
            finals[x] = v
        return res[phi]

    def _final_bind(self, v: Val, h: Block, k: int | None) -> Val:
        if v.phase is not None and v.phase[0] is h:
            if k is None:
                return collapse_phase(v)
            return Val((v.lins[k % v.phase[1]],), v.uniform, None, v.why)
        return v

    def _phased(self, h: Block, seq: list) -> Val:
        lins = tuple(collapse_phase(v).lins[0] for v in seq)
        uniform = all(v.uniform for v in seq)
        why = next((v.why for v in seq if v.why), None)
        if all(x == lins[0] for x in lins[1:]):
            return Val((lins[0],), uniform, None, why)
        return Val(lins, uniform, (h, len(lins)), why)

    def exec_is_launch_mask(self, inst: Instruction) -> bool:
        """EXEC is the launch mask (never empty) when `inst` runs (`wave_vcc.exec_branch`)."""
        return not self.exec_mask.partial(inst)


def _reach(start: Block, step, within) -> set:
    """Blocks reachable from `start` along `step` edges, staying inside `within`."""
    seen = {start}
    work = [start]
    while work:
        for n in step(work.pop()):
            if n in within and n not in seen:
                seen.add(n)
                work.append(n)
    return seen
