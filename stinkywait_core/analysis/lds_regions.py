"""User-declared LDS regions: the one comment that names disjoint parts of LDS.

Syntax (a line comment anywhere in the file, ``//`` or ``;``)::

    // stinkywait: lds-region <name> <start> <end> [<register> ...]

declares that LDS bytes ``[start, end)`` (decimal or ``0x`` hex) form region `<name>`.  A
declaration inside a kernel (between its label and its last line) applies to that kernel; one
outside every kernel applies to all kernels of the file.  The regions of one kernel must not
overlap (an error otherwise, and the overlapping declaration is ignored).

An LDS access is tied to a region

* by a register: an access whose LDS base is one of the listed registers (a DS address
  VGPR, the LDS-address VGPR of an async load/store, the SGPR holding dword 1 of a tensor
  descriptor's group 0, or ``m0`` for GFX9 LDS DMA) belongs to the region, wherever it is;
* or by the instruction's own trailing comment ``lds-region: <name>`` (which wins).

The tool trusts a tie: the access touches only bytes of its region.  It uses the region only
where its own analysis has no range for the access, and warns where the two disagree (a
proven range outside the declared region); explanations say when a result rests on a
declaration.

A second declaration, scoped the same way, bounds the launch when the metadata does not::

    // stinkywait: workgroup-size <n>            (at most n work-items per workgroup)
    // stinkywait: workgroup-size <x> <y> <z>    (exactly x*y*z, as ``.reqd_workgroup_size``)

It bounds the wave index and the work-item ids (without it: the metadata's
``.max_flat_workgroup_size``, else 1024); a kernel launched larger would be analysed wrongly,
and explanations say the size is the user's word.
"""

from __future__ import annotations

from ..diagnostics import ERROR, WARNING, Diagnostic
from ..ir import Function, Instruction, Reg
from ..lazy_regex import LazyPattern

_DECL = LazyPattern(r'(?://|;)[ \t]*stinkywait:[ \t]*lds-region\b([^\n]*)')
_WGS = LazyPattern(r'(?://|;)[ \t]*stinkywait:[ \t]*workgroup-size\b([^\n]*)')
_TAG = LazyPattern(r'\blds-region:[ \t]*([A-Za-z_][\w.]*)')
_NAME = LazyPattern(r'[A-Za-z_][\w.]*$')
_REG = LazyPattern(r'(v|s|a|ttmp)(\d+)$|(v|s|a|ttmp)\[(\d+):(\d+)\]$|(m0)$')


class Region:
    """A declared region: bytes [start, end) named `name`, tied registers (unit keys), the
    1-based line of its declaration."""

    __slots__ = ("name", "start", "end", "regs", "line")

    def __init__(self, name: str, start: int, end: int, regs: frozenset, line: int) -> None:
        self.name = name
        self.start = start
        self.end = end
        self.regs = regs
        self.line = line

    def __repr__(self) -> str:
        return f"<region {self.name} [{self.start:#x}, {self.end:#x}) line {self.line}>"

    def describe(self) -> str:
        return f"region {self.name} [{self.start:#x}, {self.end:#x}) declared at line {self.line}"


def _int(tok: str) -> int | None:
    try:
        return int(tok, 0)
    except ValueError:
        return None


def _reg_units(tok: str) -> list | None:
    m = _REG.match(tok)
    if m is None:
        return None
    if m.group(6):
        return [("m", 0)]
    if m.group(1):
        return [(m.group(1), int(m.group(2)))]
    lo, hi = int(m.group(4)), int(m.group(5))
    if hi < lo:
        return None
    return [(m.group(3), u) for u in range(lo, hi + 1)]


def parse_regions(text: str, functions: list[Function]) -> tuple[dict, list[Diagnostic]]:
    """Declared regions by function (every function gets the file-level ones), and the
    diagnostics of malformed or overlapping declarations."""
    diags: list[Diagnostic] = []
    if "lds-region" not in text:
        return {}, diags
    spans = [(f.span.line, f.span.end_line, f) for f in functions if f.span is not None]
    per: dict = {f: [] for f in functions}
    file_level: list[Region] = []
    line = 1
    last = 0
    for m in _DECL.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        col = m.start() - text.rfind("\n", 0, m.start())
        toks = m.group(1).split()
        region = _parse_decl(toks, line, col, diags)
        if region is None:
            continue
        owner = next((f for lo, hi, f in spans if lo <= line <= hi), None)
        scope = per[owner] if owner is not None else file_level
        clash = next((r for r in scope if r.start < region.end and region.start < r.end), None)
        if clash is not None:
            diags.append(Diagnostic(ERROR, "lds-region-overlap",
                                    f"lds-region {region.name} [{region.start:#x}, {region.end:#x}) overlaps "
                                    f"{clash.describe()}: declared regions must be disjoint (ignored)", line, col))
            continue
        if any(r.name == region.name for r in scope):
            diags.append(Diagnostic(ERROR, "lds-region-syntax", f"lds-region {region.name} is declared twice (ignored)",
                                    line, col))
            continue
        scope.append(region)
    out: dict = {}
    for f in functions:
        regs = list(per[f])
        for r in file_level:
            if any(x.start < r.end and r.start < x.end or x.name == r.name for x in regs):
                diags.append(Diagnostic(WARNING, "lds-region-overlap",
                                        f"file-level {r.describe()} overlaps a region of {f.name}: not applied there",
                                        r.line, 1))
                continue
            regs.append(r)
        if regs:
            out[f] = regs
    return out, diags


