"""The latency model: what an instruction costs to issue and how long its memory op stays in
flight, per target family (docs/latency-model.md).

Why a model at all.  A wait costs cycles, not lines: two placements that are both safe differ
in how long the wave sits at the wait.  The model only *prices* placements the pass has already
proven safe (CoalesceWaits asks it whether a fold adds stall; `waitcnt/stall.py` predicts each
wait's stall); it never decides whether a wait is needed.

The numbers are tables, one per family, built by the family's module (`gfx9.py` ...
`gfx1250.py`) from public sources (LLVM 22's AMDGPU scheduling models `SISchedule.td`,
upstream stinkytofu's `HWModel` for CDNA5/gfx1250).  A user may override any entry with a
JSON or TOML file (`--latency-model FILE`, the `stinkywait.latencyModel` setting); a bad file
is a located error (`LatencyModelError`), never a traceback.
"""

from __future__ import annotations

import re

from .model import (CK_ASYNC, CK_BVH, CK_DS, CK_EXP, CK_FLATL, CK_FLATV, CK_GDS, CK_KM, CK_LOAD, CK_SAMPLE,
                    CK_STORE, CK_TENSOR, CK_XS, CK_XV, ENG_DMA, InstrSem)

#: the instruction classes that have an issue cost (cycles from one instruction of a wave to its next)
ISSUE_CLASSES = ("salu", "valu", "valu64", "trans", "matrix", "ds", "smem", "vmem", "tensor", "async",
                 "export", "branch", "branch_taken", "wait", "barrier", "nop", "other")
#: the memory kinds that have a latency (cycles from issue until the op's counter decrements)
MEMORY_KINDS = ("lds", "gds", "smem", "vmem_load", "vmem_store", "sample", "bvh", "tensor", "async",
                "lds_dma", "flat", "export", "xcnt")
#: scalar parameters
SCALARS = ("matrix_pass_cycles", "lds_queue_depth", "loop_trips", "barrier_cycles")
#: instructions the model prices as waiting for every counter to reach zero.  `s_wait_idle`
#: (gfx11.5+, gfx12, gfx1250) waits, by its name and as aiter's gfx1250 kernels use it (before a
#: barrier that hands LDS to another wave's tensor store, with no other wait), for the wave to be
#: idle.  Only the price: the pass and the checker do not read it as a wait, as LLVM 22 does not
#: (llc-22 -run-pass=si-insert-waitcnts still inserts `S_WAIT_LOADCNT_DSCNT 0` after an
#: `S_WAIT_IDLE` for a use of a load issued before it), so safety never rests on it
#: (docs/latency-model.md, "Instructions priced as drains")
IDLE_WAITS = frozenset({"s_wait_idle"})


