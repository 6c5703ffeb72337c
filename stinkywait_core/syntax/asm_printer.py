"""AMDGPU assembly printer: the original text plus whole inserted lines, nothing else.

The tool's output must diff cleanly against its input, so the printer never re-renders an
instruction from the IR.  It splices new lines into the original text at line boundaries,
reusing the file's own newline style and leaving a missing final newline missing.
"""

from __future__ import annotations

import re

from ..ir import Module

_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def format_wait(mnemonic: str, count: int) -> str:
    """``s_wait_dscnt 2``: the spelling of an inserted wait (decimal, as upstream prints)."""
    return f"{mnemonic} {int(count)}"


def newline_of(text: str) -> str:
    """The file's newline style: its first line break, ``\\n`` for a file without one."""
    m = _NEWLINE.search(text)
    return m.group() if m else "\n"


def insert_lines(text: str, insertions: list[tuple[int, str]]) -> str:
    """`text` with each ``(line, new_line)`` inserted before 1-based `line`.

    ``len(lines) + 1`` appends at the end.  Several insertions at one line keep list order.
    Inserted text gets the file's newline style; when the file lacks a final newline and
    lines are appended at the end, the separator goes before them and the output still ends
    without one.  Out-of-range line numbers are clamped to the nearest valid position so a
    stale request can never raise.
    """
    if not insertions:
        return text
    nl = newline_of(text)
    chunks = _LINE_WITH_END.findall(text)
    n = len(chunks)
    by_line: dict[int, list[str]] = {}
    for line, new in insertions:
        pos = min(max(int(line), 1), n + 1)
        by_line.setdefault(pos, []).extend(_NEWLINE.split(new))
    out: list[str] = []
    for i, chunk in enumerate(chunks, start=1):
        for new in by_line.get(i, ()):
            out.append(new + _break_before(nl, chunk, out))
        out.append(chunk)
    tail = by_line.get(n + 1)
    if tail:
        ends_open = bool(chunks) and not chunks[-1].endswith(("\n", "\r"))
        if ends_open:
            out.append(nl)
            out.append(nl.join(tail))
        else:
            out.extend(new + _break_before(nl, "", out) for new in tail)
    return "".join(out)


def _break_before(nl: str, following: str, emitted: list[str]) -> str:
    """The line break for an inserted line, avoiding an accidental ``\r`` + ``\n`` merge.

    In a file with mixed newlines a lone ``\r`` followed by ``\n`` (or an empty inserted line
    after a ``\r``) would read as a single ``\r\n`` break and swallow a line; ``\r\n`` is
    the unambiguous break in exactly those cases.
    """
    if nl == "\r" and following.startswith("\n"):
        return "\r\n"
    if nl == "\n" and emitted and emitted[-1].endswith("\r"):
        return "\r\n"
    return nl


def indentation_for(module: Module, line: int) -> str:
    """The indentation a new line inserted before `line` should use.

    Copies the nearest instruction line, looking forward first (the inserted wait belongs to
    the instruction it precedes) and then backward; files without instructions fall back to
    a tab, the convention of compiler-generated AMDGPU assembly.
    """
    lines = module.lines
    n = len(lines)
    start = min(max(line, 1), n + 1) - 1
    for i in range(start, n):
        if lines[i].kind == "instruction":
            return lines[i].indent
        if lines[i].kind not in ("comment", "blank", "label"):
            break
    for i in range(min(start, n) - 1, -1, -1):
        if lines[i].kind == "instruction":
            return lines[i].indent
    return "\t"
