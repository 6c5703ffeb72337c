"""Structured diagnostics shared by every layer.

Everything a user sees (CLI error lines, LSP diagnostics, `plan --json`) is built from these
records; nothing downstream re-derives a location or a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
HINT = "hint"


@dataclass(frozen=True, slots=True)
class Related:
    line: int
    col: int
    message: str
    end_line: int | None = None
    end_col: int | None = None


@dataclass(slots=True)
class Diagnostic:
    """A located message.  Lines/columns are 1-based; `end_col` exclusive."""

    severity: str
    code: str
    message: str
    line: int = 1
    col: int = 1
    end_line: int | None = None
    end_col: int | None = None
    related: list[Related] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    function: str | None = None

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
