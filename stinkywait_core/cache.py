"""The analysis cache: one document's functions carried from one version to the next.

`AnalysisCache` (one per document in the language server, bounded LRU) keeps, per function,
a `Chain`: the function's own IR, into which every new version's parse is *adopted*
(`adopt`: unchanged instructions stay the same objects), the last plan and the
`FunctionMemo` of the incremental re-plan (waitcnt/incremental.py).  The front door
(`api.analyze`) decides what to re-plan from what `adopt` found; nothing here plans.
"""

from __future__ import annotations

from collections import OrderedDict
from operator import attrgetter
TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Any

    from .results import Options
    from .waitcnt.pipeline import PassOutput

from .ir import Function, Instruction, Module
from .waitcnt.incremental import FunctionMemo

_SPAN = attrgetter("span")


class Chain:
    """One function's analyses over the versions of a document (incremental re-planning).

    `func` is the chain's own Function: every new version's parse is *adopted* into it
    (unchanged instructions stay the same objects, `adopt`), so the memo's records, keyed and
    compared by instruction identity, stay valid from one version to the next.
    """

    __slots__ = ("func", "raw", "analysed", "po", "removed", "memo", "spans", "block_spans", "shape")

    def __init__(self, func: Function, memo: FunctionMemo):
        self.func = func
        #: the blocks' instructions as parsed (before replace_waits stripping and PHIs)
        self.raw: list[list[Instruction]] = [list(b.instrs) for b in func.blocks]
        #: the blocks' instructions as analysed (stripped, PHIs removed): restored on a plan hit
        self.analysed: list[list[Instruction]] = []
        self.po: PassOutput | None = None
        self.removed: list[int] = []
        self.memo = memo
        #: every instruction's span when last analysed (to tell which ones moved), and the
        #: same per block, aligned with `raw` (an unchanged block is checked in one compare)
        self.spans: dict = {inst: inst.span for b in func.blocks for inst in b.instrs}
        self.block_spans: list[list] = [list(map(_SPAN, b.instrs)) for b in func.blocks]
        #: the CFG's shape (`_shape`), which adoption keeps (else the chain starts afresh)
        self.shape = _shape(func)


class AnalysisCache:
    """Per-function plan cache (bounded LRU); one per document in a long-lived process.

    Keyed by (path, function, options); a function the latest version of its document lost
    is dropped.  A version whose function is unchanged (layout-only
    edits included) reuses the last plan outright; any other version is re-planned
    incrementally from the last one (waitcnt/incremental.py).  Only the latest version of a
    function is kept: the Function objects of an older Analysis made with the same cache
    are adopted (mutated) by the newer one, so an Analysis is only valid until the next
    `analyze` of the same document with the same cache.
    """

    def __init__(self, size: int = 64):
        self.size = size
        self._d: OrderedDict[tuple, Chain] = OrderedDict()
        #: (path, options) -> the last Module parsed (the front end's incremental re-parse)
        self._modules: OrderedDict[tuple, Module] = OrderedDict()
        #: id(PlannedWait) -> (wait, anchor line length, its insertion, missing-wait diagnostic)
        self.review_memo: dict[int, tuple] = {}
        #: function name -> the last review's verdict on its offered changes (review_reuse.py)
        self.review_verdicts: dict[str, Any] = {}
        #: the review's own cache for its trial re-plans (review.py `_plan_verified`), kept so
        #: the next version's trials re-plan incrementally from this version's
        self.review_scratch: AnalysisCache | None = None

    def module(self, path: str, options: Options) -> Module | None:
        return self._modules.get((path, options))

    def set_module(self, path: str, options: Options, module: Module) -> None:
        self._bounded_put(self._modules, (path, options), module)

    def get(self, key: tuple) -> Chain | None:
        v = self._d.get(key)
        if v is not None:
            self._d.move_to_end(key)
        return v

    def drop(self, key: tuple) -> None:
        self._d.pop(key, None)

    def put(self, key: tuple, value: Chain) -> None:
        self._bounded_put(self._d, key, value)

    def _bounded_put(self, table: OrderedDict, key: tuple, value: object) -> None:
        """Insert as most recent; evict the least recently used beyond `size`."""
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.size:
            table.popitem(last=False)

    def keep_only(self, options: Options) -> int:
        """Drop every chain and parsed module made under other options (the review's
        wait-stripped analysis keeps a second copy of every function: about as much memory
        as the plan's own); returns how many entries went."""
        n = 0
        if self.review_scratch is not None:  # (the review's trial re-plans: made again when asked)
            self.review_scratch = None
            n += 1
        for table, at in ((self._d, 2), (self._modules, 1)):
            for key in [k for k in table if k[at] != options]:
                del table[key]
                n += 1
        return n

    def retain(self, path: str, options: Options, names: set) -> None:
        """Drop the chains of functions the document no longer has (renamed or deleted
        kernels): a chain holds a whole function's plan.  `names`: the chains' keys (a
        function's name, or (name, n) for its n-th repetition in the file)."""
        for key in [k for k in self._d if k[0] == path and k[2] == options and k[1] not in names]:
            del self._d[key]


_LABEL = attrgetter("label")
_SUCC_LABELS = attrgetter("succ_labels")


