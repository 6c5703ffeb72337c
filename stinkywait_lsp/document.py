"""The open documents' text: pygls' `TextDocument` with incremental changes applied the LSP way.

pygls applies an incremental change by splitting the whole text with `str.splitlines` and
rewriting it line by line in Python: 8 ms per keystroke on a 30k-line kernel (before the
analysis can even start), and `splitlines` also breaks lines at form feeds, U+2028 and the
like, which the LSP does not, so an edit below such a character lands on the wrong line.
Here an edit costs a slice of the text plus an update of the cached line starts (one pass
over a list of ints), and only \\r\\n, \\r and \\n end lines.

The server switches the workspace's documents to this class right after `initialize`
(`install`); everything else about them (version, language, `source`) is pygls'.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as T
from pygls.workspace import TextDocument

from .positions import line_starts


def code_points(line: str, units: int, encoding: str) -> int:
    """How many code points of `line` the first `units` client code units cover (clamped to
    the line)."""
    if units <= 0:
        return 0
    if line.isascii() or encoding == "utf-32":
        return min(units, len(line))
    seen = 0
    for i, ch in enumerate(line):
        if seen >= units:
            return i
        cp = ord(ch)
        if encoding == "utf-8":
            seen += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
        else:
            seen += 2 if cp > 0xFFFF else 1
    return len(line)


class LspDocument(TextDocument):
    """A pygls document whose incremental changes follow the LSP's line breaks."""

    def _starts(self, text: str) -> list[int]:
        cached = getattr(self, "_lsp_starts", None)
        if cached is None or cached[0] is not text:
            cached = (text, line_starts(text))
            self._lsp_starts = cached
        return cached[1]

    def _encoding(self) -> str:
        enc = getattr(self._position_codec, "encoding", T.PositionEncodingKind.Utf16)
        return str(getattr(enc, "value", enc))

    def _offset(self, text: str, starts: list[int], pos: T.Position) -> int:
        if pos.line >= len(starts):
            return len(text)
        start = starts[pos.line]
        end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
        line = text[start:end]
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        elif line.endswith("\r"):
            line = line[:-1]
        return start + code_points(line, pos.character, self._encoding())

    def _apply_incremental_change(self, change: T.TextDocumentContentChangePartial) -> None:
        text = self.source
        starts = self._starts(text)
        first, last = change.range.start, change.range.end
        a = self._offset(text, starts, first)
        b = max(a, self._offset(text, starts, last))
        new = text[:a] + change.text + text[b:]
        self._source = new
        if "\r" in text or "\r" in change.text:
            return  # a \r next to the edit may pair up with a \n: the starts are recomputed
        # \n only: the lines before the edit keep their starts, those after it shift
        l0 = min(first.line, len(starts) - 1)
        l1 = min(max(last.line, l0), len(starts) - 1)
        delta = len(change.text) - (b - a)
        tail = starts[l1 + 1:]
        stop = tail[0] + delta - 1 if tail else len(new)
        middle = []
        p = new.find("\n", starts[l0], stop)
        while p != -1:
            middle.append(p + 1)
            p = new.find("\n", p + 1, stop)
        self._lsp_starts = (new, starts[:l0 + 1] + middle + [s + delta for s in tail])


def install(workspace: Any) -> bool:
    """Make `workspace` create `LspDocument`s from now on; False when this pygls has no
    such hook (its own documents are then kept)."""
    make = getattr(workspace, "_create_text_document", None)
    if make is None:
        return False

    def create(*args: Any, **kwargs: Any) -> TextDocument:
        doc = make(*args, **kwargs)
        if type(doc) is TextDocument:
            doc.__class__ = LspDocument
        return doc

    workspace._create_text_document = create
    return True
