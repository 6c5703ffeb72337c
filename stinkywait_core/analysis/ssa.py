"""buildUseDefChain(includePseudo=true): semi-pruned SSA over 32-bit register units.

After this, `inst.sources` lists the immediate defining instructions of every register unit
the instruction reads (memtoken pseudo registers `LDS<t>` included), in first-seen order, and
a memtoken value that reaches a join from several definitions is a PHI whose operands are the
per-predecessor reaching definitions (upstream-algorithm.md s.3.2).  That is what lets the
dataflow ask "which async producers does this consumer read?" without any token matching.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat

from ..ir import Block, Function, Instruction, Reg
from .cfg import CfgInfo

Key = tuple[str, int]


@lru_cache(maxsize=16384)
def _range_keys(kind: str, lo: int, hi: int) -> tuple[Key, ...]:
    return tuple((kind, i) for i in range(lo, hi + 1))


@lru_cache(maxsize=16384)
def _unit_reg(kind: str, unit: int) -> Reg:
    """The register a PHI of one unit defines (immutable: one object for every PHI of it)."""
    return Reg(kind, unit, unit)


def _keys(ops: list, pseudo: bool = True) -> tuple[Key, ...]:
    """The units of an operand list; each key the one object `_range_keys` keeps for it, so
    the tables of a 30k-instruction function hold one tuple per unit, not one per mention."""
    keys: list[Key] = []
    for op in ops:
        if type(op) is Reg and op.kind != "null" and (pseudo or op.kind != "LDS"):
            keys.extend(_range_keys(op.kind, op.lo, op.hi))
    return tuple(keys)


def _src_keys(inst: Instruction, pseudo: bool = True) -> tuple[Key, ...]:
    return _keys(inst.srcs, pseudo)


def _dst_keys(inst: Instruction, pseudo: bool = True) -> tuple[Key, ...]:
    return _keys(inst.dsts, pseudo)


def remove_phis(func: Function) -> None:
    """Drop the PHIs `build_use_def_chain` put at the head of blocks (only ever there)."""
    for b in func.blocks:
        instrs = b.instrs
        if instrs and instrs[0].is_phi:
            b.instrs = [i for i in instrs if not i.is_phi]


class UseDefChains:
    """What `build_use_def_chain` leaves for the next version of the same function.

    SSA over register units decomposes by unit: a unit's PHIs, reaching definitions and dead
    PHIs depend only on the instructions that define or read that unit.  So after an edit
    only the units the changed instructions define or read are re-solved
    (`build_use_def_chain(..., chains=...)`); every other instruction keeps its `sources` and
    every other PHI its identity.  The result is the one a full build gives (tests compare).
    """

    def __init__(self) -> None:
        #: every analysed (non-PHI, non-label) instruction -> (source units, destination units)
        self.units: dict[Instruction, tuple[tuple[Key, ...], tuple[Key, ...]]] = {}
        #: reaching definition of each source unit, aligned with `units[inst][0]`
        self.src_defs: dict[Instruction, list] = {}
        #: live PHIs: block -> unit -> PHI (only the blocks that have one)
        self.phis: dict[Block, dict[Key, Instruction]] = {}
        #: every unit each block's instructions read or define
        self.block_keys: dict[Block, frozenset] = {}
        #: unit -> the blocks whose `block_keys` hold it (its inverse, so that a re-solve
        #: visits only the blocks of the units in scope); made on the first re-solve, None
        #: after a full build
        self.key_blocks: dict[Key, set[Block]] | None = None
        #: PHIs the last re-solve replaced (their units were in scope)
        self.old_phis: list[Instruction] = []
        #: instructions whose `sources` the last build set or changed (their facts need
        #: re-deriving); None after a full build (everything)
        self.touched: set[Instruction] | None = None
        #: the PHIs the last build placed (and kept)
        self.new_phis: list[Instruction] = []
        #: per long block (`index_min` instructions or more): unit -> the block's instructions
        #: reading or defining it, in block order, so that a re-solve of a few units walks
        #: their occurrences instead of every instruction of the block (a 1,851-instruction
        #: loop body is re-solved for three units at each edit of a GEMM); made when a
        #: re-solve first visits the block, kept up to date for a changed block's edit
        self.occurrences: dict[Block, dict[Key, list[Instruction]]] = {}
        #: how long a block must be to be walked by its occurrences (shorter ones are walked
        #: whole: their index would cost more than it saves)
        self.index_min = 48


def build_use_def_chain(func: Function, cfg: CfgInfo, chains: UseDefChains | None = None,
                        changed: set | None = None, dropped: list = (), include_pseudo: bool = True) -> UseDefChains:
    """Place PHIs at iterated dominance frontiers, then fill `sources` walking in RPO.

    With `chains` from the previous analysis of this function (same CFG, instructions kept
    as the same objects), `changed` (the blocks whose instruction lists changed) and
    `dropped` (the instructions that are gone), only the units the added or dropped
    instructions define or read are re-solved; `chains` is updated either way.
    `include_pseudo` (upstream's includePseudo): memtoken pseudo registers `LDS<t>` are units
    too; the hardware model reads LDS hazards from the memtokens directly and leaves them out.
    Returns the chains (`chains` itself when given): other analyses of the same version read
    their reaching definitions instead of walking the CFG again.
    """
    remove_phis(func)
    rpo = cfg.rpo
    st = chains if chains is not None else UseDefChains()
    units = st.units
    if not units or changed is None:  # a full build (keys of known instructions reused)
        st.units = units = {}
        old = chains.units if chains is not None else {}
        block_defs: dict[Block, set] = {}
        read: set[Key] = set()
        # equal unit pairs and block unit sets are one object each (instructions and blocks
        # of a kernel repeat the same registers); both are only read once made
        pairs: dict[tuple, tuple] = {}
        sets: dict[frozenset, frozenset] = {}
        for b in rpo:
            reads: set[Key] = set()
            defs: set[Key] = set()
            for inst in b.instrs:
                if not inst.is_label:
                    u = old.get(inst)
                    if u is None:
                        u = (_src_keys(inst, include_pseudo), _dst_keys(inst, include_pseudo))
                    u = units[inst] = pairs.setdefault(u, u)
                    reads.update(u[0])
                    defs.update(u[1])
            block_defs[b] = defs
            read |= reads
            keys = frozenset(reads | defs)
            st.block_keys[b] = sets.setdefault(keys, keys)
        st.key_blocks = None
        st.occurrences = {}
        _solve_units(rpo, cfg, st, None, (read, block_defs))
        for b in func.blocks:  # unreachable: no sources (the front end may reuse instructions)
            if b not in block_defs:
                for inst in b.instrs:
                    inst.sources = []
        return st
    scope: set[Key] = set()
    for inst in dropped:
        u = units.pop(inst, None)
        if u is not None:
            scope.update(u[0])
            scope.update(u[1])
            st.src_defs.pop(inst, None)
    in_rpo = set(rpo)
    key_blocks = st.key_blocks
    if key_blocks is None:
        key_blocks = st.key_blocks = {}
        for b, keys in st.block_keys.items():
            for k in keys:
                kb = key_blocks.get(k)
                if kb is None:
                    key_blocks[k] = {b}
                else:
                    kb.add(b)
    occurrences = st.occurrences
    if occurrences and scope:  # the instructions gone leave the indexed blocks' lists first
        # (before any is found again in another block: the front end may move an object)
        for b in changed:
            occ = occurrences.get(b)
            if occ is not None:
                _drop_occurrences(occ, units, scope)
    sourceless: list[Instruction] = []
    src_defs = st.src_defs
    for b in changed:
        if b not in in_rpo:
            continue
        fresh: list[Instruction] = []
        for inst in b.instrs:
            if inst.is_label or inst in units:
                continue
            u = units[inst] = (_src_keys(inst, include_pseudo), _dst_keys(inst, include_pseudo))
            scope.update(u[0])
            scope.update(u[1])
            fresh.append(inst)
            if not u[0]:  # its (empty) row now: no walk need visit it (its block may have
                # nothing in scope), so every analysed instruction has a row after a build
                src_defs[inst] = []
                sourceless.append(inst)
        old = st.block_keys.get(b, frozenset())
        occ = occurrences.get(b)
        if occ is not None and len(b.instrs) >= st.index_min:
            new = st.block_keys[b] = _add_occurrences(b, occ, units, fresh)
        else:
            occurrences.pop(b, None)  # (a block grown or shrunk across the threshold: made again)
            new = st.block_keys[b] = _block_keys(b, units)
        for k in old - new:
            kb = key_blocks[k]
            kb.discard(b)
            if not kb:
                del key_blocks[k]
        for k in new - old:
            kb = key_blocks.get(k)
            if kb is None:
                key_blocks[k] = {b}
            else:
                kb.add(b)
    _solve_units(rpo, cfg, st, scope, sourceless=sourceless)
    return st


def _occurrences_of(b: Block, units: dict) -> dict[Key, list[Instruction]]:
    """Unit -> the block's instructions reading or defining it, in block order (each once)."""
    occ: dict[Key, list[Instruction]] = {}
    for inst in b.instrs:
        u = units.get(inst)
        if u is None:
            continue
        for k in u[0] + u[1]:
            lst = occ.get(k)
            if lst is None:
                occ[k] = [inst]
            elif lst[-1] is not inst:
                lst.append(inst)
    return occ


def _drop_occurrences(occ: dict, units: dict, gone: set[Key]) -> None:
    """The instructions no longer in `units` (dropped: their units are in `gone`) leave a
    changed block's occurrence lists."""
    for k in gone:
        lst = occ.get(k)
        if lst is not None:
            kept = [i for i in lst if i in units]
            if not kept:
                del occ[k]
            elif len(kept) != len(lst):
                occ[k] = kept


def _add_occurrences(b: Block, occ: dict, units: dict, fresh: list[Instruction]) -> frozenset:
    """The block's new instructions (`fresh`) join its occurrence lists at their positions.
    Returns the block's units (its `block_keys`)."""
    if fresh:
        instrs = b.instrs
        pos = dict(zip(instrs, range(len(instrs))))
        at = pos.__getitem__
        grown: set[Key] = set()
        for inst in fresh:
            u = units[inst]
            for k in u[0] + u[1]:
                lst = occ.get(k)
                if lst is None:
                    occ[k] = [inst]
                elif inst not in lst:
                    lst.append(inst)
                    grown.add(k)
        for k in grown:
            occ[k].sort(key=at)
    return frozenset(occ)


def _block_keys(b: Block, units: dict) -> frozenset:
    """Every unit a block's instructions read or define (to skip blocks a re-solve misses)."""
    out: set[Key] = set()
    for inst in b.instrs:
        u = units.get(inst)
        if u is not None:
            out.update(u[0])
            out.update(u[1])
    return frozenset(out)


def _solve_units(rpo: list, cfg: CfgInfo, st: UseDefChains, scope: set[Key] | None,
                 summary: tuple = ((), {}), sourceless: list = ()) -> None:
    """Re-solve the units in `scope`; all units when None, then `summary` = (units read
    anywhere, units each block defines) comes from the full build's own pass.  `sourceless`:
    a re-solve's new instructions reading nothing (their rows made, they are `touched`)."""
    in_rpo = set(rpo)
    units = st.units
    src_defs = st.src_defs
    if scope is None:
        src_defs.clear()
        st.phis = {}
    # 1. units read anywhere, and the blocks defining each unit (in scope)
    read: set[Key] = set()
    def_blocks: dict[Key, list] = {}
    block_keys = st.block_keys
    if scope is None:  # the full build's own pass summarised every block
        read, block_defs = summary
        for b in rpo:
            for k in block_defs[b]:
                lst = def_blocks.get(k)
                if lst is None:
                    def_blocks[k] = [b]
                else:
                    lst.append(b)
    else:
        # the blocks reading or defining a unit in scope, in RPO (the others are skipped)
        active: set = set()
        key_blocks = st.key_blocks
        for k in scope:
            kb = key_blocks.get(k)
            if kb:
                active |= kb
        rpo_index = cfg.rpo_index
        active = sorted((b for b in active if b in in_rpo), key=rpo_index.__getitem__)
        occurrences = st.occurrences
        index_min = st.index_min
        for b in active:
            occ = occurrences.get(b)
            if occ is None and len(b.instrs) >= index_min:
                occ = occurrences[b] = _occurrences_of(b, units)
            if occ is not None:  # a long block: only the occurrences of the units in scope
                for k in scope:
                    lst = occ.get(k)
                    if lst is None:
                        continue
                    reads = k in read
                    defined = False
                    for inst in lst:
                        sk, dk = units[inst]
                        if not reads and k in sk:
                            reads = True
                            read.add(k)
                        if not defined and k in dk:
                            defined = True
                            blst = def_blocks.setdefault(k, [])
                            if not blst or blst[-1] is not b:
                                blst.append(b)
                        if reads and defined:
                            break
                continue
            for inst in b.instrs:
                if inst.is_label:
                    continue
                sk, dk = units[inst]
                for k in sk:
                    if k in scope:
                        read.add(k)
                for k in dk:
                    if k in scope:
                        lst = def_blocks.setdefault(k, [])
                        if not lst or lst[-1] is not b:
                            lst.append(b)
    # 2. PHI placement at the iterated dominance frontier of each read unit's def blocks
    phis = st.phis
    st.old_phis = []
    if scope is not None:
        for b, per_block in list(phis.items()):
            if not scope.isdisjoint(per_block):
                for k in [k for k in per_block if k in scope]:
                    st.old_phis.append(per_block.pop(k))
                if not per_block:
                    del phis[b]
    placed_phis: list[Instruction] = []
    frontier = cfg.frontier
    new_phi = Instruction.phi
    for key in sorted(k for k in def_blocks if k in read):
        defining = def_blocks[key]
        work = list(defining)
        defining = set(defining)
        placed: set = set()
        reg = _unit_reg(*key)
        while work:
            d = work.pop()
            for f in frontier.get(d, ()):
                if f in placed:
                    continue
                placed.add(f)
                phi = new_phi(reg, key, f)
                per_block = phis.get(f)
                if per_block is None:
                    phis[f] = {key: phi}
                else:
                    per_block[key] = phi
                placed_phis.append(phi)
                if f not in defining:
                    work.append(f)
    # 3. reaching definitions in RPO, each block starting from its idom's exit map
    exit_defs: dict = {}
    readers: list[Instruction] = list(sourceless)
    empty: dict = {}
    idom = cfg.idom
    if scope is None:
        walk = rpo
    else:
        # only the blocks holding a unit in scope or one of its PHIs: any other block's exit
        # map (for the units in scope) is its idom's, so a block starts from the map of its
        # nearest such dominator (`_exit_of`), and a PHI operand reads the same
        walk = sorted(set(active).union(phi.block for phi in placed_phis), key=rpo_index.__getitem__)
        nearest: dict = {}
    for b in walk:
        if scope is None:
            dom = idom.get(b)
            base = exit_defs.get(dom, empty) if dom is not None else empty
        else:
            base = _exit_of(idom.get(b), exit_defs, idom, nearest)
        bphis = phis.get(b)
        if scope is not None and scope.isdisjoint(block_keys[b]) and not (
                bphis and not scope.isdisjoint(bphis)):
            exit_defs[b] = base  # nothing in scope here: the idom's map, shared (never mutated)
            continue
        defs: dict[Key, Instruction] = dict(base)
        defs_get = defs.get
        if bphis:
            for k, phi in bphis.items():
                if scope is None or k in scope:
                    defs[k] = phi
        occ = occurrences.get(b) if scope is not None else None
        if occ is not None:
            _walk_occurrences(occ, scope, units, src_defs, defs, readers)
            exit_defs[b] = defs
            continue
        for inst in b.instrs:
            if inst.is_label:
                continue
            sk, dk = units[inst]
            if scope is None:
                src_defs[inst] = list(map(defs_get, sk))
                readers.append(inst)
                if dk:
                    defs.update(zip(dk, repeat(inst)))
                continue
            row = src_defs.get(inst)
            if row is None:
                row = src_defs[inst] = [defs.get(k) if k in scope else None for k in sk]
                readers.append(inst)
            else:
                # a reader whose reaching definitions are the same objects keeps its
                # `sources` and its facts' links (a PHI of a unit in scope is always new)
                hit = False
                for n, k in enumerate(sk):
                    if k in scope:
                        d = defs.get(k)
                        if row[n] is not d:
                            row[n] = d
                            hit = True
                if hit:
                    readers.append(inst)
            for k in dk:
                if k in scope:
                    defs[k] = inst
        exit_defs[b] = defs
    # PHI operands: operand j = reaching def at the exit of predecessor j
    if scope is None:
        for phi in placed_phis:
            phi.sources = [exit_defs[p].get(phi.phi_key) if p in in_rpo else None for p in phi.block.preds]
    else:
        for phi in placed_phis:
            phi.sources = [_exit_of(p, exit_defs, idom, nearest).get(phi.phi_key) if p in in_rpo else None
                           for p in phi.block.preds]
    # 4. sources: each reader's reaching definitions, each once, in first-seen order; and
    #    the users of each PHI placed here
    users: dict[int, int] = {}
    fromkeys = dict.fromkeys
    for inst in readers:
        # each definition once, in first-seen order (instructions hash by identity)
        uniq = fromkeys(src_defs[inst])
        uniq.pop(None, None)
        srcs = list(uniq)
        for d in srcs:
            if d.is_phi:
                users[id(d)] = users.get(id(d), 0) + 1
        inst.sources = srcs
    for phi in placed_phis:
        for s in phi.sources:
            if s is not None and s is not phi and s.is_phi:
                users[id(s)] = users.get(id(s), 0) + 1
    # 5. delete PHIs nobody uses (iterated, so chains of dead PHIs go too)
    dead = True
    alive = placed_phis
    while dead:
        dead = False
        keep = []
        for phi in alive:
            if users.get(id(phi), 0) == 0:
                dead = True
                per_block = phis[phi.block]
                del per_block[phi.phi_key]
                if not per_block:  # (only blocks with live PHIs stay: the next re-solve visits those)
                    del phis[phi.block]
                for s in phi.sources:
                    if s is not None and s.is_phi and s is not phi:
                        users[id(s)] -= 1
            else:
                keep.append(phi)
        alive = keep
    st.touched = None if scope is None else set(readers) | set(alive)
    st.new_phis = alive
    for b, per_block in phis.items():
        if per_block:
            b.instrs[0:0] = [per_block[k] for k in sorted(per_block)]


def _walk_occurrences(occ: dict, scope: set[Key], units: dict, src_defs: dict, defs: dict,
                      readers: list[Instruction]) -> None:
    """Step 3 of a re-solve in a long block, unit by unit over the units' occurrences (a
    unit's reaching definitions depend on that unit's definitions only): the same rows,
    `readers` and exit map (`defs`, updated in place) as the walk of every instruction."""
    hit: dict[Instruction, None] = {}
    for k in scope:
        lst = occ.get(k)
        if lst is None:
            continue
        d = defs.get(k)
        for inst in lst:
            sk, dk = units[inst]
            if k in sk:
                row = src_defs.get(inst)
                if row is None:  # a new instruction: every unit it reads is in scope
                    row = src_defs[inst] = [None] * len(sk)
                    hit[inst] = None
                n = sk.index(k)
                while True:  # (a unit read twice by one instruction: each of its slots)
                    if row[n] is not d:
                        row[n] = d
                        hit[inst] = None
                    if sk.count(k) == 1:
                        break
                    try:
                        n = sk.index(k, n + 1)
                    except ValueError:
                        break
            if k in dk:
                d = inst
                defs[k] = inst
    readers.extend(hit)


def _exit_of(b, exit_defs: dict, idom: dict, nearest: dict) -> dict:
    """The exit map of `b` in a re-solve that walked only some blocks: that of `b` or of its
    nearest walked dominator (a block with nothing in scope passes its idom's on); `nearest`
    remembers the answer for every block on the way up (each asked after its dominators
    were walked, so the answer is final)."""
    path = []
    while b is not None:
        got = exit_defs.get(b)
        if got is not None:
            break
        got = nearest.get(b)
        if got is not None:
            break
        path.append(b)
        b = idom.get(b)
    else:
        got = {}
    for p in path:
        nearest[p] = got
    return got


def flatten_sources(inst: Instruction) -> list[Instruction]:
    """The concrete (non-PHI) defining instructions an instruction reads, through PHIs.

    Depth-first in source order, each once: the order in which phiCurrentQueueWait and
    collectMemOpDeps visit them.
    """
    srcs = inst.sources
    for s in srcs:
        if s is None or s.is_phi:
            break
    else:  # no PHI, no gap: the sources are already distinct, in order
        return list(srcs)
    out: list[Instruction] = []
    seen: set[int] = set()
    stack = [s for s in reversed(srcs) if s is not None]
    while stack:
        src = stack.pop()
        if id(src) in seen:
            continue
        seen.add(id(src))
        if src.is_phi:
            stack.extend(x for x in reversed(src.sources) if x is not None)
        else:
            out.append(src)
    return out
