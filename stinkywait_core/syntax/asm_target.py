"""What an AMDGPU assembly file says about its target: processor, features, wave size.

The signals, strongest first (the first of the strongest kind decides the processor; a later
one that disagrees is a warning):

1. ``.amdgcn_target "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"`` (code object v3+), anywhere
   in the file (hand-written kernels often have it last);
2. ``.amd_amdgpu_isa "amdgcn-amd-amdhsa--gfx906+xnack"`` (code object v2);
3. ``.hsa_code_object_isa 9,0,6,"AMD","AMDGPU"`` (major, minor, stepping: gfx906);
4. ``amdhsa.target: amdgcn-amd-amdhsa--gfx942`` in the ``.amdgpu_metadata`` YAML.

Kernel descriptors (``.amdhsa_kernel`` blocks) and the metadata give the wave size
(``.amdhsa_wavefront_size32``, ``.wavefront_size``) and ``.amdhsa_tg_split``; the other
``.amdhsa_*`` values are collected per kernel for the machine model.  Guessing a target from
mnemonics is not done here: it is a heuristic, and belongs to the editor.

Only directive lines and the lines of those two kinds of verbatim blocks are read.
"""

from __future__ import annotations

from ..diagnostics import WARNING, Diagnostic
from ..ir import Span, TargetInfo
from .asm_expr import _int_value
from .asm_lex import _INT, _Pattern

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from .asm_structure import _AsmState

_PROCESSOR = _Pattern(r'gfx[0-9a-f]{3,4}|gfx\d+(?:-\d+)?-generic')
_HEX = frozenset("0123456789abcdef")
_STRENGTH = {".amdgcn_target": 0, ".amd_amdgpu_isa": 1, ".hsa_code_object_isa": 2, "amdhsa.target": 3}


def parse_target_id(text: str) -> tuple[str, dict[str, bool]] | None:
    """(processor, {feature: on}) of a target id, None if `text` is not one.

    Accepts the v3+ spelling (``...--gfx942:sramecc+:xnack-``) and the v2 one
    (``...--gfx906+xnack``, a feature named with ``+`` is on).
    """
    # string operations, not a regular expression: compiling one costs a cold process more
    # than reading every target line of a file
    parts = text.strip().split("-", 4)  # arch-vendor-os-environment-processor[features]
    if len(parts) != 5 or parts[0] not in ("amdgcn", "r600"):
        return None
    processor, colon, v3 = parts[4].partition(":")
    processor, plus, v2 = processor.partition("+")
    cpu = processor.lower()
    if not _is_processor(cpu):
        return None
    features: dict[str, bool] = {}
    if colon:
        for feat in v3.split(":"):
            if feat.endswith(("+", "-")):
                features[feat[:-1].lower()] = feat.endswith("+")
    elif plus:
        for feat in v2.split("+"):
            features[feat.lower()] = True
    return cpu, features


def _is_processor(cpu: str) -> bool:
    """``gfxNNN[N]`` (hex digits) or a generic target (``gfx9-4-generic``)."""
    if not cpu.startswith("gfx"):
        return False
    body = cpu[3:]
    if 3 <= len(body) <= 4 and set(body) <= _HEX:
        return True
    return body.endswith("-generic") and _PROCESSOR.fullmatch(cpu) is not None


def _code_object_isa(args: str) -> str | None:
    """``9,0,6,"AMD","AMDGPU"`` -> ``gfx906`` (the stepping is a hex digit: 10 -> ``a``)."""
    parts = [p.strip() for p in args.split(",")]
    if len(parts) < 3 or not all(_INT.fullmatch(p) for p in parts[:3]):
        return None
    major, minor, stepping = (_int_value(p) for p in parts[:3])
    if not (6 <= major <= 12 and 0 <= minor <= 15 and 0 <= stepping <= 15):
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


class _Candidate:
    __slots__ = ("strength", "cpu", "target_id", "features", "span")

    def __init__(self, strength: int, cpu: str, target_id: str, features: dict[str, bool], span: Span) -> None:
        self.strength, self.cpu, self.target_id, self.features, self.span = strength, cpu, target_id, features, span


