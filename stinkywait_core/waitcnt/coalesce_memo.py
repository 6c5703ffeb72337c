"""CoalesceWaits across versions of a function: each run's fold reused while its inputs hold.

CoalesceWaits (coalesce.py) folds waits run by run (`fall_through_runs`), moving one wave
through the function in layout order.  A run's fold is a function of its instructions and
their facts, its planned waits (the finalized plan), the wave's state at its start relative
to the clock (`wave_key`) and the CFG (which blocks are in loops).  After a one-line edit of a
30k-line kernel nearly every run is the same as last time, so the fold is reused run by run
(`BlockFold`) and the wave is not walked at all while the records hold.

Two checks decide that a run's record holds (docs: BENCHMARKS "The 30k edit, round 3"):
- identity (cheap, no per-instruction work): every block of the run has the same block
  signature object (`WaitDataflow.block_sig`: its walked instructions and their facts) and the
  same finalize record object (`FunctionMemo.final_blocks`: same entry state, same solver
  plan, hence the same finalized waits) as when the record was made;
- content (when finalize replayed without its block records: promotion relaxed a join, a
  widened or per-producer solve): the run's instructions and the specs of its waits compare
  equal to the record's.
Either way the wave's state at the run's start must equal the record's.

The run cut and the loop membership (`fall_through_runs`, `_in_loops` of coalesce.py, passed in)
are kept too: while the CFG object is the one they were cut from and every block's signature
is the same object (a block's terminator and its facts are among them), they are the same.
"""

from __future__ import annotations

from operator import is_

from ..targets.model import CK_DS

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Any, Callable

    from .stall import Wave


class BlockFold:
    """One run's CoalesceWaits walk (`fall_through_runs`), by its inputs (its instructions, its
    planned waits and the wave's state at its start, relative to the clock: `wave_key`; for the
    identity check, its blocks' signatures and finalize records) and outputs (its waits after
    folding, `kept`, and the anchors whose wait went, `gone`; what each kept anchor took over;
    the wave's state at its end and how far the clock moved)."""

    __slots__ = ("instrs", "specs", "entry", "exit", "dt", "kept", "gone", "merged", "sigs", "finals")

    def __init__(self, instrs: list, specs: dict, entry: tuple, exit_: tuple, dt: float, kept: dict,
                 gone: list, merged: dict, sigs: list, finals: list) -> None:
        self.instrs, self.specs, self.entry, self.exit, self.dt = instrs, specs, entry, exit_, dt
        self.kept, self.gone, self.merged = kept, gone, merged
        self.sigs, self.finals = sigs, finals


class RunLayout:
    """The runs of blocks and the blocks in loops, with what they were derived from: the CFG
    object, each block's signature object and whether it lets a run go on (`falls`)."""

    __slots__ = ("cfg", "sigs", "falls", "runs", "looped")

    def __init__(self, cfg: Any, sigs: list, falls: list, runs: list, looped: set) -> None:
        self.cfg, self.sigs, self.falls, self.runs, self.looped = cfg, sigs, falls, runs, looped


def run_layout(df: Any, memo: Any, falls_on: Callable[[Any], bool], cut: Callable[[list | None], list],
               loops: Callable[[], set]) -> tuple[list, set]:
    """(runs, blocks in loops) of `df`'s function, kept in `memo.coalesce_layout` (`memo` None:
    always made).  `falls_on(block)`: whether a run may go on past the block (its terminator's
    kind); `cut(falls)`: the runs from every block's answer (coalesce.fall_through_runs);
    (None: ask `falls_on` where needed); `loops()`: the blocks in loops (coalesce._in_loops).  The loops are made again only for
    another CFG object; the runs only when a block whose signature object changed (an edited
    block: its terminator and facts are in its signature) answers `falls_on` otherwise."""
    blocks = df.func.blocks
    if memo is None:
        return cut(None), loops()
    get = df.block_sig.get
    sigs = [get(b) for b in blocks]
    old = memo.coalesce_layout
    if old is None or old.cfg is not df.cfg or len(old.sigs) != len(sigs):
        falls = [falls_on(b) for b in blocks]
        out = memo.coalesce_layout = RunLayout(df.cfg, sigs, falls, cut(falls), loops())
        return out.runs, out.looped
    same = list(map(is_, old.sigs, sigs))
    falls = old.falls
    i = -1
    fresh = False
    while True:
        try:
            i = same.index(False, i + 1)
        except ValueError:
            break
        f = falls_on(blocks[i])
        if f != falls[i]:
            if not fresh:
                falls = list(falls)
                fresh = True
            falls[i] = f
    runs = cut(falls) if fresh else old.runs
    memo.coalesce_layout = RunLayout(df.cfg, sigs, falls, runs, old.looped)
    return runs, old.looped


