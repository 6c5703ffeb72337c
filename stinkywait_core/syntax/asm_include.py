"""Finding and reading the file an ``.include "x.inc"`` names, the way llvm-mc does.

Search order: the folder of the file holding the ``.include``, then each ``-I DIR`` in order,
then the editor's ``stinkywait.includePaths``.  The front door passes all directories as one
list (command line first).  `read` lets the language server serve an open editor buffer
instead of the file on disk (the buffer's text wins).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    #: absolute path -> the file's text, or None when it cannot be read
    Reader = Callable[[str], "str | None"]


def read_from_disk(path: str) -> str | None:
    """The file's text (bad UTF-8 replaced), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def resolve_include(name: str, including_file: str, dirs: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """(the absolute path found, or None; the directories searched, in order)."""
    searched: list[str] = []
    if os.path.isabs(name):
        return (name if os.path.isfile(name) else None), searched
    here = os.path.dirname(os.path.abspath(including_file)) if including_file and not including_file.startswith("<") \
        else os.getcwd()
    for d in (here, *dirs):
        if not d:
            continue
        searched.append(d)
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return os.path.abspath(cand), searched
    return None, searched
