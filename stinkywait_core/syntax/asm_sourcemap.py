"""Where each line of an expanded assembly file came from (`asm_preprocess`).

The analysis runs over the expansion, but everything it shows must point at the line the
user wrote in the open file: the outermost call site (a macro invocation, a ``.rept`` or an
``.include`` line) for expanded text, the line itself for the file's own lines.  The chain
of steps that produced an expanded line (macro NAME defined at file:line, included
file:line) is what the hover and ``--explain`` add ("in macro NAME (file:line)").
"""

from __future__ import annotations

import os

#: one step of an expansion: (kind, name, file, line): the text came from 1-based `line` of
#: `file`, inside `kind` ("macro", "rept", "irp", "irpc", "include") called `name`
Step = tuple
#: (1-based line in the open file, the steps from the outermost to the innermost; () for
#: the open file's own lines)
Origin = tuple


class SourceMap:
    """Per expanded line (0-based index), its `Origin`; plus the files the expansion read.

    `incomplete`: the located warnings that leave results incomplete (a missing include, an
    undefined macro or symbol); `insert` refuses such a file without ``--allow-incomplete``.
    """

    __slots__ = ("path", "origins", "includes", "incomplete", "chains")

    def __init__(self, path: str, origins: list[Origin], includes: list[str], incomplete: list) -> None:
        self.path = path
        self.origins = origins
        self.includes = includes
        self.incomplete = incomplete
        #: id(instruction) -> its steps (filled by the front door for expanded instructions)
        self.chains: dict[int, tuple] = {}

    def user_line(self, expanded_line: int) -> int:
        """The open file's 1-based line for a 1-based expanded line."""
        if 1 <= expanded_line <= len(self.origins):
            return self.origins[expanded_line - 1][0]
        return max(1, expanded_line)

    def steps(self, expanded_line: int) -> tuple:
        if 1 <= expanded_line <= len(self.origins):
            return self.origins[expanded_line - 1][1]
        return ()


def describe_steps(steps: tuple) -> str:
    """``in macro NAME (file.inc:12)``: the innermost macro (or repetition, or include) an
    expanded instruction came from, with the outer macros after it."""
    if not steps:
        return ""
    parts = []
    for kind, name, file, line in reversed(steps):
        where = f"{os.path.basename(file)}:{line}"
        if kind == "macro":
            parts.append(f"in macro {name} ({where})")
        elif kind == "include":
            parts.append(f"in {where}")
        else:
            parts.append(f"in {name} ({where})")
    return ", ".join(parts[:3]) + (", ..." if len(parts) > 3 else "")
