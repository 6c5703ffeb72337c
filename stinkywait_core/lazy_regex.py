"""`LazyPattern`: a regular expression compiled on first use.

Compiling costs a fresh process about 0.1-0.5 ms per pattern, and many patterns serve rare
input (a declaration comment, an unusual operand): a cold `stinkywait plan` should not pay for
the ones its file never needs.  Shared by the front end and the analyses.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any


class LazyPattern:
    """A `re.Pattern` stand-in: the first attribute access compiles the pattern and stores the
    common methods on the instance, so later calls cost what a compiled pattern's do."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._source)
        for method in ("match", "fullmatch", "search", "finditer", "findall", "sub", "split"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)