class LatencyModelError(ValueError):
    """A latency-model file that cannot be used; `line`/`column` locate the problem (1-based)."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{path}:{line}:{column}: error: {message}")
        self.path, self.line, self.column, self.message = path, line, column, message


class LatencyModel:
    """One family's costs.  Immutable and hashable (plans are cached by it).

    `issue[cls]`: cycles a wave spends issuing one instruction of class `cls` (a class of
    `ISSUE_CLASSES`); `latency[kind]`: cycles from issue until a memory op of `kind` is retired
    on its counter; `matrix_passes`: (mnemonic regex, passes) tried in order for MFMA/WMMA, each
    pass `matrix_pass_cycles` on the matrix pipe (a following matrix op waits for the pipe, other
    instructions co-issue); `lds_queue_depth`: LDS ops a wave may have in flight before the next
    one waits to issue (0: unlimited); `loop_trips`: how often the stall simulation takes a
    loop's back edge; `barrier_cycles`: a barrier's cost with every wave arriving together.
    """

    __slots__ = ("family", "issue", "latency", "matrix_passes", "matrix_pass_cycles", "lds_queue_depth",
                 "loop_trips", "barrier_cycles", "_key", "_passes_re", "_pass_cache")

    def __init__(self, family: str, issue: dict[str, int], latency: dict[str, int],
                 matrix_passes: tuple[tuple[str, int], ...], matrix_pass_cycles: int, lds_queue_depth: int,
                 loop_trips: int, barrier_cycles: int) -> None:
        missing = [c for c in ISSUE_CLASSES if c not in issue] + [k for k in MEMORY_KINDS if k not in latency]
        if missing:
            raise ValueError(f"{family} latency model lacks {', '.join(missing)}")
        self.family = family
        self.issue = dict(issue)
        self.latency = dict(latency)
        self.matrix_passes = tuple(matrix_passes)
        self.matrix_pass_cycles = matrix_pass_cycles
        self.lds_queue_depth = lds_queue_depth
        self.loop_trips = loop_trips
        self.barrier_cycles = barrier_cycles
        self._key = (family, tuple(sorted(self.issue.items())), tuple(sorted(self.latency.items())),
                     self.matrix_passes, matrix_pass_cycles, lds_queue_depth, loop_trips, barrier_cycles)
        self._passes_re = tuple((re.compile(p), n) for p, n in self.matrix_passes)
        self._pass_cache: dict[str, int] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LatencyModel) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"<LatencyModel {self.family}>"

    # --- questions the simulation and CoalesceWaits ask ----------------------------------------

    def passes(self, mnemonic: str) -> int:
        """Matrix-pipe passes of an MFMA/WMMA mnemonic (0: not a matrix op)."""
        n = self._pass_cache.get(mnemonic)
        if n is None:
            n = 0
            if "mfma" in mnemonic or "wmma" in mnemonic or "smfmac" in mnemonic or "swmmac" in mnemonic:
                for rx, p in self._passes_re:
                    if rx.search(mnemonic):
                        n = p
                        break
            self._pass_cache[mnemonic] = n
        return n

    def issue_class(self, mnemonic: str, sem: InstrSem) -> str:
        """The issue class of one instruction (see `ISSUE_CLASSES`)."""
        fam = sem.family
        if sem.wait:
            return "wait"
        if sem.barrier:
            return "barrier"
        if sem.control:
            return "branch"
        if fam == "ds":
            return "ds"
        if fam == "smem":
            return "smem"
        if fam in ("global", "scratch", "flat", "buffer", "image"):
            return "vmem"
        if fam in ("tensor", "async", "export"):
            return fam
        if mnemonic == "s_nop":
            return "nop"
        if mnemonic.startswith("v_"):
            if self.passes(mnemonic):
                return "matrix"
            if "_f64" in mnemonic or "_b64" in mnemonic or "_i64" in mnemonic or "_u64" in mnemonic:
                return "valu64"
            if any(t in mnemonic for t in ("_exp_", "_log_", "_rcp_", "_rsq_", "_sqrt_", "_sin_", "_cos_")):
                return "trans"
            return "valu"
        if mnemonic.startswith("s_"):
            return "salu"
        return "other"

    def memory_kind(self, sem: InstrSem, ck: int) -> str:
        """The memory kind whose latency retires an op of `sem` on timeline `ck`."""
        if ck in (CK_XV, CK_XS):
            return "xcnt"
        if ck == CK_DS:
            if sem.engine == ENG_DMA:
                return "lds_dma"
            if sem.family in ("global", "scratch", "flat", "buffer"):
                return "flat"
            return "lds"
        if ck == CK_GDS:
            return "gds"
        if ck == CK_KM:
            return "smem"
        if ck in (CK_FLATV, CK_FLATL):
            return "flat"
        if ck == CK_TENSOR:
            return "tensor"
        if ck == CK_ASYNC:
            return "async"
        if ck == CK_EXP:
            return "export"
        if ck == CK_SAMPLE:
            return "sample"
        if ck == CK_BVH:
            return "bvh"
        if ck == CK_STORE:
            return "vmem_store"
        if ck == CK_LOAD:
            if sem.engine == ENG_DMA:
                return "lds_dma"
            if sem.family == "image":
                return "sample"
            return "vmem_load" if sem.late_dsts else "vmem_store"
        return "vmem_load"

    def op_latency(self, sem: InstrSem, ck: int) -> int:
        return self.latency[self.memory_kind(sem, ck)]

    # --- overrides --------------------------------------------------------------------------------

    def with_overrides(self, overrides: tuple[tuple[str, object], ...]) -> "LatencyModel":
        """A copy with `overrides` ("issue.valu", 8), ("latency.lds", 128), ("loop_trips", 4),
        ("matrix_passes.<regex>", 16) applied (validated by `load_overrides`)."""
        if not overrides:
            return self
        issue, latency = dict(self.issue), dict(self.latency)
        passes = list(self.matrix_passes)
        scalars = {name: getattr(self, name) for name in SCALARS}
        for key, value in overrides:
            section, _, name = key.partition(".")
            if section == "issue":
                issue[name] = int(value)  # type: ignore[arg-type]
            elif section == "latency":
                latency[name] = int(value)  # type: ignore[arg-type]
            elif section == "matrix_passes":
                passes = [(name, int(value))] + [(p, n) for p, n in passes if p != name]  # type: ignore[arg-type]
            else:
                scalars[key] = int(value)  # type: ignore[arg-type]
        return LatencyModel(self.family, issue, latency, tuple(passes), scalars["matrix_pass_cycles"],
                            scalars["lds_queue_depth"], scalars["loop_trips"], scalars["barrier_cycles"])

    def to_json(self) -> dict[str, object]:
        return {"family": self.family, "issue": dict(self.issue), "latency": dict(self.latency),
                "matrix_passes": dict(self.matrix_passes),
                **{name: getattr(self, name) for name in SCALARS}}


# --- override files ----------------------------------------------------------------------------


def _locate(text: str, key: str) -> tuple[int, int]:
    """1-based line and column of `key`'s first spelling in `text` (1, 1 when not found)."""
    for rx in (re.compile(r'"' + re.escape(key) + r'"'), re.compile(r"(?m)^\s*(" + re.escape(key) + r")\s*=")):
        m = rx.search(text)
        if m is not None:
            start = m.start(1) if m.groups() else m.start()
            line = text.count("\n", 0, start) + 1
            col = start - (text.rfind("\n", 0, start) + 1) + 1
            return line, col
    return 1, 1


