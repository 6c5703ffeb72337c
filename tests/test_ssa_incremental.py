"""The def-use re-solve after an edit (analysis/ssa.py) gives the sources a full build gives,
and says which instructions' sources it changed (`UseDefChains.touched`): the facts of every
other instruction keep their links (waitcnt/function_facts.py), so an instruction left out of
`touched` whose sources did change would keep a stale producer set.

Random small kernels (straight blocks, self loops, forward and backward branches over a few
VGPRs), random one-line register renames, insertions and deletions, adopted the way the cache
adopts a new version."""

from __future__ import annotations

import random

import pytest

from stinkywait_core.analysis.cfg import compute_cfg
from stinkywait_core.analysis.ssa import build_use_def_chain
from stinkywait_core.cache import Chain, adopt
from stinkywait_core.syntax import parse
from stinkywait_core.waitcnt.incremental import FunctionMemo

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl\tk\nk:\n'


def _program(rng: random.Random, n_blocks: int) -> list[str]:
    lines = []
    for b in range(n_blocks):
        lines.append(f".LBB0_{b}:")
        for _ in range(rng.randint(1, 4)):
            d, a, c = (rng.randrange(8) for _ in range(3))
            lines.append(rng.choice([f"\tv_add_f32_e32 v{d}, v{a}, v{c}", f"\tv_mul_f32_e32 v{d}, v{a}, v{c}",
                                     f"\tds_load_b32 v{d}, v{a}", f"\tglobal_load_b32 v{d}, v[{a}:{a + 1}], off"]))
        target = rng.randrange(n_blocks)
        lines.append(f"\ts_cmp_lt_u32 s10, {b}")
        lines.append(f"\ts_cbranch_scc1 .LBB0_{target}")
    lines.append("\ts_endpgm")
    return lines


def _rename(rng: random.Random, lines: list[str]) -> None:
    """Rename one register of one VALU or load line (v3 -> v2 or v4...)."""
    cands = [i for i, ln in enumerate(lines) if ln.startswith(("\tv_", "\tds_", "\tglobal_"))]
    i = rng.choice(cands)
    parts = lines[i].split("v")
    k = rng.randrange(1, len(parts))
    digits = parts[k][:1]
    if digits.isdigit():
        parts[k] = str((int(digits) + rng.choice((1, 3, 5))) % 8) + parts[k][1:]
    lines[i] = "v".join(parts)


def _edit(rng: random.Random, lines: list[str]) -> None:
    """A rename mostly; else a VALU line or an `s_nop` (reading nothing) inserted, or a
    VALU or load line deleted (each keeps the CFG's shape)."""
    r = rng.random()
    cands = [i for i, ln in enumerate(lines) if ln.startswith(("\tv_", "\tds_", "\tglobal_"))]
    if r < 0.6 or len(cands) < 3:
        _rename(rng, lines)
    elif r < 0.75:
        d, a = rng.randrange(8), rng.randrange(8)
        lines.insert(rng.choice(cands), f"\tv_add_f32_e32 v{d}, v{a}, v{d}")
    elif r < 0.85:
        lines.insert(rng.choice(cands), "\ts_nop 0")
    else:
        del lines[rng.choice(cands)]


def _func(lines: list[str]):
    module = parse(HEAD + "\n".join(lines) + "\n", "k.s", "asm")
    assert not [d for d in module.diagnostics if d.severity == "error"], module.diagnostics
    return module.functions[0]


def _described(func) -> list:
    """Every instruction's sources by position: (block, index) of a definition, or the block
    and unit of a PHI (a full and an incremental build name the same ones)."""
    where = {}
    for bi, b in enumerate(func.blocks):
        k = 0
        for inst in b.instrs:
            if not inst.is_phi:
                where[inst] = (bi, k)
                k += 1
    out = []
    for bi, b in enumerate(func.blocks):
        for inst in b.instrs:
            if inst.is_phi:
                srcs = [None if s is None else ("phi", s.block.index, s.phi_key) if s.is_phi else where[s]
                        for s in inst.sources]
                out.append(("phi", bi, inst.phi_key, srcs))
            elif not inst.is_label:
                out.append((where[inst], [("phi", s.block.index, s.phi_key) if s.is_phi else where[s]
                                          for s in inst.sources]))
    return out


