"""buildUseDefChain(includePseudo=true): semi-pruned SSA over 32-bit register units.

After this, `inst.sources` lists the immediate defining instructions of every register unit
the instruction reads (memtoken pseudo registers `LDS<t>` included), in first-seen order, and
a memtoken value that reaches a join from several definitions is a PHI whose operands are the
per-predecessor reaching definitions (upstream-algorithm.md s.3.2).  That is what lets the
dataflow ask "which async producers does this consumer read?" without any token matching.
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Function, Instruction, Reg
from .cfg import CfgInfo

Key = tuple[str, int]


@lru_cache(maxsize=16384)
def _range_keys(kind: str, lo: int, hi: int) -> tuple[Key, ...]:
    return tuple((kind, i) for i in range(lo, hi + 1))


def _keys(ops: list) -> list[Key]:
    keys: list[Key] = []
    for op in ops:
        if type(op) is Reg and op.kind != "null":
            if op.lo == op.hi:
                keys.append((op.kind, op.lo))
            else:
                keys.extend(_range_keys(op.kind, op.lo, op.hi))
    return keys


def _src_keys(inst: Instruction) -> list[Key]:
    return _keys(inst.srcs)


def _dst_keys(inst: Instruction) -> list[Key]:
    return _keys(inst.dsts)


def remove_phis(func: Function) -> None:
    for b in func.blocks:
        if any(i.is_phi for i in b.instrs):
            b.instrs = [i for i in b.instrs if not i.is_phi]


def build_use_def_chain(func: Function, cfg: CfgInfo) -> None:
    """Place PHIs at iterated dominance frontiers, then fill `sources` walking in RPO."""
    remove_phis(func)
    rpo = cfg.rpo
    in_rpo = set(rpo)
    # 1. keys read anywhere, and the blocks defining each key
    read: set[Key] = set()
    def_blocks: dict[Key, list] = {}
    unit_keys: dict[Instruction, tuple[list[Key], list[Key]]] = {}
    for b in rpo:
        for inst in b.instrs:
            if inst.is_label:
                continue
            sk, dk = _src_keys(inst), _dst_keys(inst)
            unit_keys[inst] = (sk, dk)
            read.update(sk)
            for k in dk:
                lst = def_blocks.setdefault(k, [])
                if not lst or lst[-1] is not b:
                    lst.append(b)
    # 2. PHI placement at the iterated dominance frontier of each read key's def blocks
    phis_at: dict = {}
    for key in sorted(k for k in def_blocks if k in read):
        work = list(def_blocks[key])
        placed: set = set()
        while work:
            d = work.pop()
            for f in cfg.frontier.get(d, ()):
                if f in placed:
                    continue
                placed.add(f)
                phis_at.setdefault(f, []).append(key)
                if f not in def_blocks[key]:
                    work.append(f)
    for b, keys in phis_at.items():
        phis = [Instruction("PHI", dsts=[Reg(k[0], k[1], k[1])], is_phi=True, phi_key=k, block=b)
                for k in keys]
        b.instrs[0:0] = phis
    # 3. reaching definitions in RPO, each block starting from its idom's exit map
    exit_defs: dict = {}
    for b in rpo:
        dom = cfg.idom.get(b)
        defs: dict[Key, Instruction] = dict(exit_defs[dom]) if dom is not None and dom in exit_defs else {}
        for inst in b.instrs:
            if inst.is_phi:
                defs[inst.phi_key] = inst
                continue
            if inst.is_label:
                continue
            sk, dk = unit_keys[inst]
            srcs: list[Instruction | None] = []
            seen: set[int] = set()
            for k in sk:
                d = defs.get(k)
                if d is not None and id(d) not in seen:
                    seen.add(id(d))
                    srcs.append(d)
            inst.sources = srcs
            for k in dk:
                defs[k] = inst
        exit_defs[b] = defs
    # PHI operands: operand j = reaching def at the exit of predecessor j
    users: dict[int, int] = {}
    for b in rpo:
        for inst in b.instrs:
            if not inst.is_phi:
                for s in inst.sources:
                    if s is not None and s.is_phi:
                        users[id(s)] = users.get(id(s), 0) + 1
                continue
            inst.sources = [exit_defs[p].get(inst.phi_key) if p in in_rpo else None for p in b.preds]
            for s in inst.sources:
                if s is not None and s.is_phi and s is not inst:
                    users[id(s)] = users.get(id(s), 0) + 1
    # 4. delete PHIs nobody uses (iterated, so chains of dead PHIs go too)
    dead = True
    while dead:
        dead = False
        for b in phis_at:
            keep = []
            for inst in b.instrs:
                if inst.is_phi and users.get(id(inst), 0) == 0:
                    dead = True
                    for s in inst.sources:
                        if s is not None and s.is_phi and s is not inst:
                            users[id(s)] -= 1
                    continue
                keep.append(inst)
            b.instrs = keep


def flatten_sources(inst: Instruction) -> list[Instruction]:
    """The concrete (non-PHI) defining instructions an instruction reads, through PHIs.

    Depth-first in source order, each once: the order in which phiCurrentQueueWait and
    collectMemOpDeps visit them.
    """
    out: list[Instruction] = []
    seen: set[int] = set()
    stack = [s for s in reversed(inst.sources) if s is not None]
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