def parse_overrides(text: str, path: str) -> tuple[tuple[str, object], ...]:
    """The overrides a latency-model file spells, flattened to (dotted key, value) pairs.

    JSON when the file name ends in `.json` or the text starts with `{`, TOML otherwise.  Shape:
    sections `issue`, `latency`, `matrix_passes` (regex -> passes) and the scalars of `SCALARS`
    at the top.  Unknown keys, non-integers and negatives are located errors."""
    stripped = text.lstrip()
    if path.endswith(".json") or stripped.startswith("{"):
        import json
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise LatencyModelError(path, e.lineno, e.colno, f"not valid JSON: {e.msg}") from None
    else:
        import tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            m = re.search(r"at line (\d+), column (\d+)", str(e))
            line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
            raise LatencyModelError(path, line, col, f"not valid TOML: {str(e).split(' (at line')[0]}") from None
    if not isinstance(data, dict):
        raise LatencyModelError(path, 1, 1, "a latency model is a table of sections (issue, latency, ...)")
    out: list[tuple[str, object]] = []

    def number(key: str, shown: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            line, col = _locate(text, shown)
            raise LatencyModelError(path, line, col, f"'{key}' must be a non-negative integer, not {value!r}")
        return value

    for key, value in data.items():
        if key in ("issue", "latency", "matrix_passes"):
            if not isinstance(value, dict):
                line, col = _locate(text, key)
                raise LatencyModelError(path, line, col, f"'{key}' must be a table")
            allowed = ISSUE_CLASSES if key == "issue" else MEMORY_KINDS if key == "latency" else None
            for name, v in value.items():
                if allowed is not None and name not in allowed:
                    line, col = _locate(text, name)
                    raise LatencyModelError(path, line, col, f"unknown {key} entry '{name}' "
                                                             f"(known: {', '.join(allowed)})")
                if allowed is None:
                    try:
                        re.compile(name)
                    except re.error as e:
                        line, col = _locate(text, name)
                        raise LatencyModelError(path, line, col, f"bad mnemonic pattern '{name}': {e}") from None
                out.append((f"{key}.{name}", number(f"{key}.{name}", name, v)))
        elif key in SCALARS:
            out.append((key, number(key, key, value)))
        elif key == "family":
            continue  # (what `to_json` writes: a dumped model reads back)
        else:
            line, col = _locate(text, key)
            raise LatencyModelError(path, line, col, f"unknown latency-model key '{key}' (known: issue, latency, "
                                                     f"matrix_passes, {', '.join(SCALARS)})")
    return tuple(out)


def load_overrides(path: str) -> tuple[tuple[str, object], ...]:
    """`parse_overrides` of a file; an unreadable file is a located error too."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise LatencyModelError(path, 1, 1, f"cannot read latency model: {getattr(e, 'strerror', None) or e}") \
            from None
    return parse_overrides(text, path)


# --- the building blocks the family modules use -----------------------------------------------

#: LLVM 22 SISchedule.td, SIDPGFX942FullSpeedModel / SIDPGFX950FullSpeedModel: MFMA passes
#: (WriteNPassMAI / WriteNPassDGEMM) by mnemonic, first match wins
MFMA_PASSES_GFX940 = (
    (r"^v_mfma_.*_4x4x", 2),
    (r"^v_mfma_.*_16x16x128_f8f6f4", 8), (r"^v_mfma_.*_32x32x64_f8f6f4", 16),
    (r"^v_mfma_f64_16x16x", 8),
    (r"^v_mfma_.32_16x16x(8x|16|32|64)", 4), (r"^v_mfma_.32_16x16x[14][fbi]", 8),
    (r"^v_mfma_.32_32x32x(4xf|8|16|32_)", 8), (r"^v_mfma_.32_32x32x[124][fbi]", 16),
    (r"^v_smfmac_.32_16x16x", 4), (r"^v_smfmac_.32_32x32x", 8),
    (r"^v_mfma_.*_16x16x", 8), (r"^v_mfma_.*_32x32x", 16), (r"^v_mfma_", 8),
)
#: LLVM 22 SISchedule.td, SIQuarterSpeedModel / SIDPFullSpeedModel (gfx908, gfx90a)
MFMA_PASSES_GFX90A = (
    (r"^v_mfma_.*_4x4x", 2), (r"^v_mfma_f64_16x16x", 8), (r"^v_mfma_f64_4x4x", 4),
    (r"^v_mfma_.*_16x16x", 8), (r"^v_mfma_.*_32x32x", 16), (r"^v_mfma_", 8),
)
#: LLVM 22 SISchedule.td, GFX125xCommonWriteRes: WriteXDL2PassWMMA (8 cycles) for f16/bf16/fp8,
#: WriteXDL4PassWMMA (16) for iu8/iu4 and f8 scaled, Write4PassWMMA for the f32 16x16x4
WMMA_PASSES_GFX1250 = (
    (r"^v_s?wmmac?_.*_(iu8|iu4)", 4), (r"^v_wmma_.*_16x16x128_f8f6f4", 4), (r"^v_wmma_f32_16x16x4_f32", 4),
    (r"^v_s?wmmac?_", 2),
)
#: RDNA 3/4 WMMA: no XDL pipe in LLVM's models (the VALU runs it); 16 cycles per 16x16x16 wave32
WMMA_PASSES_RDNA = ((r"^v_s?wmmac?_", 4),)


def issue_costs(every: int, **cls: int) -> dict[str, int]:
    """An issue table: `every` cycles for each class, `cls` the exceptions."""
    table = {c: every for c in ISSUE_CLASSES}
    table.update(cls)
    return table


def latencies(lds: int, smem: int, vmem: int, **kind: int) -> dict[str, int]:
    """A latency table from the three figures every family has; the DMA-like kinds cost a VMEM
    access plus an LDS write unless `kind` says otherwise."""
    table = {"lds": lds, "gds": lds, "smem": smem, "vmem_load": vmem, "vmem_store": vmem, "sample": vmem,
             "bvh": vmem, "flat": vmem, "tensor": vmem + lds, "async": vmem + lds, "lds_dma": vmem + lds,
             "export": 16, "xcnt": 24}
    table.update(kind)
    return table


def rdna_model(family: str) -> LatencyModel:
    """The wave32 RDNA families (gfx10, gfx11, gfx12): LLVM 22's GFX10/11/12SpeedModel agree on
    every figure we use -- one instruction a cycle, WriteLDS 20, WriteSMEM 20, WriteVMEM 320,
    WriteExport 16, WriteBranch 32; WMMA runs on the VALU, 16 cycles for a 16x16x16 wave32 op."""
    return LatencyModel(family, issue_costs(1, valu64=2, trans=4, branch_taken=32),
                        latencies(lds=20, smem=20, vmem=320), WMMA_PASSES_RDNA, matrix_pass_cycles=4,
                        lds_queue_depth=0, loop_trips=4, barrier_cycles=16)