@pytest.mark.parametrize("index_min", [48, 1])
def test_incremental_def_use_equals_full_and_touched_covers_every_change(index_min):
    """index_min 1: every block is re-solved by its per-unit occurrence lists (a long block's
    walk, `UseDefChains.occurrences`), kept up to date across the edits; 48: these blocks
    are walked whole."""
    rng = random.Random(21)
    checked = 0
    for trial in range(12):
        lines = _program(rng, rng.randint(3, 9))
        func = _func(lines)
        cfg = compute_cfg(func)
        chain = Chain(func, FunctionMemo())
        chains = build_use_def_chain(func, cfg, include_pseudo=False)
        chains.index_min = index_min
        for _ in range(6):
            before = {inst: list(inst.sources) for b in func.blocks for inst in b.instrs if not inst.is_phi}
            _edit(rng, lines)
            adopted = adopt(chain, _func(lines))
            assert adopted is not None  # a rename keeps the CFG's shape
            build_use_def_chain(func, cfg, chains, adopted.changed_blocks, adopted.dropped, include_pseudo=False)
            full = _func(lines)
            build_use_def_chain(full, compute_cfg(full), include_pseudo=False)
            assert _described(func) == _described(full)
            # every analysed instruction has its row of reaching definitions, aligned with the
            # units it reads (value_flow.py reads them in place of a walk)
            for b in func.blocks:
                for inst in b.instrs:
                    if inst in chains.units:
                        assert len(chains.src_defs[inst]) == len(chains.units[inst][0]), (trial, inst)
            touched = chains.touched
            for b in func.blocks:
                for inst in b.instrs:
                    if inst.is_phi or inst.is_label or inst not in before:
                        continue
                    if inst not in touched:
                        # kept links: the same defining objects as before the edit
                        assert len(inst.sources) == len(before[inst]) and all(
                            x is y for x, y in zip(inst.sources, before[inst])), (trial, inst)
                        checked += 1
    assert checked > 100  # most instructions keep their sources: the property was exercised
    assert index_min > 1 or chains.occurrences  # (the occurrence walks ran)


def _rows(func, chains) -> list:
    """Each instruction's row of reaching definitions (`src_defs`, which value_flow.py reads)
    and whether the last re-solve reported it `touched`, by position."""
    where = {}
    for bi, b in enumerate(func.blocks):
        for k, inst in enumerate(i for i in b.instrs if not i.is_phi):
            where[inst] = (bi, k)

    def name(d):
        return None if d is None else ("phi", d.block.index, d.phi_key) if d.is_phi else where.get(d, "gone")
    out = []
    for inst, pos in where.items():
        row = chains.src_defs.get(inst)
        out.append((pos, None if row is None else [name(d) for d in row], inst in chains.touched))
    return out


def test_occurrence_walks_equal_whole_block_walks():
    """The same edits re-solved with every block walked by its occurrence lists and with
    every block walked whole leave the same rows, sources and `touched` sets (new
    instructions reading nothing included: the whole walk gives them an empty row)."""
    rng = random.Random(5)
    compared = 0
    for trial in range(12):
        lines = _program(rng, rng.randint(3, 9))
        runs = []
        for index_min in (1, 10 ** 9):
            func = _func(lines)
            chains = build_use_def_chain(func, compute_cfg(func), include_pseudo=False)
            chains.index_min = index_min
            runs.append((func, compute_cfg(func), Chain(func, FunctionMemo()), chains))
        for _ in range(6):
            _edit(rng, lines)
            seen = []
            for func, cfg, chain, chains in runs:
                adopted = adopt(chain, _func(lines))
                build_use_def_chain(func, cfg, chains, adopted.changed_blocks, adopted.dropped, include_pseudo=False)
                seen.append((_described(func), _rows(func, chains)))
            assert seen[0] == seen[1], trial
            compared += 1
    assert compared == 72 and runs[0][3].occurrences and not runs[1][3].occurrences
