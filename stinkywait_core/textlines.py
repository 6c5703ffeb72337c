"""Lines as both front ends number them, and whole-line insertions (shared by the front
door, the review and the CLIs)."""

from __future__ import annotations

import re


def physical_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as both front ends number them: only ``\r\n``, ``\r`` and ``\n``
    end a line (`str.splitlines` also breaks at form feeds, ``\x0b``, ``\x1c``-``\x1e``,
    NEL and U+2028/9, which would shift every line number after one of them)."""
    if keepends:
        return _LINE.findall(text)
    from .syntax.asm_parser import split_lines  # the front ends' own rule (a str.split per line)
    return split_lines(text)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def apply_insertions(text: str, insertions: list[tuple[int, str]], drop: set[int] = frozenset()) -> str:
    """Insert whole lines before 1-based line numbers (stable), dropping the lines in `drop`."""
    lines = physical_lines(text, keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    by_line: dict[int, list[str]] = {}
    for ln, t in insertions:
        by_line.setdefault(ln, []).append(t if t.endswith("\n") else t + nl)
    out: list[str] = []
    for i, line in enumerate(lines, start=1):
        out.extend(by_line.get(i, ()))
        if i not in drop:
            out.append(line)
    tail = by_line.get(len(lines) + 1, [])
    if tail and out and not out[-1].endswith("\n"):
        out[-1] = out[-1] + nl
    out.extend(tail)
    return "".join(out)