def fold_with_memo(fold: Any, runs: list, df: Any, prev: dict, folds: dict) -> None:
    """CoalesceWaits over the runs with the last version's records (`prev`, by a run's first
    block; this version's go to `folds`): while they hold, the wave is not walked at all (its
    state is carried as a key and a clock)."""
    wave = fold.wave
    anchors = fold.anchors
    in_order_ds = fold.in_order_ds
    key, t = wave_key(wave, in_order_ds), wave.t
    sig_get = df.block_sig.get
    memo = df.memo
    final_get = memo.final_blocks.get if memo is not None else (lambda b: None)
    if memo is not None:
        memo.folds_made = folds is memo.folds
    live = True  # the Wave object holds the state (else `key` and `t` do)
    for run in runs:
        b = run[0]
        if len(run) == 1:
            sigs, finals = [sig_get(b)], [final_get(b)]
        else:
            sigs, finals = [sig_get(r) for r in run], [final_get(r) for r in run]
        rec = prev.get(b)
        if live:
            key, t = wave_key(wave, in_order_ds), wave.t
        if rec is not None and same_objects(rec, sigs, finals) and rec.entry == key:
            _reuse(rec, anchors, fold, folds, b)
            if memo is not None:
                memo.reused_folds += 1
            key, t = rec.exit, t + rec.dt
            live = False
            continue
        mine = [(inst, anchors[inst]) for r in run for inst in r.instrs if inst in anchors]
        specs = {inst: tuple(spec) for inst, spec in mine}
        instrs = [inst for r in run for inst in r.instrs]
        if rec is not None and rec.entry == key and rec.specs == specs and rec.instrs == instrs:
            _reuse(rec, anchors, fold, folds, b)
            rec.sigs, rec.finals = sigs, finals  # (the same inputs by content: the identity check's next time)
            key, t = rec.exit, t + rec.dt
            live = False
            continue
        if not live:
            set_wave(wave, key, t)
            live = True
        before = set(fold.merged)
        by_block: dict = {}
        for inst, spec in mine:
            by_block.setdefault(inst.block, []).append((inst, spec))
        fold.run(run, by_block)
        kept = {inst: anchors[inst] for inst, _ in mine if inst in anchors}
        gone = [inst for inst, _ in mine if inst not in anchors]
        exit_key = wave_key(wave, in_order_ds)
        folds[b] = BlockFold(instrs, specs, key, exit_key, wave.t - t, kept, gone,
                             {a: m for a, m in fold.merged.items() if a not in before}, sigs, finals)


def same_objects(rec: BlockFold, sigs: list, finals: list) -> bool:
    """The run's blocks have the signature and finalize record objects the record was made
    with (a block without a finalize record never matches)."""
    old_s, old_f = rec.sigs, rec.finals
    if len(old_s) != len(sigs) or None in finals or None in sigs:
        return False
    return all(map(is_, old_s, sigs)) and all(map(is_, old_f, finals))


def _reuse(rec: BlockFold, anchors: dict, fold: Any, folds: dict, b: Any) -> None:
    """Put a run record's folded waits into the plan (the kept waits' lists are the record's
    own: the plan is only read after CoalesceWaits, and the next version's fold copies a wait
    before it changes it)."""
    anchors.update(rec.kept)
    for inst in rec.gone:
        del anchors[inst]
    if rec.merged:
        fold.merged.update(rec.merged)
    folds[b] = rec


def wave_key(wave: Wave, in_order_ds: bool) -> tuple:
    """The wave's state relative to its clock, without what can no longer matter: ops already
    complete (an in-order timeline's completions are sorted, so a complete one is never the
    LDS queue's depth-th youngest either; out of order, the LDS list is kept whole), a last
    in-order completion or a matrix pipe already past."""
    t = wave.t
    fl = []
    for ck, lst in wave.inflight.items():
        rel = tuple([c - t for c in lst]) if ck == CK_DS and not in_order_ds else tuple([c - t for c in lst if c > t])
        if rel:
            fl.append((ck, rel))
    fl.sort()
    ld = sorted((ck, v - t) for ck, v in wave.last_done.items() if v > t)
    return (tuple(fl), tuple(ld), wave.xdl_free - t if wave.xdl_free > t else None)


def set_wave(wave: Wave, key: tuple, t: float) -> None:
    """Give `wave` the state `key` (wave_key) with its clock at `t`."""
    fl, ld, xdl = key
    wave.t = t
    wave.inflight = {ck: [t + r for r in rel] for ck, rel in fl}
    wave.last_done = {ck: t + r for ck, r in ld}
    wave.xdl_free = t + xdl if xdl is not None else t
