"""The def-use re-solve after an edit (analysis/ssa.py) gives the sources a full build gives,
and says which instructions' sources it changed (`UseDefChains.touched`): the facts of every
other instruction keep their links (waitcnt/function_facts.py), so an instruction left out of
`touched` whose sources did change would keep a stale producer set.

Random small kernels (straight blocks, self loops, forward and backward branches over a few
VGPRs), random one-line register renames, adopted the way the cache adopts a new version."""

from __future__ import annotations

import random

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


def test_incremental_def_use_equals_full_and_touched_covers_every_change():
    rng = random.Random(21)
    checked = 0
    for trial in range(12):
        lines = _program(rng, rng.randint(3, 9))
        func = _func(lines)
        cfg = compute_cfg(func)
        chain = Chain(func, FunctionMemo())
        chains = build_use_def_chain(func, cfg, include_pseudo=False)
        for _ in range(6):
            before = {inst: list(inst.sources) for b in func.blocks for inst in b.instrs if not inst.is_phi}
            _rename(rng, lines)
            adopted = adopt(chain, _func(lines))
            assert adopted is not None  # a rename keeps the CFG's shape
            build_use_def_chain(func, cfg, chains, adopted.changed_blocks, adopted.dropped, include_pseudo=False)
            full = _func(lines)
            build_use_def_chain(full, compute_cfg(full), include_pseudo=False)
            assert _described(func) == _described(full)
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
