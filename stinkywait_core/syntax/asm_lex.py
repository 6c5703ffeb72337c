"""Lexing of AMDGPU assembly lines: physical lines, comments, operand-text segmentation and
the annotations that ride in comments (``/*v358*/`` VGPR notes, ``// st.token:N`` memtokens).

Everything here is a pure function of one line's text; nothing knows mnemonics.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..diagnostics import ERROR, WARNING
from ..lazy_regex import LazyPattern as _Pattern
from .asm_tables import MAX_REG_INDEX, REG_PREFIXES

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from .asm_records import ModData, Problem

LINE_CACHE_SIZE = 1 << 17

_LINE_BREAK = _Pattern(r"\r\n|\r|\n")
_COMMENT_START = _Pattern(r'"|/\*|//|;')
_LABEL = _Pattern(r'([A-Za-z_.$][\w.$@]*|\d+)[ \t]*:(?!:)')
_ASSIGN = _Pattern(r'([A-Za-z_.$][\w.$]*)[ \t]*=(?!=)[ \t]*')
_DIRECTIVE = _Pattern(r'\.[A-Za-z_][\w.$]*')
_MNEMONIC = _Pattern(r'[A-Za-z_][\w]*')
_INT = _Pattern(r'-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)')
_FLOAT = _Pattern(r'-?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+')
_IDENT = _Pattern(r'[A-Za-z_.$][\w.$@]*')
_FUNC_LIKE = _Pattern(r'[A-Za-z_]\w*\(.*\)', re.S)
_WRAPPER = _Pattern(r'(abs|neg|sext)\((.*)\)', re.S)
_REG_SINGLE = _Pattern(r'(acc|ttmp|[vsa])(\d{1,6})(?:\.[lh])?')
_REG_RANGE = _Pattern(r'(acc|ttmp|[vsa])\[([^\[\]]*)\](?:\.[lh])?')
_MOD_KEY = _Pattern(r'[A-Za-z_]\w*:')
_ANNOT = _Pattern(r'\s*([vsa])(?:(\d{1,6})|\[(\d{1,6}):(\d{1,6})\])\s*')
_TOKEN_MARK = _Pattern(r'st\.token:')
_TOKEN_LIST = _Pattern(r'st\.token:[ \t]*(\d{1,9}(?:[ \t]*,[ \t]*\d{1,9})*)(?!\d)')
_WAITCNT_FIELD = _Pattern(r'([A-Za-z_]+)\(([^()]*)\)')
_EXPR_CHARS = _Pattern(r'[\w.$@+\-*/%&|^<>~() \t]+')
_BAD_CHAR = _Pattern(r'[^\x20-\x7e\t]')
#: a line without these characters has no comment and no string: no masking needed
_MASK_CHARS = _Pattern(r'["/;#]')
_OPERATOR_END = frozenset("+-*/%&|^<>~!=:")
_OPERATOR_START = frozenset("+*/%&|^<>=")

#: Directives that open a block whose lines are passed through verbatim, and their ends.
VERBATIM_BLOCKS = {".amdhsa_kernel": ".end_amdhsa_kernel", ".amdgpu_metadata": ".end_amdgpu_metadata",
                   ".macro": ".endm", ".irp": ".endr", ".irpc": ".endr"}
_BLOCK_END_ALIASES = {".endm": (".endm", ".endmacro")}



def split_lines(text: str) -> list[str]:
    """Physical lines as an editor sees them (``\\r\\n``, ``\\n`` and ``\\r`` all end a line).

    A final newline does not start an extra line; the empty text has no lines.
    """
    if not text:
        return []
    lines = text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _mask_comments(text: str, in_comment: bool) -> tuple[str, list[tuple[int, int, str, str]], bool, str | None]:
    """Blank out comments (same length, so columns stay valid) and collect them.

    Returns (masked code, comments as (start, end, content, style), ends inside ``/*``,
    problem message).  Quoted strings are skipped so a ``;`` in ``.ascii "a;b"`` is not a
    comment start.
    """
    n = len(text)
    comments: list[tuple[int, int, str, str]] = []
    out: list[str] = []
    i = 0
    if in_comment:
        j = text.find("*/")
        if j < 0:
            return " " * n, [(0, n, text, "/*")], True, None
        comments.append((0, j + 2, text[:j], "/*"))
        out.append(" " * (j + 2))
        i = j + 2
    else:
        stripped = text.lstrip(" \t")
        if stripped.startswith("#"):
            s = n - len(stripped)
            return text[:s] + " " * (n - s), [(s, n, stripped[1:], "#")], False, None
    problem: str | None = None
    while i < n:
        m = _COMMENT_START.search(text, i)
        if m is None:
            out.append(text[i:])
            break
        s = m.start()
        out.append(text[i:s])
        tok = m.group()
        if tok == '"':
            e = s + 1
            while e < n and text[e] != '"':
                e += 2 if text[e] == "\\" else 1
            if e >= n:
                problem = "unterminated string"
                out.append(text[s:])
                i = n
                break
            out.append(text[s:e + 1])
            i = e + 1
        elif tok == "/*":
            e = text.find("*/", s + 2)
            if e < 0:
                comments.append((s, n, text[s + 2:], "/*"))
                out.append(" " * (n - s))
                return "".join(out), comments, True, problem
            comments.append((s, e + 2, text[s + 2:e], "/*"))
            out.append(" " * (e + 2 - s))
            i = e + 2
        else:
            comments.append((s, n, text[s + len(tok):], tok))
            out.append(" " * (n - s))
            i = n
    return "".join(out), comments, False, problem



# --- operand text: top-level commas, blank-separated items ------------------------------------

_SPLIT_SPECIAL = _Pattern(r"[()\[\],]")
_ITEM_SPECIAL = _Pattern(r"[()\[\] \t]+")


def _split_top(code: str, start: int, end: int, sep: str) -> tuple[list[tuple[int, int]], Problem | None]:
    """Split code[start:end] at commas outside brackets; report unbalanced brackets.

    Only the bracket and comma characters are visited (a regex finds them), which keeps the
    per-line cost low on the common operand lists.
    """
    parts: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    seg = start
    for m in _SPLIT_SPECIAL.finditer(code, start, end):
        c = m.group()
        i = m.start()
        if c == "(" or c == "[":
            stack.append((c, i))
        elif c == sep:
            if not stack:
                parts.append((seg, i))
                seg = i + 1
        elif not stack or stack[-1][0] != ("(" if c == ")" else "["):
            return [], (ERROR, "asm-syntax", f"unbalanced '{c}'", i, i + 1)
        else:
            stack.pop()
    if stack:
        c, i = stack[-1]
        return [], (ERROR, "asm-syntax", f"unclosed '{c}'", i, end)
    parts.append((seg, end))
    return parts, None


def _strip_range(code: str, s: int, e: int) -> tuple[int, int]:
    while s < e and code[s] in " \t":
        s += 1
    while e > s and code[e - 1] in " \t":
        e -= 1
    return s, e


def _items(code: str, s: int, e: int) -> list[tuple[int, int]]:
    """Whitespace-separated items of code[s:e] at bracket depth 0, operator-joined.

    ``4 + 8`` stays one item; ``|v1| clamp`` is two (a closing abs bar is not an operator).
    Brackets are balanced here (`_split_top` checked them).
    """
    raw: list[tuple[int, int]] = []
    depth = 0
    item_start = s  # -1 while between items
    for m in _ITEM_SPECIAL.finditer(code, s, e):
        i = m.start()
        for c in m.group():
            if c == " " or c == "\t":
                if depth == 0 and item_start >= 0:
                    if i > item_start:
                        raw.append((item_start, i))
                    item_start = -1
            else:
                if item_start < 0:
                    item_start = i
                depth += 1 if c in "([" else -1
            i += 1
        if item_start < 0 and m.end() < e:
            item_start = m.end()
    if 0 <= item_start < e:
        raw.append((item_start, e))
    merged: list[tuple[int, int]] = []
    for rs, re_ in raw:
        if merged:
            ps, pe = merged[-1]
            # index checks only: slicing the growing item would be quadratic on huge lines
            prev_is_abs = pe - ps > 1 and code[pe - 1] == "|" and (
                code[ps] == "|" or (code[ps] == "-" and code[ps + 1] == "|"))
            joins = ((code[pe - 1] in _OPERATOR_END and not prev_is_abs)
                     or code[rs] in _OPERATOR_START or (re_ - rs == 1 and code[rs] == "-"))
            if joins:
                merged[-1] = (ps, re_)
                continue
        merged.append((rs, re_))
    return merged



def _split_list(text: str) -> list[str]:
    parts, problem = _split_top(text, 0, len(text), ",")
    if problem:
        return [text]
    return [text[s:e].strip() for s, e in parts if text[s:e].strip()]



def _clip(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[:n] + "..."



# --- annotations in comments -------------------------------------------------------------------

def _annotation_after(text: str, comments: dict[int, str], pos: int) -> tuple[str, int, int] | None:
    """A ``/*v358*/`` block comment right after an operand: LLVM's note of the physical
    register when ``s_set_vgpr_msb`` remaps the high VGPR bits.  We trust it, so that the
    dependency analysis sees the register the hardware really uses."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    content = comments.get(pos)
    return None if content is None else _annotation_from(content)


@lru_cache(maxsize=4096)
def _annotation_from(content: str) -> tuple[str, int, int] | None:
    """The physical register a ``/*v358*/`` comment's `content` names, or None (memoised:
    the same notes recur on many lines)."""
    m = _ANNOT.fullmatch(content)
    if not m:
        return None
    if m.group(2) is not None:
        lo = hi = int(m.group(2))
    else:
        lo, hi = int(m.group(3)), int(m.group(4))
    if lo > hi or hi > MAX_REG_INDEX:
        return None
    return (REG_PREFIXES[m.group(1)], lo, hi)



def _token_warnings(comment: str | None, text: str) -> tuple[Problem, ...]:
    """A well-formed ``st.token:N`` marker on a line without an instruction annotates
    nothing; say so (prose such as ``st.token:N`` in a header comment is left alone)."""
    if comment and _TOKEN_LIST.search(comment):
        m = _TOKEN_LIST.search(text)
        s, e = (m.start(), m.end()) if m else (0, len(text))
        return ((WARNING, "asm-memtoken", "st.token annotation on a line without an instruction is ignored", s, e),)
    return ()


def _memtoken(comment: str | None, s: int, e: int) -> tuple[ModData, tuple[Problem, ...]]:
    if not comment or not _TOKEN_MARK.search(comment):
        return (), ()
    tokens: list[int] = []
    for m in _TOKEN_LIST.finditer(comment):
        for t in m.group(1).split(","):
            v = int(t.strip())
            if v not in tokens:
                tokens.append(v)
    if not tokens:
        return (), ((WARNING, "asm-memtoken", "malformed st.token annotation (expected st.token:N[,M...])", s, e),)
    return (("memtoken", (("tokens", tuple(tokens)),)),), ()

