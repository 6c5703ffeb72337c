"""Random STIR programs for the hardware checker's property tests (issue 12).

An extension of tests/proggen.py (same region tree, same `ProgSpec`), kept in its own module
so that proggen's seeds keep their programs for the existing property tests.  On top of
proggen's ops it makes the hazards the hardware model has and the upstream model does not:

* register reuse: VALU/SALU writes of registers with pending loads (WAW), loads into
  registers with pending loads, VMEM stores and loads whose address and data registers are
  then overwritten (gfx1250 xcnt WAR), SGPR base reuse after `s_load` (xcnt on SMEM);
* LDS: async copies to and from LDS, tensor stores from LDS, DS writes over in-flight
  async/tensor fills (inside loops as well: loop-carried fills);
* the other counted results: flat loads (loadcnt and dscnt), scratch and cluster loads,
  `s_get_barrier_state`, the SCC of `s_barrier_signal_isfirst`, non-returning global atomics
  (xcnt drain before them on gfx1250);
* control: calls (`s_swap_pc_i64`), returns (`s_set_pc_i64` instead of some `s_endpgm`),
  `s_clause` groups of two loads.

`HwGenParams.arch` picks the target: gfx1200 programs get no tensor or async ops (it has
neither).  `random_hw_program(seed, params)` is reproducible (seeded corpora: the property
tests and benchmarks/bench_hwcheck.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from proggen import GenParams, Op, ProgSpec, _Gen, _RandomChooser

_V_DATA = ["v0", "v1", "v2", "v3", "v[4:5]", "v[6:7]"]
#: address registers of the VMEM ops (proggen never writes them; here they are reused)
_V_ADDR = ["v42", "v43", "v44"]


@dataclass(frozen=True)
class HwGenParams(GenParams):
    """proggen's knobs plus the target and the hardware-only features."""

    arch: str = "gfx1250"
    #: one op in `hw_share` is one of this module's (the rest are proggen's)
    hw_share: int = 2
    returns: bool = True
    calls: bool = True
    clauses: bool = True

    @property
    def has_tdm(self) -> bool:
        return self.arch.startswith("gfx125")


def params_for(arch: str, **kw) -> HwGenParams:
    """Small programs for `arch` (the property tests' size), tensor/async only where they exist."""
    base = dict(max_depth=2, max_regions=3, max_ops=5, arch=arch)
    if not arch.startswith("gfx125"):
        base["counters"] = ("ds", "load", "km")
    base.update(kw)
    return HwGenParams(**base)


class _HwGen(_Gen):
    p: HwGenParams

    def op(self) -> list[Op]:
        if self.c.integer(0, self.p.hw_share - 1) != 0:
            return super().op()
        c = self.c
        kinds = ["store", "addr_write", "addr_write", "load_addr", "sbase", "valu_waw", "salu_waw", "flat",
                 "scratch", "cluster", "km", "isfirst", "atomic"]
        if self.p.has_tdm:
            kinds += ["async_load", "async_load", "tensor_store", "fill_then_ds_write"]
        if self.p.calls:
            kinds.append("call")
        if self.p.clauses:
            kinds.append("clause")
        k = c.choice(kinds)
        if k == "store":
            data = c.choice(_V_DATA)
            w = "b64" if ":" in data else "b32"
            if c.integer(0, 1):
                return [Op(f"global_store_{w}", [], ["v[42:43]", data])]
            return [Op(f"buffer_store_{w}", [], [data, "v44", "s[0:3]"])]
        if k == "addr_write":
            return [Op("v_mov_b32", [c.choice(_V_ADDR)], ["v50"])]
        if k == "load_addr":
            # a load whose result lands in an address register of VMEM ops (in flight or later)
            return [Op("global_load_b32", [c.choice(_V_ADDR)], ["v[42:43]"])]
        if k == "sbase":
            # an s_load, then (maybe later) its base or data register is rewritten
            ops = [Op("s_load_b32", [c.choice(["s20", "s21"])], ["s[0:1]"])]
            if c.integer(0, 1):
                ops.append(Op("s_mov_b32", [c.choice(["s0", "s1", "s20"])], ["s50"]))
            return ops
        if k == "valu_waw":
            return [Op("v_mov_b32", [c.choice(_V_DATA[:4] + ["v4", "v6"])], ["v51"])]
        if k == "salu_waw":
            return [Op("s_mov_b32", [c.choice(["s20", "s21", "s22"])], ["s51"])]
        if k == "flat":
            return [Op("flat_load_b32", [c.choice(_V_DATA[:4])], ["v[42:43]"])]
        if k == "scratch":
            return [Op("scratch_load_b32", [c.choice(_V_DATA[:4])], ["v44", "s32"])]
        if k == "cluster":
            return [Op("cluster_load_b32", [c.choice(_V_DATA[:4])], ["v[42:43]"])]
        if k == "km":
            return [Op("s_get_barrier_state", ["s22"], ["-1"]), Op("s_add_u32", ["s24"], ["s22", "s23"])]
        if k == "isfirst":
            return [Op("s_barrier_signal_isfirst", ["SCC0"], ["-1"], self.tokens()),
                    Op("s_cselect_b32", ["s25"], ["1", "0", "SCC0"])]
        if k == "atomic":
            return [Op("global_atomic_add_u32", [], ["v[42:43]", c.choice(["v0", "v1"])])]
        if k == "async_load":
            return [Op("global_load_async_to_lds_b32", [], ["v45", "v44", "s[30:31]"], self.tokens())]
        if k == "tensor_store":
            return [Op("tensor_store_from_lds", [], ["s[0:3]", "s[8:15]"], self.tokens())]
        if k == "fill_then_ds_write":
            toks = self.tokens()
            fill = c.choice([Op("tensor_load_to_lds", [], ["s[0:3]", "s[8:15]"], toks),
                             Op("global_load_async_to_lds_b32", [], ["v45", "v44", "s[30:31]"], toks)])
            return [fill, Op("ds_store_b32", [], ["v41", c.choice(["v0", "v1"])], toks),
                    Op("ds_load_b32", [c.choice(["v8", "v9"])], ["v40"], toks)]
        if k == "call":
            return [Op("s_swap_pc_i64", ["s[30:31]"], ["s[40:41]"])]
        # clause: two loads grouped by s_clause (no wait may split them)
        a, b = c.choice([("v0", "v1"), ("v2", "v3"), ("v1", "v2")])
        return [Op("s_clause", [], ["0x1"]), Op("global_load_b32", [a], ["v[42:43]"]),
                Op("global_load_b32", [b], ["v[42:43]"])]


def _generate(c, p: HwGenParams, name: str) -> ProgSpec:
    g = _HwGen(c, p, c.choice(p.tagging))
    entry = g.new_block("entry")
    end = g.seq(entry, 0)
    end.ops.append(Op("s_endpgm"))
    if p.returns:
        for b in g.blocks:
            for i, op in enumerate(b.ops):
                if op.mnemonic == "s_endpgm" and c.integer(0, 2) == 0:
                    b.ops[i] = Op("s_set_pc_i64", [], ["s[30:31]"])
    return ProgSpec(name, g.blocks, c.choice(p.waves))


def random_hw_program(seed: int, params: HwGenParams | None = None) -> ProgSpec:
    """Reproducible program number `seed`."""
    return _generate(_RandomChooser(random.Random(seed)), params or HwGenParams(), f"hw{seed}")