def detect_target(st: _AsmState) -> tuple[TargetInfo, list[Diagnostic]]:
    """The file's `TargetInfo` and the warnings of its target signals (malformed or
    conflicting target ids)."""
    raw, syntax = st.raw, st.syntax
    diags: list[Diagnostic] = []
    candidates: list[_Candidate] = []
    descriptors: dict[str, dict[str, int]] = {}
    waves: dict[str, int] = {}

    def line_span(idx: int) -> Span:
        text = raw[idx]
        start = len(text) - len(text.lstrip())
        return Span(idx + 1, start + 1, idx + 1, len(text.rstrip()) + 1)

    def warn(idx: int, message: str) -> None:
        sp = line_span(idx)
        diags.append(Diagnostic(WARNING, "asm-target", message, sp.line, sp.col, sp.end_line, sp.end_col))

    def offer(strength: int, text: str, idx: int, what: str) -> None:
        parsed = parse_target_id(text)
        if parsed is None:
            warn(idx, f"{what}: '{text}' is not an AMDGPU target id (arch-vendor-os-env-gfxNNN[:feature+/-])")
            return
        candidates.append(_Candidate(strength, parsed[0], text, parsed[1], line_span(idx)))

    for idx in st.directive_idx:
        ls = syntax[idx]
        d = ls.directive
        if d == ".amdgcn_target" or d == ".amd_amdgpu_isa":
            offer(_STRENGTH[d], ls.args.strip().strip('"'), idx, d)
        elif d == ".hsa_code_object_isa":
            cpu = _code_object_isa(ls.args)
            if cpu is None:
                if ls.args.strip():
                    warn(idx, f".hsa_code_object_isa: cannot read a processor from '{ls.args.strip()}'")
            else:
                candidates.append(_Candidate(_STRENGTH[d], cpu, ls.args.strip(), {}, line_span(idx)))
        elif d == ".amdhsa_kernel":
            descriptors[ls.args.strip()] = _kernel_descriptor(raw, idx)
        elif d == ".amdgpu_metadata":
            for j, line in _block_lines(raw, idx, ".end_amdgpu_metadata"):
                key, _, value = line.strip().partition(":")
                if key.rstrip() == "amdhsa.target":
                    offer(_STRENGTH["amdhsa.target"], value.strip().strip("'\""), j, "amdhsa.target")
            waves.update(_metadata_waves(raw, idx))
    info = TargetInfo(kernel_descriptors=descriptors)
    if candidates:
        best = min(candidates, key=lambda c: c.strength)  # the first of the strongest kind
        info.cpu, info.target_id, info.span = best.cpu, best.target_id, best.span
        info.xnack, info.sramecc = best.features.get("xnack"), best.features.get("sramecc")
        for c in candidates:
            differs = c.cpu != best.cpu or any(best.features.get(k, v) != v for k, v in c.features.items())
            if c is not best and differs:
                diags.append(Diagnostic(WARNING, "asm-target", f"target '{c.target_id}' disagrees with "
                                        f"'{best.target_id}' on line {best.span.line} (that one is used)",
                                        c.span.line, c.span.col, c.span.end_line, c.span.end_col))
    for name, fields in descriptors.items():
        if "amdhsa_wavefront_size32" in fields:
            waves[name] = 32 if fields["amdhsa_wavefront_size32"] else 64
    split = [fields["amdhsa_tg_split"] for fields in descriptors.values() if "amdhsa_tg_split" in fields]
    info.tgsplit = any(split) if split else None
    info.kernel_wavefront_size = waves
    sizes = set(waves.values())
    if len(sizes) == 1:
        info.wavefront_size = sizes.pop()
    elif not sizes and info.cpu is not None and _generation(info.cpu) <= 9:
        info.wavefront_size = 64
    return info, diags


def moved_target(info: TargetInfo, from_idx: int, delta: int) -> TargetInfo:
    """The previous version's target after an edit of plain lines that ends at line index
    `from_idx` and changes the line count by `delta` (nothing it was read from changed)."""
    sp = info.span
    if not delta or sp is None or sp.line - 1 < from_idx:
        return info
    return TargetInfo(info.cpu, info.target_id, Span(sp.line + delta, sp.col, sp.end_line + delta, sp.end_col),
                      info.xnack, info.sramecc, info.tgsplit, info.wavefront_size, info.kernel_wavefront_size,
                      info.kernel_descriptors)


def _generation(cpu: str) -> int:
    """The major generation of a processor name (``gfx90a`` -> 9, ``gfx1250`` -> 12)."""
    digits = cpu[3:].split("-")[0]
    if "generic" in cpu:
        return int(digits) if digits.isdigit() else 99
    return int(digits[:-2]) if len(digits) >= 3 and digits[:-2].isdigit() else 99


def _block_lines(raw: list[str], start: int, end_word: str):  # type: ignore[no-untyped-def]
    """(index, line) of the lines of the verbatim block opened at line index `start`."""
    for j in range(start + 1, len(raw)):
        line = raw[j]
        if line.strip().lower().startswith(end_word):
            return
        yield j, line


def _kernel_descriptor(raw: list[str], start: int) -> dict[str, int]:
    """{directive without the dot: integer value} of an ``.amdhsa_kernel`` block."""
    out: dict[str, int] = {}
    for _, line in _block_lines(raw, start, ".end_amdhsa_kernel"):
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0].startswith(".amdhsa_"):
            value = parts[1].split("//")[0].split(";")[0].strip()
            if _INT.fullmatch(value):
                out[parts[0][1:].lower()] = _int_value(value)
    return out


def _metadata_waves(raw: list[str], start: int) -> dict[str, int]:
    """{kernel name: wave size} from the metadata's ``amdhsa.kernels`` list: each kernel entry's
    ``.wavefront_size``, named by its ``.symbol`` (without ``.kd``) or its own ``.name`` (the
    entry's arguments have names too, one level deeper)."""
    out: dict[str, int] = {}
    item_indent = -1
    name: str | None = None
    symbol: str | None = None
    wave: int | None = None

    def flush() -> None:
        label = symbol or name
        if label is not None and wave is not None:
            out[label] = wave

    for _, line in _block_lines(raw, start, ".end_amdgpu_metadata"):
        body = line.lstrip()
        indent = len(line) - len(body)
        if body.startswith("-"):
            rest = body[1:].lstrip()
            if rest.startswith(".") and (item_indent < 0 or indent == item_indent):
                flush()
                item_indent = indent
                name = symbol = wave = None
            indent += len(body) - len(rest)
            body = rest
        if item_indent < 0 or not body.startswith("."):
            continue
        key, colon, value = body.partition(":")
        if not colon:
            continue
        key, value = key.rstrip(), value.strip().strip("'\"")
        if key == ".symbol" and symbol is None:
            symbol = value[:-3] if value.endswith(".kd") else value
        elif key == ".name" and indent <= item_indent + 2 and name is None:
            name = value
        elif key == ".wavefront_size" and value in ("32", "64"):
            wave = int(value)
    flush()
    return out
