"""The insertion pass's plan as IR, for the hardware checker's tests and benchmarks.

`planned(text, options)` parses a file (asm or STIR), runs the pass as every stinkywait command
does (hardware model: no LDS pseudo registers attached) and emits its waits into the IR, so
the checker runs on exactly what the pass decided.  The waits it inserted are returned, so a
test can weaken the plan programmatically: `drop(wait)` removes one, `relax(wait)` raises its
value by one (one more op may stay in flight), `restore` undoes either.
"""

from __future__ import annotations

from stinkywait_core.analysis.implicit_deps import build_implicit_dependencies
from stinkywait_core.ir import Function, Imm, Instruction, Module
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.waitcnt.pipeline import emit_waits, plan_function


class Planned:
    """One function with the pass's waits inserted (`waits`, in program order)."""

    def __init__(self, module: Module, func: Function, waits: list[Instruction]) -> None:
        self.module, self.func, self.waits = module, func, waits
        self._undo: list = []

    def anchor(self, wait: Instruction) -> Instruction:
        """The instruction a wait was inserted before (the next one not inserted)."""
        instrs = wait.block.instrs
        for inst in instrs[instrs.index(wait) + 1:]:
            if not inst.inserted:
                return inst
        return wait

    def waits_before(self, line: int) -> list[Instruction]:
        return [w for w in self.waits if self.anchor(w).line == line]

    def drop(self, wait: Instruction) -> None:
        instrs = wait.block.instrs
        i = instrs.index(wait)
        del instrs[i]
        self._undo.append(lambda: instrs.insert(i, wait))

    def relax(self, wait: Instruction) -> None:
        old = wait.srcs
        wait.srcs = [Imm(old[0].value + 1)] + list(old[1:])
        self._undo.append(lambda: setattr(wait, "srcs", old))

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()


def planned(text: str, options: Options, path: str = "t.s", language: str | None = None) -> Planned:
    """Parse `text`, plan its first function with `options`, insert the waits."""
    module = parse(text, path, language)
    assert module.functions, module.diagnostics
    func = module.functions[0]
    build_implicit_dependencies(func, None, attach=options.model == "upstream")
    po = plan_function(func, options)
    waits = emit_waits(po)
    order = {id(i): k for k, i in enumerate(func.instructions())}
    waits.sort(key=lambda w: order[id(w)])
    return Planned(module, func, waits)
