"""One block as the satisfied-wait drop sees it (satisfied.py, decision 54): made once per
block content, reused across versions while that content is the same objects.

Why a record: the drop needs, per hardware counter, the block as a function of the bound at
its entry (the fixed point's transfer) and, at each planned wait, the bound right before it
as a function of that same entry bound (the drop test).  Both are affine in the min/+ sense:
x -> min(x + add, top), `add` the ops the block (or its prefix) pushes on the counter, `top`
what its waits leave plus the pushes after them.  Computing them is the only per-instruction
work of the drop; after a one-line edit of bench_lsp's 30k-line kernel 3,749 of 3,750 blocks
have the same instructions, facts and planned waits, so their records are reused whole and no
instruction of theirs is looked at.

When a record holds: the block's signature (`WaitDataflow.block_sig`: its walked instructions
in order and their fact objects) is the object the record was made from, and every planned
wait of the block (before the drop) equals the record's copy.  Labels and PHIs, which the
signature leaves out, change no bound.  The target (hand-written waits are decoded through
it) is checked by the caller (`SatisfiedState.applies`).

The bound right before a wait, stepped one instruction at a time, is `cap(min(x + add, top))`
with `cap` sending a count the counter cannot hold to "unknown": a push on a bound one below
the cap makes it unknown, a wait takes it down to the wait's value, and a planned wait's value
is at most its counter's largest (`Target.counter_value_for`), so a count at or above the cap
never meets a planned wait without being unknown (tests/test_satisfied.py steps it).
"""

from __future__ import annotations

from ..targets.model import CTL_CALL

#: no bound known (the entry, a call, more than the counter can hold)
UNKNOWN = 1 << 30


class BlockBounds:
    """A block's transfer per counter group and its planned waits' tests.

    `trans[gi]` = (add, top): the block maps an entry bound x to min(x + add, top) (add
    UNKNOWN after a call: the exit is `top` whatever x is).  `checks`: per planned wait, in
    instruction order, (instruction, ((gi, add, top, value), ...)): the bound right before it
    is min(x + add, top) and the wait on group gi goes when that is at most `value`.
    `asks`: the groups some planned wait of the block waits on.  `sig`, `specs`: what the
    record was made from (the block's signature object, {instruction: copy of its spec})."""

    __slots__ = ("sig", "specs", "trans", "checks", "asks")

    def __init__(self, sig, specs: dict, trans: tuple, checks: tuple, asks: frozenset) -> None:
        self.sig, self.specs, self.trans, self.checks, self.asks = sig, specs, trans, checks, asks


def group_values(spec: list[int], group_of: dict, n: int) -> list[int]:
    """The value `spec` waits each counter group down to (-1: it does not wait on it): the
    smallest over the group's timelines."""
    vals = [-1] * n
    for c, v in enumerate(spec):
        if v != -1:
            gi = group_of.get(c)
            if gi is not None and (vals[gi] == -1 or v < vals[gi]):
                vals[gi] = v
    return vals


def block_bounds(b, anchors: dict, df, n: int, group_of: dict, by_name: dict, sig,
                 memo: tuple[dict, dict] | None = None) -> BlockBounds:
    """The record of block `b` under the planned waits `anchors` ({instruction: spec}, before
    the drop; only `b`'s are read).  `memo`: two dicts the caller keeps for one drop, a spec's
    group values by its values and a push tuple's groups (asked of thousands of blocks alike)."""
    by_spec, by_pushes = memo if memo is not None else ({}, {})
    add, top = [0] * n, [UNKNOWN] * n
    info_get = df.info.get
    anchors_get = anchors.get
    decode = df.target.decode_wait
    checks = []
    asks: set = set()
    kept: dict = {}
    for inst in b.instrs:
        spec = anchors_get(inst)
        if spec is not None:
            kept[inst] = list(spec)
            key = tuple(spec)
            vals = by_spec.get(key)
            if vals is None:
                vals = by_spec[key] = tuple((gi, v) for gi, v in enumerate(group_values(spec, group_of, n)) if v != -1)
            if vals:
                tests = []
                for gi, v in vals:
                    tests.append((gi, add[gi], top[gi], v))
                    asks.add(gi)
                    if v < top[gi]:
                        top[gi] = v  # (min(min(x + add, top), v))
                checks.append((inst, tuple(tests)))
        if inst.is_label or inst.is_phi:
            continue
        inf = info_get(inst)
        if inf is None or inf.control == CTL_CALL:
            add, top = [UNKNOWN] * n, [UNKNOWN] * n
            continue
        if inf.is_wait:
            for cn, w in decode(inst).items():
                gi = by_name.get(cn)
                if w >= 0 and gi is not None and w < top[gi]:
                    top[gi] = w
        pushes = inf.pushes
        if pushes:
            gs = by_pushes.get(pushes)
            if gs is None:
                gs = by_pushes[pushes] = tuple(gi for gi in map(group_of.get, pushes) if gi is not None)
            for gi in gs:
                if add[gi] < UNKNOWN:
                    add[gi] += 1
                if top[gi] < UNKNOWN:
                    top[gi] += 1
    return BlockBounds(sig, kept, tuple(zip(add, top)), tuple(checks), frozenset(asks))


def apply(x: int, add: int, top: int, cap: int) -> int:
    """min(x + add, top) for an entry bound x (UNKNOWN stays unknown), as a count the counter
    can hold (at least `cap`: unknown); -1 (not reached yet) stays -1."""
    if x < 0:
        return -1
    y = UNKNOWN if x >= UNKNOWN or add >= UNKNOWN else x + add
    if top < y:
        y = top
    return y if y < cap else UNKNOWN