def parse_workgroup_sizes(text: str, functions: list[Function]) -> tuple[dict, list[Diagnostic]]:
    """Declared workgroup sizes by function: ((x, y, z) or (n,), line); and diagnostics."""
    diags: list[Diagnostic] = []
    if "workgroup-size" not in text:
        return {}, diags
    spans = [(f.span.line, f.span.end_line, f) for f in functions if f.span is not None]
    per: dict = {}
    file_level = None
    line, last = 1, 0
    for m in _WGS.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        col = m.start() - text.rfind("\n", 0, m.start())
        nums = [_int(t) for t in m.group(1).split()]
        if len(nums) not in (1, 3) or any(n is None or n < 1 or n > 1024 for n in nums) or \
                (len(nums) == 3 and nums[0] * nums[1] * nums[2] > 1024):
            diags.append(Diagnostic(ERROR, "lds-workgroup-syntax",
                                    "expected `stinkywait: workgroup-size <n>` or `... <x> <y> <z>` "
                                    "(1 to 1024 work-items)", line, col))
            continue
        owner = next((f for lo, hi, f in spans if lo <= line <= hi), None)
        if owner is None:
            file_level = (tuple(nums), line)
        else:
            per[owner] = (tuple(nums), line)
    if file_level is not None:
        for f in functions:
            per.setdefault(f, file_level)
    return per, diags


def _parse_decl(toks: list, line: int, col: int, diags: list) -> Region | None:
    usage = "expected `stinkywait: lds-region <name> <start> <end> [<register> ...]`"
    if len(toks) < 3 or not _NAME.match(toks[0]):
        diags.append(Diagnostic(ERROR, "lds-region-syntax", f"malformed lds-region declaration: {usage}", line, col))
        return None
    start, end = _int(toks[1]), _int(toks[2])
    if start is None or end is None or start < 0 or end <= start:
        diags.append(Diagnostic(ERROR, "lds-region-syntax",
                                f"lds-region {toks[0]}: start and end must be byte offsets with start < end ({usage})",
                                line, col))
        return None
    regs: set = set()
    for t in toks[3:]:
        units = _reg_units(t)
        if units is None:
            diags.append(Diagnostic(ERROR, "lds-region-syntax",
                                    f"lds-region {toks[0]}: '{t}' is not a register (v12, s[4:5], m0)", line, col))
            return None
        regs.update(units)
    return Region(toks[0], start, end, frozenset(regs), line)


def instruction_tag(inst: Instruction) -> str | None:
    """The region named by the instruction's own ``lds-region: <name>`` comment."""
    c = inst.comment
    if not c or "lds-region" not in c:
        return None
    m = _TAG.search(c)
    return m.group(1) if m else None


def base_register(inst: Instruction) -> tuple | None:
    """The unit key of the register an access's LDS address comes from (see the module
    docstring), or None."""
    mn = inst.mnemonic
    srcs = inst.srcs
    if mn.startswith("ds_"):
        op = srcs[0] if srcs else None
    elif mn.startswith("global_store_async_from_lds"):
        op = srcs[1] if len(srcs) > 1 else None
    elif mn.startswith(("global_load_async_to_lds", "cluster_load_async_to_lds")):
        op = srcs[0] if srcs else None
    elif mn.startswith("tensor_"):
        op = srcs[0] if srcs else None
        if type(op) is Reg:
            return (op.kind, op.lo + 1)
        return None
    else:
        return ("m", 0)
    if type(op) is Reg:
        return (op.kind, op.lo)
    return None


def tie(inst: Instruction, regions: list[Region]) -> Region | None:
    """The region an access is tied to, if any."""
    tag = instruction_tag(inst)
    if tag is not None:
        return next((r for r in regions if r.name == tag), None)
    key = base_register(inst)
    if key is None:
        return None
    return next((r for r in regions if key in r.regs), None)
