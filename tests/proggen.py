"""Random gfx1250 STIR programs for property tests, fuzzing and benchmarks.

Shared by `tests/test_properties.py`, `tests/test_fuzz_pass.py`, `benchmarks/tightness.py`
and the bounded-analysis tests, so the API below is kept stable:

* `GenParams` — what may appear (CFG shapes, counters, tagging mode, waves, hand-written
  waits, size limits).  `GenParams()` enables everything.
* `ProgSpec` / `BlockSpec` / `Op` — a generated program as plain data.
  `ProgSpec.to_stir()` renders one ``st.func`` (so any failure can be saved as a ``.stir``
  file and replayed with the command-line tools); `ProgSpec.to_function()` parses that text
  with the project's STIR front end; `ProgSpec.options()` gives the matching `Options`
  (NumWaves).
* `programs(params)` — a hypothesis strategy of `ProgSpec` (shrinks towards small programs).
* `random_program(seed, params)` — the same generator driven by `random.Random(seed)`, for
  reproducible corpora outside hypothesis (benchmarks).

Programs are built from a region tree (straight code, diamonds, nested diamonds, self loops,
multi-block loops with bodies that may branch, early exits to a function exit) lowered to
blocks with explicit ``s_cbranch_scc1`` / ``s_branch`` terminators and ``Successors:`` lines.
Registers come from small pools so that loads, consumers and redefinitions collide often:
register RAW on every counter, LDS tokens 0-2 on DS ops / tensor loads / async stores /
barriers, ``-1`` and ``-3`` split barriers, and optional hand-written waits.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

#: the spec's ShallowPredPromotion diamond: two loads on the deep path only, a consumer of the
#: entry's loads at the join (CLI tests, and the iteration-cap fallback test)
DIAMOND = """st.func @d() {
^entry:
  v[0:3] = "st.buffer_load_b128"(v8, s[0:3], 0)
  v[4:7] = "st.buffer_load_b128"(v8, s[0:3], 0)
  SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
  "st.s_cbranch_scc1"("p_shallow", SCC0)
  Successors: ^p_shallow, ^p_deep
^p_deep:
  v[20:23] = "st.buffer_load_b128"(v100, s[0:3], 0)
  v[24:27] = "st.buffer_load_b128"(v101, s[0:3], 0)
  Successors: ^merge
^p_shallow:
  Successors: ^merge
^merge:
  v100 = "st.v_add_f32"(v0, v0)
}
"""

SHAPES = ("code", "diamond", "self_loop", "loop", "early_exit")
COUNTERS = ("ds", "load", "km", "tensor", "async")


@dataclass(frozen=True)
class GenParams:
    """Knobs of the generator; the defaults enable every feature."""

    shapes: tuple[str, ...] = SHAPES
    counters: tuple[str, ...] = COUNTERS
    #: "all" = every LDS op and barrier tagged, "none" = raw assembly style, "mixed" = per op
    tagging: tuple[str, ...] = ("all", "all", "none", "mixed")
    waves: tuple[int, ...] = (1, 2, 4)
    barriers: bool = True
    existing_waits: bool = True
    #: also hand-written waits in the other forms (combined loadcnt_dscnt / storecnt_dscnt,
    #: modifier-only, xcnt, legacy s_waitcnt); off by default so that seeds keep their programs
    exotic_waits: bool = False
    max_depth: int = 3
    max_ops: int = 6
    max_regions: int = 3
    tokens: tuple[int, ...] = (0, 1, 2)


@dataclass
class Op:
    """One instruction: ``dsts = "st.<mnemonic>"(srcs) { mod.memtoken = {tokens = [...]} }``."""

    mnemonic: str
    dsts: list[str] = field(default_factory=list)
    srcs: list[str] = field(default_factory=list)
    tokens: tuple[int, ...] | None = None
    #: other attributes, verbatim (e.g. ``mod.swaittensorcnt = { tlcnt = 1 }``)
    mods: str | None = None

    def to_stir(self) -> str:
        lhs = (", ".join(self.dsts) + " = ") if self.dsts else ""
        text = f'{lhs}"st.{self.mnemonic}"({", ".join(self.srcs)})'
        attrs = [self.mods] if self.mods else []
        if self.tokens is not None:
            attrs.append("mod.memtoken = { tokens = [" + ",".join(str(t) for t in self.tokens) + "] }")
        if attrs:
            text += " { " + ", ".join(attrs) + " }"
        return text


@dataclass
class BlockSpec:
    label: str
    ops: list[Op] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)


@dataclass
class ProgSpec:
    """A generated function plus the wave count it is meant to be analysed with."""

    name: str
    blocks: list[BlockSpec]
    num_waves: int = 0

    def to_stir(self) -> str:
        lines = [f"# RUN: stinkywait-opt --NumWaves={self.num_waves} %s",
                 f"st.func @{self.name}() {{"]
        for b in self.blocks:
            lines.append(f"^{b.label}:")
            lines.extend("  " + op.to_stir() for op in b.ops)
            if b.succs:
                lines.append("  Successors: " + ", ".join(f"^{s}" for s in b.succs))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_function(self, path: str = "gen.stir"):
        """Parse `to_stir()` with the project's STIR front end (one function)."""
        from stinkywait_core.syntax.stir_parser import parse_stir

        mod = parse_stir(self.to_stir(), path)
        if len(mod.functions) != 1:
            raise ValueError(f"generated program did not parse: {mod.diagnostics}")
        return mod.functions[0]

    def options(self, **overrides: Any):
        from stinkywait_core.results import Options

        return Options(num_waves=self.num_waves, **overrides)

    def n_instructions(self) -> int:
        return sum(len(b.ops) for b in self.blocks)


