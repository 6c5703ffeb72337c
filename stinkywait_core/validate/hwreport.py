"""How the hardware checker's findings read: compiler-style lines and `Diagnostic` records.

One violation is an ``error`` at the consumer (what it does, which in-flight producer, the
wait it needs, the wait the path had), with two related locations: the producer, and the
path (block labels from the entry) that exposes it.
"""

from __future__ import annotations

from ..diagnostics import ERROR, WARNING, Diagnostic, Related
from ..ir.block_names import BlockNames
from ..ir import Instruction
from ..targets import Target
from .hwcheck import HwResult, HwViolation

_TEXT = {
    "raw": "reads {d}, which {p} still writes",
    "waw": "writes {d}, which {p} will still write when it completes",
    "war": "overwrites {d}, which {p} still reads (its source is not released)",
    "lds-raw": "reads LDS that {p} still writes [{d}]",
    "lds-waw": "writes LDS that {p} still writes [{d}]",
    "lds-war": "writes LDS that {p} still reads [{d}]",
    "barrier": "publishes LDS to the other waves while {p} still accesses it [{d}]",
    "isa-drain": "{d} ({p} is still in flight)",
    "return": "returns while {p} is still in flight",
    "entry": "runs at a callable function's entry while {d} may still be in flight (the callee waits, "
             "calling convention)",
}


def _loc(inst: Instruction) -> tuple[int, int]:
    return (inst.span.line, inst.span.col) if inst.span is not None else (0, 0)


def wait_text(target: Target, values: dict[str, int]) -> str:
    """The wait line(s) that enforce `values`, in the target's spelling."""
    return " + ".join(target.encode_waits(dict(values))) or "no wait"


def message(v: HwViolation, target: Target) -> str:
    pline = _loc(v.producer)[0]
    what = _TEXT[v.rule].format(d=v.detail, p=f"{v.producer.mnemonic} (line {pline})")
    present = [wait_text(target, {cn: x}) if x is not None else f"no {cn} wait" for cn, x in v.present.items()]
    proof = "" if v.proven else " (overlap not proven)"
    return (f"{v.consumer.mnemonic} {what}{proof}: needs {wait_text(target, v.needs)} before it, "
            f"found {', '.join(present) or 'no wait'} [hw-{v.rule}]")


def path_text(v: HwViolation, names: BlockNames | None = None) -> str:
    """"path: the entry -> L_start0": the blocks as the source names them (`names`, the
    module's `BlockNames`); without names, the block ids."""
    if names is None:
        return "path: " + " -> ".join(f"^{lab}" for lab in v.path)
    return "path: " + " -> ".join(names.block(v.function, lab) for lab in v.path)


def diagnostic(v: HwViolation, target: Target, names: BlockNames | None = None) -> Diagnostic:
    """An error for a proven hazard; a warning when it rests on an overlap not proven (an
    approximation is never an error)."""
    line, col = _loc(v.consumer)
    pline, pcol = _loc(v.producer)
    return Diagnostic(ERROR if v.proven else WARNING, f"hw-{v.rule}", message(v, target), line, col,
                      related=[Related(pline, pcol, f"entry of the callable function {v.function}" if v.rule == "entry"
                                       else f"producer {v.producer.mnemonic} issued here"),
                               Related(line, col, path_text(v, names))],
                      data={"needs": dict(v.needs), "path": list(v.path), "proven": v.proven},
                      function=v.function)


def format_result(res: HwResult, path: str, names: BlockNames | None = None) -> str:
    """Every violation of one function (error or warning + related notes) and the
    bounded/trip notice."""
    out: list[str] = []
    for v in res.violations:
        d = diagnostic(v, res.target, names)
        out.append(d.format(path))
        out.extend(f"{path}:{r.line}:{r.col}: note: {r.message}" for r in d.related)
    if res.notice:
        out.append(f"{path}: note: {res.function}: {res.notice}")
    return "\n".join(out)