def _shape(func: Function) -> tuple[list, list]:
    """The blocks' labels and successor labels (two C-level passes: 3,750 blocks per edit)."""
    blocks = func.blocks
    return list(map(_LABEL, blocks)), list(map(_SUCC_LABELS, blocks))


def _ops_extend(old: list, new: list) -> bool:
    """`old` is `new` plus LDS pseudo registers appended by the implicit-dependency pass."""
    n = len(new)
    return old[:n] == new and all(getattr(op, "kind", None) == "LDS" for op in old[n:])


def _same_instruction(old: Instruction, new: Instruction) -> bool:
    return old is new or (
        old.text == new.text and old.mnemonic == new.mnemonic and old.is_label == new.is_label
        and old.suffix == new.suffix and old.mods == new.mods
        and (old.dsts == new.dsts or _ops_extend(old.dsts, new.dsts))
        and (old.srcs == new.srcs or _ops_extend(old.srcs, new.srcs)))


class _Adoption:
    """What `adopt` found: the function; `fresh`, how many instructions are new, removed
    or moved and blocks or the function moved (0: same plan); `moved`, how many kept
    instructions (or blocks, the function) changed position; `changed_blocks`, the blocks
    whose instruction list changed; `dropped`, the previous version's instructions that are
    gone."""

    __slots__ = ("func", "fresh", "moved", "changed_blocks", "dropped")

    def __init__(self, func: Function):
        self.func = func
        self.fresh = 0
        self.moved = 0
        self.changed_blocks: set = set()
        self.dropped: list = []


def adopt(chain: Chain, new: Function) -> _Adoption | None:
    """Turn the chain's function into `new`, keeping every unchanged instruction object.

    Per block, the longest common prefix and suffix of the old and new instruction lists
    are matched (an edit is local); matched old instructions take the new positions, the
    rest are the new parse's objects.  Returns None when the CFG's shape changed (blocks,
    labels, successors): the caller then starts a new chain.
    """
    func = chain.func
    if func.name != new.name or len(func.blocks) != len(new.blocks) or chain.shape != _shape(new):
        return None
    raw: list[list[Instruction]] = []
    block_spans: list[list] = []
    res = _Adoption(func)
    spans = chain.spans  # (updated in place: only the changed and moved blocks' entries)
    for ob, nb, olds, ospans in zip(func.blocks, new.blocks, chain.raw, chain.block_spans):
        news = nb.instrs
        if news == olds:  # the front end already reused every instruction (identity)
            merged = news
            # (their block: a plain loop, 4x faster than map(setattr) on 8-instruction blocks;
            # their spans against last time's in one C-level pass)
            for inst in merged:
                inst.block = ob
            now = list(map(_SPAN, merged))
            if now != ospans:
                for inst, sp, before in zip(merged, now, ospans):
                    if sp != before:
                        res.moved += 1
                        spans[inst] = sp
            ob.instrs = merged
            block_spans.append(now)
            if ob.span != nb.span or ob.succ_span != nb.succ_span:  # (`_adopt_block_span`, inline)
                res.moved += 1
                ob.span, ob.succ_span = nb.span, nb.succ_span
            raw.append(list(merged))
            continue
        n = min(len(olds), len(news))
        i = 0
        while i < n and _same_instruction(olds[i], news[i]):
            i += 1
        j = 0
        while j < n - i and _same_instruction(olds[-1 - j], news[-1 - j]):
            j += 1
        merged = list(news)
        if len(news) + len(olds) - 2 * (i + j):  # added and removed
            res.fresh += len(news) + len(olds) - 2 * (i + j)
            res.changed_blocks.add(ob)
            res.dropped.extend(olds[i:len(olds) - j])
        for k in range(i):
            merged[k] = _move(olds[k], news[k])
        for k in range(1, j + 1):
            merged[-k] = _move(olds[-k], news[-k])
        # a kept instruction moved if its span differs from the one it had last time (the
        # front end may already have repositioned it in place)
        for inst in merged:
            inst.block = ob
            sp = inst.span
            before = spans.get(inst)
            if before is not None and before != sp:
                res.moved += 1
            spans[inst] = sp
        ob.instrs = merged
        block_spans.append(list(map(_SPAN, merged)))
        _adopt_block_span(res, ob, nb)
        raw.append(list(merged))
    if res.dropped:  # (an instruction may leave one block for another: still in some block)
        for inst in res.dropped:
            if inst.block is None or inst not in inst.block.instrs:
                spans.pop(inst, None)
    if func.span != new.span or func.name_span != new.name_span:
        res.moved += 1
        func.span, func.name_span = new.span, new.name_span
    chain.raw = raw
    chain.block_spans = block_spans
    res.fresh += res.moved
    return res


def _adopt_block_span(res: _Adoption, ob, nb) -> None:
    """The block takes the new parse's position (a move counts as one)."""
    if ob.span != nb.span or ob.succ_span != nb.succ_span:
        res.moved += 1
        ob.span, ob.succ_span = nb.span, nb.succ_span


def _move(old: Instruction, new: Instruction) -> Instruction:
    """Give `old` the position (and comment) of its unchanged twin from the new parse."""
    if old is not new:
        old.span, old.text, old.comment, old.cycles = new.span, new.text, new.comment, new.cycles
    return old