class Chooser(Protocol):
    """The few random decisions the generator needs (hypothesis `draw` or `random.Random`)."""

    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, seq: Sequence[Any]) -> Any: ...


@dataclass
class _RandomChooser:
    rng: random.Random

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.rng.randrange(len(seq))]


@dataclass
class _DrawChooser:
    draw: Callable[[Any], Any]

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return self.draw(st.integers(lo, hi))

    def choice(self, seq: Sequence[Any]) -> Any:
        from hypothesis import strategies as st

        return seq[self.draw(st.integers(0, len(seq) - 1))]


# ------------------------------------------------------------------ instruction pools

_V_DATA = ["v0", "v1", "v2", "v3", "v[4:5]", "v[6:7]"]
_V_READ = ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v[4:5]", "v[0:1]"]
_S_DATA = ["s20", "s21", "s[22:23]"]
_S_READ = ["s20", "s21", "s22", "s23", "s[20:21]"]


@dataclass
class _Gen:
    """Builds blocks for one program; `c` makes every random decision."""

    c: Chooser
    p: GenParams
    tagging: str
    blocks: list[BlockSpec] = field(default_factory=list)
    n_labels: int = 0

    # ---- ops

    def tokens(self) -> tuple[int, ...] | None:
        if self.tagging == "none" or (self.tagging == "mixed" and self.c.integer(0, 2) == 0):
            return None
        first = self.c.choice(self.p.tokens)
        if self.c.integer(0, 4) == 0:
            second = self.c.choice(self.p.tokens)
            return tuple(sorted({first, second}))
        return (first,)

    def op(self) -> list[Op]:
        kinds = ["valu", "valu", "salu", "vmov"]
        counters = self.p.counters
        if "ds" in counters:
            kinds += ["ds_load", "ds_load", "ds_store"]
        if "load" in counters:
            kinds += ["vmem_load", "vmem_load"]
        if "km" in counters:
            kinds += ["smem_load"]
        if "tensor" in counters:
            kinds += ["tensor", "tensor"]
        if "async" in counters:
            kinds += ["async"]
        if self.p.barriers:
            kinds += ["barrier"]
        if self.p.existing_waits:
            kinds += ["wait"]
        k = self.c.choice(kinds)
        c = self.c
        if k == "valu":
            return [Op("v_add_f32", [c.choice(["v8", "v9", "v0", "v1"])], [c.choice(_V_READ), c.choice(_V_READ)])]
        if k == "salu":
            return [Op("s_add_u32", ["s24"], [c.choice(_S_READ), c.choice(_S_READ)])]
        if k == "vmov":
            return [Op("v_mov_b32", [c.choice(_V_DATA[:4])], ["v50"])]
        if k == "ds_load":
            dst = c.choice(_V_DATA)
            mn = "ds_load_b64" if ":" in dst else "ds_load_b32"
            return [Op(mn, [dst], ["v40"], self.tokens())]
        if k == "ds_store":
            return [Op("ds_store_b32", [], ["v41", c.choice(_V_READ)], self.tokens())]
        if k == "vmem_load":
            dst = c.choice(_V_DATA)
            w = "b64" if ":" in dst else "b32"
            if c.integer(0, 1):
                return [Op(f"global_load_{w}", [dst], ["v[42:43]"])]
            return [Op(f"buffer_load_{w}", [dst], ["v44", "s[0:3]"])]
        if k == "smem_load":
            dst = c.choice(_S_DATA)
            return [Op("s_load_b64" if ":" in dst else "s_load_b32", [dst], ["s[0:1]"])]
        if k == "tensor":
            desc = "s[20:23]" if c.integer(0, 5) == 0 else "s[0:3]"
            return [Op("tensor_load_to_lds", [], [desc, "s[8:15]"], self.tokens())]
        if k == "async":
            return [Op("global_store_async_from_lds_b64", [], ["v[46:47]", "v45", "s[30:31]"], self.tokens())]
        if k == "barrier":
            form = c.integer(0, 3)
            toks = self.tokens()
            if form == 0:
                return [Op("s_barrier_signal", [], ["-1"], toks), Op("s_barrier_wait", [], ["-1"], toks)]
            if form == 1:
                return [Op("s_barrier_signal", [], ["-3"]), Op("s_barrier_wait", [], ["-3"])]
            return [Op("s_barrier", [], [], toks)]
        if self.p.exotic_waits and c.integer(0, 2) == 0:
            return [self.exotic_wait()]
        mn = c.choice(["s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt", "s_wait_asynccnt"])
        return [Op(mn, [], [str(c.integer(0, 2))])]

    def exotic_wait(self) -> Op:
        """A hand-written wait in one of the less common spellings of formats.md section 6.1."""
        c = self.c
        form = c.integer(0, 5)
        n, m = c.integer(0, 2), c.integer(0, 2)
        if form == 0:
            return Op("s_wait_loadcnt_dscnt", [], [hex((n << 8) | m)])
        if form == 1:
            return Op("s_wait_storecnt_dscnt", [], [hex((n << 8) | m)])
        if form == 2:
            return Op("s_wait_tensorcnt", [], [], mods=f"mod.swaittensorcnt = {{ tlcnt = {n} }}")
        if form == 3:
            return Op("s_wait_dscnt", [], [], mods=f"mod.swaitcnt = {{ dlcnt = {n} }}")
        if form == 4:
            return Op("s_wait_xcnt", [], ["0"])
        return Op("s_waitcnt", [], ["0"])

    def code(self, block: BlockSpec, lo: int = 0) -> None:
        for _ in range(self.c.integer(lo, self.p.max_ops)):
            block.ops.extend(self.op())

    # ---- CFG

    def new_block(self, hint: str) -> BlockSpec:
        self.n_labels += 1
        b = BlockSpec(f"{hint}{self.n_labels}")
        self.blocks.append(b)
        return b

    def branch(self, block: BlockSpec, taken: BlockSpec, fall: BlockSpec) -> None:
        block.ops.append(Op("s_cmp_eq_u32", ["SCC0"], ["s13", "0x1"]))
        block.ops.append(Op("s_cbranch_scc1", [], [f'"{taken.label}"', "SCC0"]))
        block.succs = [taken.label, fall.label]

    def jump(self, block: BlockSpec, target: BlockSpec) -> None:
        block.ops.append(Op("s_branch", [], [f'"{target.label}"']))
        block.succs = [target.label]

    def region(self, cur: BlockSpec, depth: int) -> BlockSpec:
        """Lower one region starting in `cur`; return the block where control continues."""
        shapes = self.p.shapes if depth < self.p.max_depth else ("code",)
        shape = self.c.choice(shapes)
        if shape == "code":
            self.code(cur, 1)
            return cur
        self.code(cur)
        if shape == "diamond":
            fall = self.new_block("else")
            taken = self.new_block("then")
            join = self.new_block("join")
            self.branch(cur, taken, fall)
            for arm in (fall, taken):
                end = self.seq(arm, depth + 1)
                self.jump(end, join)
            return join
        if shape == "self_loop":
            loop = self.new_block("self")
            after = self.new_block("after")
            self.jump(cur, loop)
            self.code(loop, 1)
            self.branch(loop, loop, after)
            return after
        if shape == "loop":
            header = self.new_block("loop")
            self.jump(cur, header)
            end = self.seq(header, depth + 1)
            after = self.new_block("after")
            self.branch(end, header, after)
            return after
        # early exit: a conditional branch to a block that ends the function
        out = self.new_block("exit")
        nxt = self.new_block("cont")
        self.branch(cur, out, nxt)
        self.code(out)
        out.ops.append(Op("s_endpgm"))
        return nxt

    def seq(self, cur: BlockSpec, depth: int) -> BlockSpec:
        for _ in range(self.c.integer(1, self.p.max_regions)):
            cur = self.region(cur, depth)
        return cur


def generate(c: Chooser, params: GenParams | None = None, name: str = "gen") -> ProgSpec:
    """Build one program with the decisions of `c`."""
    p = params or GenParams()
    g = _Gen(c, p, c.choice(p.tagging))
    entry = g.new_block("entry")
    end = g.seq(entry, 0)
    end.ops.append(Op("s_endpgm"))
    return ProgSpec(name, g.blocks, c.choice(p.waves))


def random_program(seed: int, params: GenParams | None = None) -> ProgSpec:
    """Reproducible program number `seed` (benchmarks, corpora)."""
    return generate(_RandomChooser(random.Random(seed)), params, name=f"gen{seed}")


def programs(params: GenParams | None = None):
    """Hypothesis strategy of `ProgSpec`."""
    from hypothesis import strategies as st

    @st.composite
    def _strategy(draw):
        return generate(_DrawChooser(draw), params)

    return _strategy()
