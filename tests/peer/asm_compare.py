"""Does our wait placement imply LLVM's?  An independent bound analysis over assembly.

Written for the peer tests, deliberately apart from stinkywait's pass: its own line reader,
its own CFG, its own abstract state.  What it shares with the pass is only the description of
the target (`machine.peer_target`: which timelines an instruction pushes, which counter each
is counted on, what a wait enforces).

The question, for one LLVM wait requirement W = (counter c, value v) placed before instruction
I in ``llvm.s``: on every CFG path to I, under *our* waits, can more than v operations counted
on c be in flight when I issues?  If not, W is implied ("matched"): whatever LLVM needed to
retire at I is retired in our program too, at I or earlier (a counter at most v retires all but
the v youngest ops of an in-order kind, and every op of any kind once v is 0).

Abstract state at a program point: for every timeline t, an upper bound b_t of its ops in
flight, and for every counter c an upper bound T_c of the ops it counts.  An op increments each
timeline it pushes and each counter those are counted on (once per counter), saturating at
the counter's maximum ("that many or more").  A wait ``c <= n`` lowers T_c and every b_t counted
on c to at most n.  The bound on c is min(T_c, sum of its b_t).  Joins take the maximum;
loops iterate to a fixed point (finite: every component is capped).  One coupling between
counters: an op's address translation (xcnt) is done before the op completes, so the xcnt
timeline of such ops is bounded by the sum of the other timelines those ops push.

Calling convention (LLVM's, ../shared/research/targets.md s.3.2): a kernel starts with
nothing in flight; a callable function starts with everything unknown (the caller's ops, one
synthetic "foreign" timeline per counter); after a call only the store counters
(storecnt/vscnt) may still count something (the callee drains the rest before it returns).
Returns, tail calls and ``s_endpgm`` end a path.

Waits are attached to *slots* of a CFG skeleton built from labels and non-wait instructions
only, so the three files of a pair (``nowait.s``, ``llvm.s``, ours) share one skeleton and
differ in their waits.  Slot (b, k) is "before the k-th instruction of block b"; slot
(b, len(b)) is after the last one, on the fall-through edge only.  ``s_delay_alu``,
``s_set_vgpr_msb``, ``s_nop``, ``v_nop``, ``s_wait_alu``, ``s_clause`` and the end-of-program
``s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)`` are ignored: later passes place them relative to the
waits, and none is a memory operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .machine import STORE_ONLY_COUNTERS, PeerTarget

IGNORED = frozenset({"s_delay_alu", "s_set_vgpr_msb", "s_nop", "v_nop", "s_wait_alu",
                     "s_waitcnt_depctr", "s_clause"})
CALLS = frozenset({"s_swappc_b64", "s_swap_pc_i64", "s_call_b64"})
EXITS = frozenset({"s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done", "s_setpc_b64",
                   "s_set_pc_i64"})
#: counters whose ops are also in flight on another counter until they complete
COUPLED = frozenset({"xcnt"})
_DEALLOC = re.compile(r"sendmsg\(\s*MSG_DEALLOC_VGPRS\s*\)")
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):(.*)$")
_TYPE_FN = re.compile(r"^\.type\s+([\w.$]+)\s*,\s*@function")
_HSA_KERNEL = re.compile(r"^\.amdhsa_kernel\s+([\w.$]+)")


# --- reading --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    """One instruction line: 1-based line number, mnemonic and operand text (no comment)."""

    lineno: int
    mnemonic: str
    operands: str

    @property
    def key(self) -> str:
        return self.mnemonic + " " + " ".join(self.operands.split())

    def __str__(self) -> str:
        return f"{self.mnemonic} {self.operands}".strip()


@dataclass
class AsmFunction:
    name: str
    is_entry: bool
    #: ("label", name, lineno) | ("inst", Line) | ("wait", Line)
    tokens: list[tuple[Any, ...]] = field(default_factory=list)


def _strip_comment(line: str) -> str:
    for mark in (";", "//"):
        i = line.find(mark)
        if i >= 0:
            line = line[:i]
    return line.strip()


def read_functions(text: str, is_wait: Callable[[str], bool]) -> list[AsmFunction]:
    """The functions of an llc-style assembly file, as token lists.

    A function starts at the label of a symbol declared ``.type NAME,@function`` and ends at
    the next ``.Lfunc_end*`` label or at the next function.  It is an entry point (kernel or
    shader) unless it returns with ``s_setpc_b64`` / ``s_set_pc_i64``: callable functions do,
    kernels end with ``s_endpgm`` and shaders that return values fall into their epilog.
    """
    lines = text.splitlines()
    declared: set[str] = set()
    kernels: set[str] = set()
    for raw in lines:
        s = raw.strip()
        m = _TYPE_FN.match(s)
        if m:
            declared.add(m.group(1))
        m = _HSA_KERNEL.match(s)
        if m:
            kernels.add(m.group(1))
    funcs: list[AsmFunction] = []
    cur: AsmFunction | None = None
    for n, raw in enumerate(lines, 1):
        s = _strip_comment(raw)
        if not s:
            continue
        m = _LABEL.match(s)
        if m:
            name, rest = m.group(1), m.group(2).strip()
            if name in declared:
                cur = AsmFunction(name, name in kernels)
                funcs.append(cur)
            elif name.startswith(".Lfunc_end"):
                cur = None
            elif cur is not None:
                cur.tokens.append(("label", name, n))
            s = rest
            if not s:
                continue
        if cur is None or s.startswith("."):
            continue
        parts = s.split(None, 1)
        mn = parts[0]
        ops = parts[1] if len(parts) > 1 else ""
        if mn in IGNORED or (mn == "s_sendmsg" and _DEALLOC.search(ops)):
            continue
        ln = Line(n, mn, ops)
        cur.tokens.append(("wait", ln) if is_wait(mn) else ("inst", ln))
    for f in funcs:
        if f.name not in kernels:
            f.is_entry = not any(t[0] == "inst" and t[1].mnemonic in ("s_setpc_b64", "s_set_pc_i64")
                                 for t in f.tokens)
    return funcs


# --- skeleton -----------------------------------------------------------------------------------

@dataclass
class Block:
    index: int
    label: str | None
    insts: list[int] = field(default_factory=list)      # indices into Skeleton.insts
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)
    fallthrough: int | None = None                     # the successor reached by falling through


@dataclass
class Skeleton:
    """The CFG of one function, from its labels and non-wait instructions."""

    name: str
    is_entry: bool
    insts: list[Line]
    blocks: list[Block]
    signature: list[str]                               # labels and instruction keys, in order
    gap_slot: list[tuple[int, int]]                    # canonical token g -> slot of the gap before it
    end_slot: tuple[int, int]                          # slot of the gap after the last token


def build_skeleton(fn: AsmFunction) -> Skeleton:
    insts: list[Line] = []
    blocks: list[Block] = [Block(0, None)]
    signature: list[str] = []
    gap_slot: list[tuple[int, int]] = []
    terminated = False        # the current block ended with a branch or exit
    falls = True              # ... and control can fall out of it
    branch_to: dict[int, str] = {}
    for tok in fn.tokens:
        if tok[0] == "wait":
            continue
        cur = blocks[-1]
        if tok[0] == "label":
            gap_slot.append((cur.index, len(cur.insts)))
            nb = Block(len(blocks), tok[1])
            if falls:
                cur.fallthrough = nb.index
            blocks.append(nb)
            signature.append(tok[1] + ":")
            terminated, falls = False, True
            continue
        ln: Line = tok[1]
        if terminated:
            nb = Block(len(blocks), None)
            if falls:
                cur.fallthrough = nb.index
            blocks.append(nb)
            cur = nb
            terminated, falls = False, True
        gap_slot.append((cur.index, len(cur.insts)))
        cur.insts.append(len(insts))
        insts.append(ln)
        signature.append(ln.key)
        mn = ln.mnemonic
        if mn == "s_branch" or (mn.startswith("s_cbranch_") and mn not in ("s_cbranch_join",)):
            branch_to[cur.index] = ln.operands.split(",")[-1].strip()
            terminated, falls = True, mn != "s_branch"
        elif mn in EXITS:
            terminated, falls = True, False
    cur = blocks[-1]
    end_slot = (cur.index, len(cur.insts))
    by_label = {b.label: b.index for b in blocks if b.label}
    for b in blocks:
        if b.index in branch_to and branch_to[b.index] in by_label:
            b.succs.append(by_label[branch_to[b.index]])
        if b.fallthrough is not None and b.fallthrough not in b.succs:
            b.succs.append(b.fallthrough)
        for s in b.succs:
            blocks[s].preds.append(b.index)
    return Skeleton(fn.name, fn.is_entry, insts, blocks, signature, gap_slot, end_slot)


def slot_waits(fn: AsmFunction, sk: Skeleton, decode: Callable[[Line], dict[str, int]]
               ) -> dict[tuple[int, int], list[tuple[Line, dict[str, int]]]]:
    """The waits of one file's version of a function, attached to the skeleton's slots."""
    out: dict[tuple[int, int], list[tuple[Line, dict[str, int]]]] = {}
    g = 0
    for tok in fn.tokens:
        if tok[0] == "wait":
            slot = sk.gap_slot[g] if g < len(sk.gap_slot) else sk.end_slot
            out.setdefault(slot, []).append((tok[1], decode(tok[1])))
        else:
            g += 1
    return out


# --- the bound analysis ------------------------------------------------------------------------

State = tuple[int, ...]


class BoundAnalysis:
    """Upper bounds of in-flight operations per counter at every slot of one function."""

    def __init__(self, sk: Skeleton, target: PeerTarget, pushes: list[tuple[int, ...]]) -> None:
        self.sk = sk
        self.target = target
        self.counters = sorted(target.counter_max)
        self.cap = {c: target.counter_max[c] for c in self.counters}
        real: list[Any] = sorted({t for p in pushes for t in p if t in _keys(target.counter_of)})
        self.timelines: list[Any] = real + [("ext", c) for c in self.counters]
        self.tl_counter = {t: target.counter_of[t] for t in real}
        self.tl_counter.update({("ext", c): c for c in self.counters})
        self.tl_index = {t: i for i, t in enumerate(self.timelines)}
        nt = len(self.timelines)
        self.c_index = {c: nt + i for i, c in enumerate(self.counters)}
        self.by_counter = {c: [self.tl_index[t] for t in self.timelines if self.tl_counter[t] == c]
                           for c in self.counters}
        self.push_idx: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        for p in pushes:
            tls = tuple(self.tl_index[t] for t in p if t in self.tl_index)
            cns = tuple(sorted({self.c_index[self.tl_counter[self.timelines[i]]] for i in tls}))
            self.push_idx.append((tls, cns))
        self.coupling = self._coupling(pushes)
        self.size = nt + len(self.counters)

    def _coupling(self, pushes: list[tuple[int, ...]]) -> list[tuple[int, tuple[int, ...]]]:
        """(x, S): timeline x (on a COUPLED counter) is bounded by the sum over S."""
        out = []
        for t in self.timelines:
            if not isinstance(t, int) or self.tl_counter[t] not in COUPLED:
                continue
            others: set[int] = set()
            ok = True
            for p in pushes:
                if t in p:
                    rest = [self.tl_index[u] for u in p if u != t and u in self.tl_index
                            and self.tl_counter[u] not in COUPLED]
                    if not rest:
                        ok = False
                    others.update(rest)
            if ok and others:
                out.append((self.tl_index[t], tuple(sorted(others))))
        return out

    # state helpers
    def _cap_of(self, i: int) -> int:
        if i >= len(self.timelines):
            return self.cap[self.counters[i - len(self.timelines)]]
        return self.cap[self.tl_counter[self.timelines[i]]]

    def entry_state(self, unknown: bool) -> State:
        if not unknown:
            return (0,) * self.size
        s = [0] * self.size
        for c in self.counters:
            s[self.tl_index[("ext", c)]] = self.cap[c]
            s[self.c_index[c]] = self.cap[c]
        return tuple(s)

    def after_call(self) -> State:
        s = [0] * self.size
        for c in self.counters:
            if c in STORE_ONLY_COUNTERS:
                s[self.tl_index[("ext", c)]] = self.cap[c]
                s[self.c_index[c]] = self.cap[c]
        return tuple(s)

    def _normalize(self, s: list[int]) -> None:
        for x, others in self.coupling:
            tot = sum(s[o] for o in others)
            if tot < s[x]:
                s[x] = tot
        for c in self.counters:
            tot = sum(s[i] for i in self.by_counter[c])
            ci = self.c_index[c]
            if tot < s[ci]:
                s[ci] = tot

    def apply_waits(self, st: State, waits: Iterable[tuple[Line, dict[str, int]]]) -> State:
        s = None
        for _, dec in waits:
            for c, v in dec.items():
                if c not in self.c_index:
                    continue
                if s is None:
                    s = list(st)
                ci = self.c_index[c]
                if v < s[ci]:
                    s[ci] = v
                for i in self.by_counter[c]:
                    if v < s[i]:
                        s[i] = v
        if s is None:
            return st
        self._normalize(s)
        return tuple(s)

    def push(self, st: State, k: int) -> State:
        tls, cns = self.push_idx[k]
        if not tls:
            return st
        s = list(st)
        for i in tls + cns:
            cap = self._cap_of(i)
            s[i] = s[i] + 1 if s[i] < cap else cap
        return tuple(s)

    def bound(self, st: State, c: str) -> int:
        if c not in self.c_index:
            return 0
        return min(st[self.c_index[c]], sum(st[i] for i in self.by_counter[c]))

    # the analysis proper
    def run(self, waits: dict[tuple[int, int], list[tuple[Line, dict[str, int]]]],
            entry_unknown: bool, calls: list[bool]) -> "Bounds":
        blocks = self.sk.blocks
        inb: list[State | None] = [None] * len(blocks)
        inb[0] = self.entry_state(entry_unknown)
        outb: list[State | None] = [None] * len(blocks)
        work = [0]
        queued = {0}
        while work:
            b = work.pop()
            queued.discard(b)
            st = inb[b]
            assert st is not None
            end = self._through(b, st, waits, calls, None)
            outb[b] = end
            for s in blocks[b].succs:
                e = self.edge(b, s, end, waits)
                old = inb[s]
                new = e if old is None else tuple(max(x, y) for x, y in zip(old, e))
                if new != old:
                    inb[s] = new
                    if s not in queued:
                        queued.add(s)
                        work.append(s)
        slots: dict[tuple[int, int], State] = {}
        for b in range(len(blocks)):
            if inb[b] is not None:
                self._through(b, inb[b], waits, calls, slots)
        return Bounds(self, waits, inb, outb, slots)

    def _through(self, b: int, st: State, waits: dict, calls: list[bool],
                 record: dict[tuple[int, int], State] | None) -> State:
        blk = self.sk.blocks[b]
        for k, i in enumerate(blk.insts):
            st = self.apply_waits(st, waits.get((b, k), ()))
            if record is not None:
                record[(b, k)] = st
            st = self.after_call() if calls[i] else self.push(st, i)
        if record is not None:
            record[(b, len(blk.insts))] = st
        return st

    def edge(self, b: int, s: int, end: State, waits: dict) -> State:
        """The state on edge b -> s: the after-last-instruction waits are on the fall-through."""
        if self.sk.blocks[b].fallthrough == s:
            return self.apply_waits(end, waits.get((b, len(self.sk.blocks[b].insts)), ()))
        return end


def _keys(m: Any) -> set[Any]:
    if isinstance(m, dict):
        return set(m)
    try:
        return set(range(len(m)))
    except TypeError:
        return set()


@dataclass
class Bounds:
    """The fixed point of one `BoundAnalysis.run`."""

    an: BoundAnalysis
    waits: dict[tuple[int, int], list[tuple[Line, dict[str, int]]]]
    inb: list[State | None]
    outb: list[State | None]
    slots: dict[tuple[int, int], State]

    def reachable(self, slot: tuple[int, int]) -> bool:
        return slot in self.slots

    def state_at(self, slot: tuple[int, int]) -> State | None:
        """State when the next instruction after `slot` issues (a slot after a block's last
        instruction is followed along the fall-through edge)."""
        b, k = slot
        if slot not in self.slots:
            return None
        st = self.slots[slot]
        blocks = self.an.sk.blocks
        if k < len(blocks[b].insts):
            return st
        seen = {b}
        st = self.an.apply_waits(st, self.waits.get(slot, ()))
        cur = b
        while True:
            nxt = blocks[cur].fallthrough
            if nxt is None or nxt in seen:
                return st
            seen.add(nxt)
            st = self.an.apply_waits(st, self.waits.get((nxt, 0), ()))
            if blocks[nxt].insts:
                return st
            cur = nxt

    def bound(self, slot: tuple[int, int], c: str) -> int | None:
        st = self.state_at(slot)
        return None if st is None else self.an.bound(st, c)

    def next_inst(self, slot: tuple[int, int]) -> Line | None:
        b, k = slot
        blocks = self.an.sk.blocks
        seen: set[int] = set()
        while b is not None and b not in seen:
            seen.add(b)
            if k < len(blocks[b].insts):
                return self.an.sk.insts[blocks[b].insts[k]]
            b, k = blocks[b].fallthrough, 0  # type: ignore[assignment]
        return None

    def witness(self, slot: tuple[int, int], c: str, limit: int = 4) -> str:
        """A worst path to `slot` for counter c: the blocks walked back through and the most
        recent producers on c along it."""
        an = self.an
        blocks = an.sk.blocks
        b, k = slot
        producers: list[int] = []
        path: list[str] = []
        seen: set[int] = set()
        idxs = an.by_counter.get(c, [])
        while True:
            blk = blocks[b]
            for i in reversed(blk.insts[:k]):
                tls, _ = an.push_idx[i]
                if any(t in idxs for t in tls) and len(producers) < limit:
                    producers.append(an.sk.insts[i].lineno)
            path.append(blk.label or (f"line {an.sk.insts[blk.insts[0]].lineno}" if blk.insts else "?"))
            seen.add(b)
            best, best_v = None, 0
            for p in blk.preds:
                if self.outb[p] is None or p in seen:
                    continue
                v = an.bound(an.edge(p, b, self.outb[p], self.waits), c)
                if v > best_v:
                    best, best_v = p, v
            if best is None or len(path) > 12:
                break
            b, k = best, len(blocks[best].insts)
        where = " <- ".join(path)
        start = "function entry (caller's ops unknown)" if not an.sk.is_entry else "kernel entry"
        prods = ", ".join(str(x) for x in producers) or "none in this function"
        return f"path {where} <- {start}; producers on {c}: lines {prods}"
