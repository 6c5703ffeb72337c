"""Small kernels for the LDS address analysis tests: a body of instructions made into a kernel,
its analysis, and instructions found by an ``// @tag`` comment (shared by test_lds_facts.py and
test_lds_precision.py)."""

from __future__ import annotations

import textwrap

from stinkywait_core.analysis.launch import LaunchInfo
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.syntax.asm_parser import parse_asm


def lds_kernel(body: str, launch: LaunchInfo | None, head: str = ""):
    """(text, module, function, its LdsFacts) of `body` as kernel ``k`` (parse errors fail)."""
    text = head + "k:\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n  s_endpgm\n"
    m = parse_asm(text, "t.s")
    errors = [d for d in m.diagnostics if d.severity == "error"]
    assert not errors, errors
    f = m.functions[0]
    return text, m, f, lds_facts(f, m, launch=launch)


def at(f, tag: str):
    """The instruction of `f` whose comment carries ``@tag``."""
    for b in f.blocks:
        for i in b.instrs:
            if i.comment and f"@{tag}" in i.comment.split():
                return i
    raise KeyError(tag)
