"""Whether an assembly text needs the expansion of `asm_preprocess` (includes, macros,
repetitions, conditionals).  Kept apart so that a plain file's cold run imports nothing of
the expansion: a substring test first, the line-anchored search only when one matches."""

from __future__ import annotations

import re

from ..lazy_regex import LazyPattern

_NEEDS = LazyPattern(r"^[ \t]*(?:[\w.$]+:[ \t]*)?\.(?:include|macro|rept|irpc?|if\w*|altmacro)\b",
                     re.MULTILINE | re.IGNORECASE)
#: the directives' names: a text without any of them needs no regex search at all
_MARKERS = (".include", ".macro", ".rept", ".irp", ".if", ".altmacro", ".INCLUDE", ".MACRO", ".REPT", ".IRP", ".IF")


def needs_expansion(text: str) -> bool:
    """Whether the text uses a directive `asm_preprocess.expand` handles (on a line of its own,
    after an optional label)."""
    return any(m in text for m in _MARKERS) and _NEEDS.search(text) is not None
