"""Structured diagnostics shared by every layer.

Everything a user sees (CLI error lines, LSP diagnostics, `plan --json`) is built from these
records; nothing downstream re-derives a location or a message.
"""

from __future__ import annotations

from .ir.records import FrozenRecord, Record

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
HINT = "hint"


class Related(FrozenRecord):
    """A secondary location of a diagnostic (immutable, hashable)."""

    __slots__ = ("line", "col", "message", "end_line", "end_col")
    line: int
    col: int
    message: str
    end_line: int | None
    end_col: int | None

    def __init__(self, line: int, col: int, message: str, end_line: int | None = None,
                 end_col: int | None = None) -> None:
        self._assign(line, col, message, end_line, end_col)


class Diagnostic(Record):
    """A located message.  Lines/columns are 1-based; `end_col` exclusive.  Compared by value."""

    __slots__ = ("severity", "code", "message", "line", "col", "end_line", "end_col", "related", "data",
                 "function")
    severity: str
    code: str
    message: str
    line: int
    col: int
    end_line: int | None
    end_col: int | None
    related: list[Related]
    data: dict[str, Any]
    function: str | None

    def __init__(self, severity: str, code: str, message: str, line: int = 1, col: int = 1,
                 end_line: int | None = None, end_col: int | None = None, related: list[Related] | None = None,
                 data: dict[str, Any] | None = None, function: str | None = None) -> None:
        self.severity = severity
        self.code = code
        self.message = message
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.related = [] if related is None else related
        self.data = {} if data is None else data
        self.function = function

    def format(self, path: str) -> str:
        """`file:line:col: severity: message [code]`, the compiler-style line."""
        return f"{path}:{self.line}:{self.col}: {self.severity}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "code": self.code, "line": self.line,
                "column": self.col, "message": self.message}


class SourceError(Exception):
    """A fatal, located input error (the CLI prints it and exits non-zero)."""

    def __init__(self, diag: Diagnostic):
        super().__init__(diag.message)
        self.diag = diag
