"""Exact, path-based wait-count checker (issue 4): proves a placement safe on every path.

This module is written independently of the insertion pass: it shares only the instruction
classification (`analysis.classify`) and the IR.  It never uses `WaitDataflow`, its per-pred
queues, PHIs or the def-use builder.  Instead it *executes* the function symbolically along
concrete CFG paths, with one FIFO per counter holding the dynamic instances that are in flight,
exactly as the hardware counts them.  That is why it can confirm or refute what the solver
concludes with its abstractions (oldest-instance `countFrom`, saturation at 64, the tensor
freeze across back edges, promotion + finalize).

Hardware model
--------------
* One FIFO per counter (DS, Load, KM, Tensor, Async, classified by `classify_mem_op`).  A
  producer is appended when it issues; it is in flight until a wait retires it.
* ``s_wait_<c> N`` blocks until at most N ops of counter c are outstanding.  DS, Load, Tensor
  and Async complete **in order**, so the wait retires all but the N newest entries.  KM (scalar
  loads) completes **out of order**: ``s_wait_kmcnt 0`` retires every KM op, a non-zero
  ``s_wait_kmcnt N`` proves no particular op complete and retires nothing.
* Waits present in the input are honoured exactly like inserted ones, decoded literal first
  (as upstream does): ``s_wait_dscnt/loadcnt/kmcnt/tensorcnt/asynccnt N``; without a literal
  the modifier field (``mod.swaitcnt`` dlcnt/dscnt, vlcnt, kmcnt, ``mod.swaittensorcnt`` tlcnt,
  ``mod.swaitasynccnt`` asynccnt).  ``s_wait_loadcnt_dscnt`` and ``s_wait_storecnt_dscnt``
  (literal only) are split into their 6-bit fields ``(load << 8) | ds`` and ``(store << 8) | ds``.
  ``s_wait_storecnt``, ``s_wait_xcnt`` and legacy ``s_waitcnt`` retire nothing we track (gfx12
  ignores the legacy form; crediting nothing can only report more, never hide a violation).
* FIFOs are unbounded by default: an immediate cannot exceed 63, so a producer more than 64
  entries deep can only be retired by a wait of 63 (which retires everything but the 63 newest).
  ``hw_max_outstanding`` models an issue stall instead (the oldest op retires when a new one
  would exceed the limit); it is off by default because it is not documented for gfx1250.

Dependencies checked (the pass's promise, upstream-algorithm.md sections 3 and 7)
--------------------------------------------------------------------------------
Each instruction is checked just before it issues, after every wait that precedes it on the
path.  "Tagged" = carries ``mod.memtoken``; two token lists *overlap* when they share a token,
and an untagged side overlaps everything (disjointness cannot be proved).  Pseudo registers
``LDS<t>`` added by the implicit-dependency pass are ignored: tokens are read from the modifier,
so the checker gives the same answer before and after that pass.

``raw`` (register RAW)
    The consumer reads a 32-bit register unit whose most recent writer on this path is an async
    producer (its destination registers) that is still in flight.  Only the *reaching* writer
    counts, as with upstream's SSA sources: a later plain ALU write of the unit ends the
    dependency (write-after-write between an in-flight load and a later writer is not checked;
    upstream does not model it either).  There is no same-pipeline exemption (``ds_store``
    reading a ``ds_load``'s vreg needs the DS wait).  Also ``raw``: a tagged ``ds_load`` (or
    token-carrying barrier) reading token t whose reaching LDS writer is an in-flight tagged
    ``ds_store`` of t.  This is upstream's intended model (section 18.5); the in-order DS FIFO
    makes it unnecessary on hardware, so tightness reports will show it as over-drain.

``tensor-raw`` (tensor -> LDS RAW)
    A tagged ``tensor_load_to_lds`` writing token t must be complete before a *reader* of t whose
    reaching LDS definition it is.  Readers are tagged DS loads and token-carrying barriers
    (``s_barrier``, ``s_barrier_signal/wait -1``; not ``-3`` or named barriers).  A
    token-carrying barrier re-defines t, so a DS load after it depends on the barrier, not on
    the tensor load.  With ``NumWaves == 1`` every reader must see the load complete; otherwise
    only LDS-fence barriers (cross-wave visibility is the barrier's job), so a DS load reading
    an undrained tensor token without a barrier in between is *not* a violation in multi-wave
    kernels (upstream's policy, not hardware truth).
    Untagged fallbacks (not gated by NumWaves, as upstream): an untagged tensor anchor (any DS
    op or LDS-fence barrier) needs every in-flight tensor load complete; a tagged anchor needs
    every in-flight *untagged* tensor load complete.

``lds-war`` (LDS write-after-read)
    A ``tensor_load_to_lds`` writing token t may not issue while a DS read/atomic overlapping t
    is in flight.  A ``ds_store`` writer is exempt against DS ops (same in-order pipeline).
    Any LDS writer (tensor load or DS store) may not issue while an overlapping async op
    (``global_store_async_from_lds`` reads LDS) is in flight.

``barrier`` (barrier ordering)
    At an LDS-fence barrier (``s_barrier``, ``s_barrier_signal/wait`` except ``-3``) every
    in-flight DS op and async op overlapping the barrier's tokens must be complete.

Not modelled
------------
``mod.lds_ring`` and ``mod.loopcarriedwar`` / ``mod.loopcarriedraw`` (upstream branches B1/B2)
describe rotating LDS buffers: the same token names a different slot on each trip.  The checker
ignores them and treats every token as one fixed region, so on such kernels it can report a
dependency the ring rules out and miss one that only the annotation states.  The optional
tensor-descriptor WAR (``enable_tensor_descriptor_war``) and write-after-write hazards between
an in-flight load and a later writer of the same registers are not checked either.

Required wait, present wait
---------------------------
For a producer at index i of a FIFO with n entries (oldest first) the largest immediate that
retires it is ``n - i - 1`` (clamped to 63; always 0 for KM).  ``present`` is the immediate of
the last wait of that counter executed after the producer issued on the reported path (None
if there was none).

Path exploration
----------------
Depth-first over CFG paths from the first block.  Loops are bounded per loop *entry*: a block
that is the target of a retreating edge (DFS) may be executed at most ``max_trips`` times
between two entries from outside, so nested loops get ``max_trips`` inner trips per outer trip.
States are memoised at block entry: two paths reaching a block with the same in-flight FIFOs
(static instructions in order), the same in-flight reaching definitions and no more remaining
loop budget have the same future, so the second is not re-explored.  When a loop's state at its
header repeats, its later trips are therefore covered without unrolling; ``trip_cut`` tells
whether any path was still cut by ``max_trips``.  If the number of path ends exceeds
``max_paths`` (or the instruction steps exceed ``max_steps``) the search stops and the result is
``bounded``: violations on unexplored paths may be missing.  Only when neither ``bounded`` nor
``trip_cut`` is set is the result a proof for every execution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis.classify import (
    CK_ASYNC, CK_COUNT, CK_DS, CK_KM, CK_LOAD, CK_TENSOR, COUNTER_NAMES, K_MAX_WAIT_COUNT,
    WAIT_MNEMONIC, classify_mem_op, is_barrier, is_barrier_signal, is_barrier_wait, is_ds_atomic,
    is_ds_read, is_ds_store, is_lds_fence_barrier, is_out_of_order, is_tensor_anchor,
    is_tensor_load, is_wait,
)
from ..ir import Function, Imm, Instruction, Reg
from ..results import Options
from .paths import Coverage, TripMemo, block_successors, enter, retreating_edges

RULE_RAW = "raw"
RULE_TENSOR_RAW = "tensor-raw"
RULE_LDS_WAR = "lds-war"
RULE_BARRIER = "barrier"
#: a (consumer, producer) pair is reported once, under the first rule of this order that holds
RULES = (RULE_RAW, RULE_TENSOR_RAW, RULE_LDS_WAR, RULE_BARRIER)

_N_COUNTERS = CK_COUNT
Unit = tuple[str, int]


@dataclass(eq=False, slots=True)
class Violation:
    """A dependency that is not satisfied on at least one path.

    `required` is the largest immediate of `s_wait_<counter>` placed right before `consumer`
    that would make the path safe; `present` the last wait of that counter executed after the
    producer on the path (None: no wait at all).  `path` lists block labels from the entry to
    the consumer's block; `detail` names what links the two (a register unit or a token).
    """

    rule: str
    counter: int
    consumer: Instruction
    producer: Instruction
    required: int
    present: int | None
    path: tuple[str, ...]
    detail: str
    function: str = ""

    @property
    def counter_name(self) -> str:
        return COUNTER_NAMES[self.counter]

    @property
    def wait_mnemonic(self) -> str:
        return WAIT_MNEMONIC[self.counter]

    def key(self) -> tuple[int, int, str, int]:
        """Identity of the static dependency (one report per pair, rule and counter)."""
        return (id(self.consumer), id(self.producer), self.rule, self.counter)


@dataclass(slots=True)
class CheckResult(Coverage):
    """Outcome of `check_function`.

    `bounded` = the search stopped at `max_paths`/`max_steps`; `trip_cut` = some path was cut
    by `max_trips` (later trips were not examined).  `complete` is True only when neither
    happened, i.e. the absence of violations is a proof for every execution.
    """

    function: str
    violations: list[Violation] = field(default_factory=list)
    paths: int = 0
    states: int = 0
    steps: int = 0
    bounded: bool = False
    trip_cut: bool = False
    max_trips: int = 2
    max_paths: int = 0


@dataclass(slots=True)
class _Entry:
    """One dynamic instance of a producer in flight."""

    seq: int
    inst: Instruction
    counter: int
    sid: int


@dataclass(slots=True)
class _State:
    """Everything about a path prefix that determines its future."""

    fifos: list[list[int]]
    entries: dict[int, _Entry]
    reg_def: dict[Unit, int]
    lds_def: dict[int, int]
    last_wait: list[tuple[int, int] | None]
    trips: dict[int, int]
    next_seq: int

    def copy(self) -> "_State":
        return _State([list(f) for f in self.fifos], dict(self.entries), dict(self.reg_def),
                      dict(self.lds_def), list(self.last_wait), dict(self.trips), self.next_seq)


@dataclass(frozen=True, slots=True)
class _Config:
    num_waves: int
    max_trips: int
    max_paths: int
    max_steps: int
    hw_max_outstanding: int | None
    async_store_reads_lds: bool
    memoize: bool = True


# --------------------------------------------------------------------------- wait decoding

def _mod_field(inst: Instruction, kind: str, *names: str) -> int | None:
    """The strictest non-negative value among the named fields of one modifier."""
    mod = inst.mods.get(kind)
    if mod is None:
        return None
    vals = [v for n in names if isinstance(v := mod.get(n), int) and not isinstance(v, bool) and v >= 0]
    return min(vals) if vals else None


def wait_effects(inst: Instruction) -> dict[int, int]:
    """Counter -> immediate for a wait instruction, as the hardware applies it.

    Literal first, modifier fields as a fallback (a STIR wait may carry only the modifier).
    Returns an empty dict for waits on counters we do not track and for non-waits.
    """
    mn = inst.mnemonic
    lit = inst.first_literal()
    single = {"s_wait_dscnt": (CK_DS, "swaitcnt", ("dlcnt", "dscnt")),
              "s_wait_loadcnt": (CK_LOAD, "swaitcnt", ("vlcnt",)),
              "s_wait_kmcnt": (CK_KM, "swaitcnt", ("kmcnt",)),
              "s_wait_tensorcnt": (CK_TENSOR, "swaittensorcnt", ("tlcnt",)),
              "s_wait_asynccnt": (CK_ASYNC, "swaitasynccnt", ("asynccnt",))}
    if mn in single:
        c, kind, names = single[mn]
        v = lit if lit is not None else _mod_field(inst, kind, *names)
        return {c: v} if v is not None and v >= 0 else {}
    if mn == "s_wait_loadcnt_dscnt" and lit is not None and lit >= 0:
        return {CK_LOAD: (lit >> 8) & 0x3F, CK_DS: lit & 0x3F}
    if mn == "s_wait_storecnt_dscnt" and lit is not None and lit >= 0:
        return {CK_DS: lit & 0x3F}
    return {}


# --------------------------------------------------------------------------- LDS token roles

def _first_src_literal(inst: Instruction) -> int | None:
    if inst.srcs and isinstance(inst.srcs[0], Imm):
        return inst.srcs[0].value
    return None


def is_token_barrier(inst: Instruction) -> bool:
    """A tagged barrier that reads and re-defines its LDS tokens (section 3.1 / formats s.7).

    `s_barrier_signal/wait` qualify only with the all-waves id -1; `-3` (cluster) and named
    barriers keep their tokens for the ordering scan but define nothing.
    """
    if not is_barrier(inst) or not inst.tokens:
        return False
    if is_barrier_signal(inst) or is_barrier_wait(inst):
        return _first_src_literal(inst) == -1
    return True


def _overlap(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> bool:
    """Untagged (None) aliases everything; an empty tag list is treated as untagged too."""
    if not a or not b:
        return True
    return bool(set(a) & set(b))


def _reads_tokens(inst: Instruction, cfg: _Config) -> tuple[int, ...]:
    toks = inst.tokens
    if not toks:
        return ()
    if is_ds_read(inst) or is_token_barrier(inst):
        return toks
    if cfg.async_store_reads_lds and inst.mnemonic.startswith("global_store_async_from_lds"):
        return toks
    return ()


def _reg_units(ops: list) -> list[Unit]:
    out: list[Unit] = []
    for op in ops:
        if isinstance(op, Reg) and op.kind != "LDS":
            out.extend(op.units())
    return out


# --------------------------------------------------------------------------- the walker

class _Checker:
    """Depth-first symbolic execution of one function (see the module docstring)."""

    def __init__(self, func: Function, cfg: _Config):
        self.func = func
        self.cfg = cfg
        self.blocks = list(func.blocks)
        self.succs = block_successors(self.blocks)
        self.sid: dict[int, int] = {}
        for k, inst in enumerate(func.instructions()):
            self.sid[id(inst)] = k
        self.retreating = retreating_edges(self.succs)
        self.headers = {v for (_, v) in self.retreating}
        self.memo = TripMemo(cfg.memoize)
        self.found: dict[tuple[int, int, str, int], Violation] = {}
        self.order: list[tuple[int, int, str, int]] = []
        self.result = CheckResult(function=func.name, max_trips=cfg.max_trips, max_paths=cfg.max_paths)

    # ---- state canonicalisation for memoisation

    def _canon(self, bi: int, st: _State) -> tuple:
        pos: dict[int, tuple[int, int]] = {}
        fifo_key = []
        for c, fifo in enumerate(st.fifos):
            seqs = sorted(fifo, key=lambda s: (st.entries[s].sid, s)) if is_out_of_order(c) else fifo
            for i, s in enumerate(seqs):
                pos[s] = (c, i)
            fifo_key.append(tuple(st.entries[s].sid for s in seqs))
        regs = tuple(sorted((u, pos[s]) for u, s in st.reg_def.items() if s in pos))
        lds = tuple(sorted((t, pos[s]) for t, s in st.lds_def.items() if s in pos))
        return (bi, tuple(fifo_key), regs, lds)

    def _seen(self, bi: int, st: _State) -> bool:
        """An explored state at this block had the same future and more budget (checked
        before the trip bound, so a loop whose header state repeats is closed by memoisation
        instead of being reported as cut)."""
        return self.memo.seen(self._canon(bi, st), st.trips)

    # ---- per-instruction semantics

    def _retire_to(self, st: _State, c: int, keep: int) -> None:
        fifo = st.fifos[c]
        if is_out_of_order(c):
            if keep == 0:
                for s in fifo:
                    st.entries.pop(s, None)
                fifo.clear()
            return
        drop = len(fifo) - max(keep, 0)
        if drop > 0:
            for s in fifo[:drop]:
                st.entries.pop(s, None)
            del fifo[:drop]

    def _required(self, st: _State, e: _Entry) -> int:
        if is_out_of_order(e.counter):
            return 0
        fifo = st.fifos[e.counter]
        return min(len(fifo) - fifo.index(e.seq) - 1, K_MAX_WAIT_COUNT)

    def _report(self, st: _State, inst: Instruction, e: _Entry, rule: str, detail: str,
                path: tuple[str, ...]) -> None:
        lw = st.last_wait[e.counter]
        present = lw[0] if lw is not None and lw[1] > e.seq else None
        v = Violation(rule=rule, counter=e.counter, consumer=inst, producer=e.inst,
                      required=self._required(st, e), present=present, path=path,
                      detail=detail, function=self.func.name)
        k = v.key()
        old = self.found.get(k)
        if old is None:
            self.found[k] = v
            self.order.append(k)
        elif v.required < old.required:
            self.found[k] = v

    def _check(self, st: _State, inst: Instruction, path: tuple[str, ...]) -> None:
        """Report every in-flight producer `inst` depends on (one rule per producer)."""
        cfg = self.cfg
        hits: dict[int, tuple[str, str]] = {}

        def hit(seq: int, rule: str, detail: str) -> None:
            old = hits.get(seq)
            if old is None or RULES.index(rule) < RULES.index(old[0]):
                hits[seq] = (rule, detail)

        for u in _reg_units(inst.srcs):
            s = st.reg_def.get(u)
            if s is not None and s in st.entries:
                hit(s, RULE_RAW, f"{u[0]}{u[1]}")
        for t in _reads_tokens(inst, cfg):
            s = st.lds_def.get(t)
            if s is None or s not in st.entries:
                continue
            e = st.entries[s]
            if e.counter == CK_DS and is_barrier(inst):
                continue  # the barrier-ordering rule below reports the same requirement
            if e.counter == CK_TENSOR:
                if cfg.num_waves == 1 or is_lds_fence_barrier(inst):
                    hit(s, RULE_TENSOR_RAW, f"LDS token {t}")
            else:
                hit(s, RULE_RAW, f"LDS token {t}")
        toks = inst.tokens or None
        if is_tensor_anchor(inst):
            for s in st.fifos[CK_TENSOR]:
                e = st.entries[s]
                if toks is None or not e.inst.tokens:
                    hit(s, RULE_TENSOR_RAW, "untagged LDS access (may alias any token)")
        writer = is_tensor_load(inst) or is_ds_store(inst)
        if is_tensor_load(inst):
            for s in st.fifos[CK_DS]:
                e = st.entries[s]
                if (is_ds_read(e.inst) or is_ds_atomic(e.inst)) and _overlap(toks, e.inst.tokens):
                    hit(s, RULE_LDS_WAR, _tok_detail(toks, e.inst.tokens))
        if writer:
            for s in st.fifos[CK_ASYNC]:
                e = st.entries[s]
                if _overlap(toks, e.inst.tokens):
                    hit(s, RULE_LDS_WAR, _tok_detail(toks, e.inst.tokens))
        if is_lds_fence_barrier(inst):
            for c in (CK_DS, CK_ASYNC):
                for s in st.fifos[c]:
                    e = st.entries[s]
                    if _overlap(toks, e.inst.tokens):
                        hit(s, RULE_BARRIER, _tok_detail(toks, e.inst.tokens))
        for s, (rule, detail) in hits.items():
            self._report(st, inst, st.entries[s], rule, detail, path)

    def _execute(self, st: _State, inst: Instruction, path: tuple[str, ...]) -> None:
        if inst.is_label or inst.is_phi:
            return
        if is_wait(inst):
            for c, v in wait_effects(inst).items():
                self._retire_to(st, c, v)
                st.last_wait[c] = (v, st.next_seq)
                st.next_seq += 1
            return
        self._check(st, inst, path)
        c = classify_mem_op(inst)
        seq = st.next_seq
        st.next_seq += 1
        for u in _reg_units(inst.dsts):
            if c != CK_COUNT:
                st.reg_def[u] = seq
            else:
                st.reg_def.pop(u, None)
        toks = inst.tokens
        if toks:
            if c != CK_COUNT and (is_tensor_load(inst) or is_ds_store(inst)):
                for t in toks:
                    st.lds_def[t] = seq
            elif is_token_barrier(inst):
                for t in toks:
                    st.lds_def.pop(t, None)
        if c != CK_COUNT:
            cap = self.cfg.hw_max_outstanding
            if cap is not None and not is_out_of_order(c) and len(st.fifos[c]) >= cap:
                self._retire_to(st, c, cap - 1)
            st.fifos[c].append(seq)
            st.entries[seq] = _Entry(seq, inst, c, self.sid.get(id(inst), -1))

    # ---- driver

    def run(self) -> CheckResult:
        res = self.result
        if not self.blocks:
            return res
        init = _State([[] for _ in range(_N_COUNTERS)], {}, {}, {}, [None] * _N_COUNTERS, {}, 0)
        if 0 in self.headers:
            init.trips[0] = 1
        work: list[tuple[int, _State, tuple[str, ...]]] = [(0, init, ())]
        while work:
            bi, st, path = work.pop()
            if self._seen(bi, st):
                res.paths += 1
                continue
            if st.trips.get(bi, 0) > self.cfg.max_trips:
                res.trip_cut = True
                res.paths += 1
                continue
            res.states += 1
            block = self.blocks[bi]
            path = path + (block.label,)
            for inst in block.instrs:
                self._execute(st, inst, path)
            res.steps += len(block.instrs)
            succs = self.succs[bi]
            if not succs:
                res.paths += 1
            nexts: list[tuple[int, _State, tuple[str, ...]]] = []
            for k, v in enumerate(succs):
                nst = st if k == len(succs) - 1 else st.copy()
                enter(nst.trips, bi, v, self.headers, self.retreating)
                nexts.append((v, nst, path))
            # push in reverse so the first successor is explored first (deterministic reports)
            work.extend(reversed(nexts))
            if res.paths > self.cfg.max_paths or res.steps > self.cfg.max_steps:
                res.bounded = True
                break
        res.violations = sorted((self.found[k] for k in self.order),
                                key=lambda v: (v.consumer.line, v.producer.line, RULES.index(v.rule), v.counter))
        return res


def _tok_detail(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> str:
    if not a or not b:
        return "untagged LDS access (may alias any token)"
    common = sorted(set(a) & set(b))
    return "LDS token " + ",".join(str(t) for t in common)


# --------------------------------------------------------------------------- public API

def check_function(func: Function, options: Options | None = None, max_trips: int = 2,
                   max_paths: int = 20000, max_steps: int = 2_000_000,
                   hw_max_outstanding: int | None = None,
                   async_store_reads_lds: bool = True, memoize: bool = True) -> CheckResult:
    """Check every dependency of `func` on every path (see the module docstring).

    `options.num_waves` selects the tensor RAW policy (1 = drain at each reader, otherwise at
    LDS-fence barriers).  `async_store_reads_lds` treats a tagged async store as an LDS reader
    (what the implicit-dependency pass does, spec-notes.md).  `memoize=False` enumerates every
    path literally; it exists so tests can confirm that memoisation loses nothing.  The
    function is not modified.
    """
    opts = options or Options()
    cfg = _Config(num_waves=opts.num_waves, max_trips=max(1, max_trips), max_paths=max_paths,
                  max_steps=max_steps, hw_max_outstanding=hw_max_outstanding,
                  async_store_reads_lds=async_store_reads_lds, memoize=memoize)
    return _Checker(func, cfg).run()


def check_module(module, options: Options | None = None, **kwargs) -> list[CheckResult]:
    """`check_function` over every function of a parsed module, in file order."""
    return [check_function(f, options, **kwargs) for f in module.functions]


_RULE_TEXT = {RULE_RAW: "reads the result of", RULE_TENSOR_RAW: "reads LDS written by",
              RULE_LDS_WAR: "overwrites LDS still being read by",
              RULE_BARRIER: "is a barrier that must order"}


def _loc(inst: Instruction) -> tuple[int, int]:
    if inst.span is None:
        return (0, 0)
    return (inst.span.line, inst.span.col)


def format_violation(v: Violation, path: str, names: Any = None, function: str = "") -> str:
    """Compiler-style report: an ``error`` line at the consumer, a ``note`` at the producer,
    and the CFG path that exposes the violation.
    """
    line, col = _loc(v.consumer)
    pline, pcol = _loc(v.producer)
    present = f"{v.wait_mnemonic} {v.present}" if v.present is not None else "no wait"
    head = (f"{path}:{line}:{col}: error: {v.consumer.mnemonic} {_RULE_TEXT[v.rule]} "
            f"{v.producer.mnemonic} (line {pline}) still in flight on {v.counter_name} "
            f"[{v.detail}]: needs {v.wait_mnemonic} {v.required} or lower before it, "
            f"found {present} [{v.rule}]")
    note = f"{path}:{pline}:{pcol}: note: producer issued here"
    route = "  path: " + " -> ".join(f"^{lab}" if names is None else names.block(function, lab) for lab in v.path)
    return "\n".join((head, note, route))


def format_result(res: CheckResult, path: str, names: Any = None) -> str:
    """All violations of one function plus the bounded/trip notice (empty when clean);
    `names` (`ir.block_names.BlockNames`): the path's blocks as the source names them."""
    parts = [format_violation(v, path, names, res.function) for v in res.violations]
    if res.notice:
        parts.append(f"{path}: note: @{res.function}: {res.notice}")
    return "\n".join(parts)
