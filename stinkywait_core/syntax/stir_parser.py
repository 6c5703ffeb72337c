"""The STIR front end (formats.md sections 3-4): text -> `Module` with located diagnostics.

The parser is built for an editor that re-parses on every keystroke.  The file's structure
(``st.func`` headers, ``^block:`` headers, ``Successors:`` lines, labels, closing braces) is
recognised line by line by a small state machine, and each line is analysed by
`analyze_line`, a pure function of the line's text memoised in a bounded LRU cache.  The
cache holds only immutable data, which `parse_stir` turns into fresh IR objects, so an edit
re-runs the LALR parser only for the lines that changed.  Attribute dictionaries (`{ ... }`),
which repeat across lines far more than the rest of an instruction, have a cache of their
own, so even a cold parse of a real kernel skips most of them.

Bad input never raises: every problem becomes a `Diagnostic` located at its line and column,
and the lines around it still parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from lark import Lark, Token, Transformer
from lark.lexer import Lexer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from ..diagnostics import ERROR, WARNING, Diagnostic
from ..ir import Block, FloatImm, Function, Imm, Instruction, Modifier, Module, Operand, Reg, Span, Special, Str
from ..ir.nodes import bulk_construction
from ..ir.operands import NAMED_SPECIALS, PAIR_SPECIALS
from .stir_printer import default_cycles

# --- line kinds -------------------------------------------------------------------------------

BLANK = "blank"
FUNC = "func"
FUNC_END = "func_end"
BLOCK = "block"
SUCCS = "succs"
LABEL = "label"
INSTR = "instr"
BAD = "bad"
#: `st.metadata "name" {` (experimental upstream branch): a module-level block we skip
META = "meta"

#: deeper bracket nesting than this is refused up front, so no later step can recurse deeply
MAX_NESTING = 64
#: distinct lines remembered by the per-line cache (a 30k-line file fits)
LINE_CACHE_SIZE = 65536

#: register prefixes of the STIR parser -> register kind (`acc` is the AGPR file, like `a`);
#: the regex lists longer prefixes first so that `acc`/`ttmp` beat `a`
_REG_KIND = {"ttmp": "ttmp", "acc": "a", "LDS": "LDS", "SCC": "SCC", "v": "v", "s": "s", "a": "a",
             "m": "m"}
_REG_SINGLE_RE = re.compile(r"(ttmp|acc|LDS|SCC|v|s|a|m)(\d+)\Z")

_NAME = r"[A-Za-z0-9_.+$\-]+"
_FUNC_RE = re.compile(r"st\.func\s*@(" + _NAME + r")?\s*\(\s*\)\s*\{\Z")
_BLOCK_RE = re.compile(r"\^(" + _NAME + r")\s*:\Z")
_LABEL_RE = re.compile(r"([A-Za-z_.$][A-Za-z0-9_.$]*)\s*:\Z")
_SUCC_ITEM_RE = re.compile(r"\^(" + _NAME + r")\s*")
#: a string literal or the start of a line comment.  An unterminated string runs to the end
#: of the line: the pattern always matches at a quote, so no input makes it backtrack
#: quadratically (`\"\"\"...` over 300 kB once took minutes with a closing-quote-only form).
_LINE_COMMENT_RE = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|#|//')
#: strings, line comments and block comments over a whole text (block comments are blanked);
#: strings end at their quote or, unterminated, at the end of their line
_BLOCK_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*(?:"|\\?(?=\n|\Z))|#[^\n]*|//[^\n]*|/\*.*?\*/|/\*.*\Z',
                               re.S)
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_BLANKS_RE = re.compile(r"\s*")
#: an instruction up to its attribute dictionary: `{` outside strings (strings always match,
#: unterminated ones to the end, so the scan is linear)
_HEAD_RE = re.compile(r'(?:[^"{]+|"(?:[^"\\]|\\.)*(?:"|\\?\Z))*')


# --- immutable per-line results ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FrozenMap:
    """A nested `{ key = value }` modifier value, immutable so it can live in the line cache."""

    items: tuple[tuple[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """A diagnostic of one line; columns are 0-based offsets into the line, end exclusive."""

    severity: str
    message: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ModData:
    kind: str
    fields: tuple[tuple[str, Any], ...]
    raw: str
    #: every value is a scalar, so `dict(fields)` is already a fresh IR field dict
    flat: bool = True


@dataclass(frozen=True, slots=True)
class InstrData:
    """What one instruction line says, before it becomes an `Instruction`."""

    mnemonic: str
    dsts: tuple[Operand, ...]
    srcs: tuple[Operand, ...]
    mods: tuple[ModData, ...]
    #: (issue, latency) when the line gives either; the other one defaults (formats.md s.11)
    cycles: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class LineInfo:
    """The analysis of one source line (see `analyze_line`)."""

    kind: str
    start: int = 0
    end: int = 0
    name: str = ""
    name_start: int = 0
    name_end: int = 0
    succs: tuple[tuple[str, int, int], ...] = ()
    instr: InstrData | None = None
    problems: tuple[Problem, ...] = ()


class _LineError(Exception):
    """Raised inside the per-line parse; becomes a `Problem` (never escapes this module)."""

    def __init__(self, message: str, start: int, end: int):
        super().__init__(message)
        self.start = start
        self.end = end


# --- the LALR parser and its tree callbacks ----------------------------------------------------

@dataclass(frozen=True, slots=True)
class _RawOp:
    """An operand as the grammar saw it; resolved into an `Operand` once the line is known."""

    form: str
    start: int
    end: int
    parts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _RawDict:
    items: tuple[tuple[str, Any, int, int], ...]
    start: int
    end: int


def _unquote(tok: str) -> str:
    """Strip the quotes of a string token; escapes stay as written (as upstream does)."""
    return tok[1:-1]


#: token types of each operand alternative of the grammar -> the form `_operand` resolves
_OPERAND_FORMS = {
    ("IDENT",): "ident", ("REG_RANGE",): "range", ("IDENT", "INT", "RSQB"): "index",
    ("IDENT", "INT"): "index", ("MINUS", "IDENT"): "neg", ("MINUS", "REG_RANGE"): "negrange",
    ("INT",): "int", ("HEX",): "hex", ("FLOAT",): "float", ("STRING",): "string",
}
_VALUE_TOKENS = frozenset({"IDENT", "INT", "HEX", "FLOAT", "STRING"})
#: the parts of a REG_RANGE token: register file, low and high index
_RANGE_PARTS_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*(\d+)\s*:\s*(\d+)\s*\]")


class _Callbacks(Transformer):
    """Inline LALR callbacks: build small immutable records, no tree is ever materialised."""

    def operand(self, c: list[Any]) -> _RawOp:
        toks = [t for t in c if isinstance(t, Token)]
        types = tuple(t.type for t in toks)
        form = "call" if types[:2] == ("IDENT", "LPAR") else _OPERAND_FORMS[types]
        if form == "call":
            parts: tuple[str, ...] = (str(toks[0]),)
        elif types[-1] == "REG_RANGE":
            parts = _RANGE_PARTS_RE.fullmatch(str(toks[-1])).groups()
        else:
            parts = tuple(str(t) for t in toks if t.type in _VALUE_TOKENS)
        return _RawOp(form, toks[0].start_pos, toks[-1].end_pos, parts)

    def callargs(self, c: list[Any]) -> None:
        return None

    def dsts(self, c: list[Any]) -> tuple[_RawOp, ...]:
        return tuple(c)

    def args(self, c: list[Any]) -> tuple[_RawOp, ...]:
        return tuple(x for x in c if isinstance(x, _RawOp))

    def mnemonic(self, c: list[Any]) -> Token:
        return c[0]

    def v_int(self, c: list[Any]) -> int:
        return int(c[0])

    def v_hex(self, c: list[Any]) -> int:
        return int(str(c[0]), 16)

    def v_float(self, c: list[Any]) -> float:
        return float(c[0])

    def v_string(self, c: list[Any]) -> str:
        return _unquote(str(c[0]))

    def v_ident(self, c: list[Any]) -> bool | str:
        s = str(c[0])
        if s == "true":
            return True
        if s == "false":
            return False
        return s

    def v_list(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(_plain(x) for x in c if x is not None)

    def v_dict(self, c: list[Any]) -> _RawDict:
        items = tuple(x for x in c if isinstance(x, tuple))
        return _RawDict(items, c[0].start_pos, c[-1].end_pos)

    def field(self, c: list[Any]) -> tuple[str, Any, int, int]:
        return (str(c[0]), c[1], c[0].start_pos, c[0].end_pos)

    attr = field

    def attrs(self, c: list[Any]) -> tuple[tuple[str, Any, int, int], ...]:
        return tuple(x for x in c if isinstance(x, tuple))

    def head(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(c)


def _plain(value: Any) -> Any:
    """A modifier value without positions: nested dictionaries become `FrozenMap`s."""
    if isinstance(value, _RawDict):
        return FrozenMap(tuple((k, _plain(v)) for k, v, _s, _e in value.items))
    return value


class _BadCharacter(LarkError):
    """Raised by `_LineLexer` at a character no terminal matches."""

    def __init__(self, pos: int, char: str):
        super().__init__(f"unexpected character {char!r}")
        self.pos = pos
        self.char = char


class _LineLexer(Lexer):
    """One compiled alternation over the grammar's terminals, tokens without line counting.

    Lark's own lexers track line and column for every token; an instruction is one line,
    so that bookkeeping is pure overhead (it was over half of the parse time).  Terminals
    are tried in lark's order: higher priority first, regular expressions before literals.
    """

    __future_interface__ = 0

    def __init__(self, lexer_conf: Any):
        ignore = [t.pattern.to_regexp() for t in lexer_conf.terminals if t.name in lexer_conf.ignore]
        terms = sorted((t for t in lexer_conf.terminals if t.name not in lexer_conf.ignore),
                       key=lambda t: (-t.priority, t.pattern.type != "re", -len(t.pattern.value)))
        skip = "(?:" + "|".join(ignore) + ")*" if ignore else ""
        # blanks before a token are consumed by the same match, so one match per token
        self.regex = re.compile(skip + "(?:" + "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})"
                                                      for t in terms) + ")")
        self.tail = re.compile(skip + r"\Z")

    def lex(self, text: str) -> Any:
        match = self.regex.match
        pos = 0
        end = len(text)
        while pos < end:
            m = match(text, pos)
            if m is None:
                if self.tail.match(text, pos):
                    return
                while text[pos] in " \t\f\r\v":
                    pos += 1
                raise _BadCharacter(pos, text[pos])
            kind = m.lastgroup
            start = m.start(kind)
            pos = m.end()
            yield Token(kind, m.group(kind), start, 1, start + 1, 1, pos + 1, pos)


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The instruction-line parser (built once; grammar shipped as package data)."""
    grammar = resources.files(__package__).joinpath("stir_grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer=_LineLexer, transformer=_Callbacks(),
                maybe_placeholders=True, start=["head", "attrs"])


# --- operand resolution ------------------------------------------------------------------------

def _register(name: str, lo: int, hi: int, spelling: str, neg: bool, start: int, end: int) -> Reg:
    if name not in _REG_KIND:
        raise _LineError(f"unknown register type '{name}'", start, end)
    if hi < lo:
        raise _LineError(f"register range {spelling} has its upper bound below the lower one",
                         start, end)
    return Reg(_REG_KIND[name], lo, hi, neg, spelling)


def _ident_operand(name: str, spelling: str, neg: bool, start: int, end: int) -> Operand:
    """A bare identifier: a register when it names one, otherwise a special operand."""
    low = name.lower()
    if low in PAIR_SPECIALS:
        kind, lo, hi = PAIR_SPECIALS[low]
        return Reg(kind, lo, hi, neg, spelling)
    if name in NAMED_SPECIALS or low in ("scc", "m0"):
        kind, lo, hi = NAMED_SPECIALS[low]
        return Reg(kind, lo, hi, neg, spelling)
    m = _REG_SINGLE_RE.match(name)
    if m:
        n = int(m.group(2))
        return Reg(_REG_KIND[m.group(1)], n, n, neg, spelling)
    if neg:
        raise _LineError(f"'-' applies to registers only, not to '{name}'", start, end)
    if name.startswith("label_"):
        return Str(name, spelling)
    return Special(spelling)


def _operand(raw: _RawOp, line: str) -> Operand:
    spelling = line[raw.start:raw.end]
    p = raw.parts
    if raw.form == "ident":
        return _ident_operand(p[0], spelling, False, raw.start, raw.end)
    if raw.form == "neg":
        return _ident_operand(p[0], spelling, True, raw.start, raw.end)
    if raw.form == "range":
        return _register(p[0], int(p[1]), int(p[2]), spelling, False, raw.start, raw.end)
    if raw.form == "negrange":
        return _register(p[0], int(p[1]), int(p[2]), spelling, True, raw.start, raw.end)
    if raw.form == "index":
        return _register(p[0], int(p[1]), int(p[1]), spelling, False, raw.start, raw.end)
    if raw.form == "int":
        return Imm(int(p[0]), spelling)
    if raw.form == "hex":
        return Imm(int(p[0], 16), spelling)
    if raw.form == "float":
        return FloatImm(float(p[0]), spelling)
    if raw.form == "string":
        return Str(_unquote(p[0]), spelling)
    return Special(spelling)  # call form: hwreg(...), sendmsg(...)


# --- one line ----------------------------------------------------------------------------------

def _strip_line_comment(line: str) -> str:
    """The line without its `#` / `//` comment (comment markers inside strings do not count)."""
    for m in _LINE_COMMENT_RE.finditer(line):
        if m.group(0) in ("#", "//"):
            return line[:m.start()]
    return line


def _nesting_too_deep(text: str) -> int:
    """Offset where bracket nesting first exceeds MAX_NESTING, or -1 (strings skipped)."""
    depth = 0
    in_str = False
    esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{(":
            depth += 1
            if depth > MAX_NESTING:
                return i
        elif ch in "]})":
            depth -= 1
    return -1


#: what the parser wanted, in words, for the expected-token sets that have a clear reading
#: (LALR sets are often wider than what is really legal, so other sets get no hint)
_OPERAND_START = frozenset({"FLOAT", "HEX", "IDENT", "INT", "MINUS", "STRING", "REG_RANGE"})
_EXPECTED_WORDS = {frozenset({"IDENT"}): "a name", frozenset({"EQUAL"}): "'='",
                   frozenset({"STRING"}): 'a quoted mnemonic such as "st.s_nop"',
                   frozenset({"$END"}): "the end of the line", frozenset({"RBRACE"}): "'}'",
                   frozenset({"COMMA", "RBRACE"}): "',' or '}'", frozenset({"COMMA", "RPAR"}): "',' or ')'"}


def _expected_hint(expected: Any) -> str:
    names = frozenset(expected or ())
    words = _EXPECTED_WORDS.get(names)
    if words is None and names and names <= _OPERAND_START:
        words = "an operand"
    return f"; expected {words}" if words else ""


def _describe_lark_error(err: LarkError, length: int) -> tuple[str, int, int]:
    """A one-line message and the 0-based columns it points at."""
    if isinstance(err, _BadCharacter):
        return str(err), err.pos, err.pos + 1
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream
        return f"unexpected character {err.char!r}", pos, pos + 1
    if isinstance(err, UnexpectedEOF):
        return "unexpected end of line" + _expected_hint(err.expected), length, length
    if isinstance(err, UnexpectedToken):
        tok = err.token
        hint = _expected_hint(err.expected)
        if tok.type == "$END":
            return "unexpected end of line" + hint, length, length
        text = str(tok)
        shown = text if len(text) <= 40 else text[:37] + "..."
        return f"unexpected '{shown}'" + hint, tok.start_pos or 0, tok.end_pos or (tok.start_pos or 0) + 1
    return "syntax error", 0, length


def _cycle_value(key: str, value: Any, start: int, end: int, problems: list[Problem]) -> int | None:
    """An `issueCycles`/`latencyCycles` value; non-positive values fall back to the default."""
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(Problem(WARNING, f"{key} must be an integer; the default cost is used",
                                start, end))
        return None
    return value if value > 0 else None


@dataclass(frozen=True, slots=True)
class AttrData:
    """A parsed attribute dictionary; positions are offsets into the dictionary's text."""

    mods: tuple[ModData, ...] = ()
    issue: int | None = None
    latency: int | None = None
    problems: tuple[Problem, ...] = ()
    error: Problem | None = None


@lru_cache(maxsize=LINE_CACHE_SIZE)
def _attributes(text: str) -> AttrData:
    """Parse `{ issueCycles = .., mod.kind = { .. }, .. }`.  Pure and memoised by its text."""
    try:
        attrs = _lark().parse(text, start="attrs")
    except LarkError as err:
        msg, s, e = _describe_lark_error(err, len(text))
        return AttrData(error=Problem(ERROR, msg, s, e))
    issue = latency = None
    mods: list[ModData] = []
    problems: list[Problem] = []
    for key, value, ks, ke in attrs:
        if key == "issueCycles":
            issue = _cycle_value(key, value, ks, ke, problems)
        elif key == "latencyCycles":
            latency = _cycle_value(key, value, ks, ke, problems)
        elif key.startswith("mod.") and len(key) > 4:
            if not isinstance(value, _RawDict):
                return AttrData(error=Problem(ERROR, f"{key} must be a dictionary {{ key = value, ... }}", ks, ke))
            fields = tuple((k, _plain(v)) for k, v, _s, _e in value.items)
            flat = not any(isinstance(v, (tuple, FrozenMap)) for _k, v in fields)
            mods.append(ModData(key[4:], fields, text[value.start:value.end], flat))
        else:
            problems.append(Problem(WARNING, f"unknown attribute '{key}' ignored", ks, ke))
    return AttrData(tuple(mods), issue, latency, tuple(problems))


def _shifted(p: Problem, by: int) -> Problem:
    return Problem(p.severity, p.message, p.start + by, p.end + by)


def _instruction(content: str, offset: int, problems: list[Problem]) -> InstrData:
    """Parse one instruction (`content` is the line from `offset` on, comment removed)."""
    split = _HEAD_RE.match(content).end()  # the attribute dictionary's `{`, or the end
    try:
        dsts_raw, mnem_tok, srcs_raw = _lark().parse(content[:split], start="head")
    except LarkError as err:
        msg, s, e = _describe_lark_error(err, split)
        if s >= split and split < len(content):
            msg, s, e = "unexpected '{'", split, split + 1
        raise _LineError(msg, s + offset, e + offset) from None
    line = " " * offset + content

    def shift(raw: _RawOp) -> _RawOp:
        return _RawOp(raw.form, raw.start + offset, raw.end + offset, raw.parts)

    dsts = tuple(_operand(shift(r), line) for r in (dsts_raw or ()))
    for op, raw in zip(dsts, dsts_raw or ()):
        if not isinstance(op, Reg):
            raise _LineError(f"destination '{line[raw.start + offset:raw.end + offset]}' is not a register",
                             raw.start + offset, raw.end + offset)
    srcs = tuple(_operand(shift(r), line) for r in (srcs_raw or ()))
    quoted = _unquote(str(mnem_tok))
    namespace, dot, mnemonic = quoted.partition(".")
    if not dot:
        mnemonic = quoted
        problems.append(Problem(WARNING, f"mnemonic '{quoted}' has no namespace (expected \"st.{quoted}\")",
                                mnem_tok.start_pos + offset, mnem_tok.end_pos + offset))
    if not mnemonic:
        raise _LineError("empty mnemonic", mnem_tok.start_pos + offset, mnem_tok.end_pos + offset)
    attrs = _attributes(content[split:]) if split < len(content) else AttrData()
    if attrs.error is not None:
        err = _shifted(attrs.error, offset + split)
        raise _LineError(err.message, err.start, err.end)
    problems.extend(_shifted(p, offset + split) for p in attrs.problems)
    cycles = None
    if attrs.issue is not None or attrs.latency is not None:
        d_issue, d_latency = default_cycles(mnemonic)
        cycles = (attrs.issue if attrs.issue is not None else d_issue,
                  attrs.latency if attrs.latency is not None else d_latency)
    return InstrData(mnemonic, dsts, srcs, attrs.mods, cycles)


def _successors(content: str, offset: int) -> tuple[tuple[str, int, int], ...]:
    """The `^label` list of a `Successors:` line with each label's columns."""
    base = offset + len("Successors:")
    rest = content[len("Successors:"):]
    out: list[tuple[str, int, int]] = []
    i = _BLANKS_RE.match(rest).end()
    while i < len(rest):
        m = _SUCC_ITEM_RE.match(rest, i)
        if m is None:
            raise _LineError("expected '^label' in Successors: list", base + i, base + len(rest))
        out.append((m.group(1), base + m.start(1) - 1, base + m.end(1)))
        i = m.end()
        if i < len(rest) and rest[i] != ",":
            raise _LineError("expected ',' between successors", base + i, base + len(rest))
        if i < len(rest):
            i = _BLANKS_RE.match(rest, i + 1).end()
            if i >= len(rest):
                raise _LineError("trailing ',' in Successors: list", base + i - 1, base + i)
    return tuple(out)


@lru_cache(maxsize=LINE_CACHE_SIZE)
def analyze_line(line: str) -> LineInfo:
    """Classify and parse one line (block comments already blanked).  Pure and memoised."""
    code = _strip_line_comment(line).rstrip()
    body = code.lstrip()
    if not body:
        return LineInfo(BLANK)
    start = len(code) - len(body)
    end = len(code)
    deep = -1
    if body.count("[") + body.count("{") + body.count("(") > MAX_NESTING:
        deep = _nesting_too_deep(body)
    if deep >= 0:
        return LineInfo(BAD, start, end, problems=(
            Problem(ERROR, f"brackets nested deeper than {MAX_NESTING} levels", start + deep, start + deep + 1),))
    try:
        if body.startswith("st.func"):
            m = _FUNC_RE.match(body)
            if m is None:
                raise _LineError("malformed function header; expected 'st.func @name() {'", start, end)
            name = m.group(1) or ""
            ns = start + (m.start(1) if m.group(1) is not None else body.index("@") + 1)
            return LineInfo(FUNC, start, end, name, ns, ns + len(name))
        if body == "}":
            return LineInfo(FUNC_END, start, end)
        if body.startswith("st.metadata") and body.endswith("{"):
            return LineInfo(META, start, end)
        if body.startswith("^"):
            m = _BLOCK_RE.match(body)
            if m is None:
                raise _LineError("malformed block header; expected '^name:'", start, end)
            return LineInfo(BLOCK, start, end, m.group(1), start + 1, start + 1 + len(m.group(1)))
        if body.startswith("Successors:"):
            return LineInfo(SUCCS, start, end, succs=_successors(body, start))
        m = _LABEL_RE.match(body)
        if m is not None:
            return LineInfo(LABEL, start, end, m.group(1), start, start + len(m.group(1)))
        problems: list[Problem] = []
        instr = _instruction(body, start, problems)
        return LineInfo(INSTR, start, end, instr=instr, problems=tuple(problems))
    except _LineError as err:
        return LineInfo(BAD, start, end, problems=(Problem(ERROR, str(err), err.start, max(err.end, err.start)),))
    except (LarkError, ValueError, RecursionError) as err:  # defensive: never escape the front end
        return LineInfo(BAD, start, end, problems=(Problem(ERROR, f"cannot parse line: {err}", start, end),))


# --- materialising IR from cached line data ----------------------------------------------------

def _thaw(value: Any) -> Any:
    """Cached modifier values -> the mutable shapes the IR documents (lists, dicts)."""
    if isinstance(value, tuple):
        if all(type(v) in (int, str, bool, float) for v in value):
            return list(value)  # the common flat list (`tokens = [0,1]`)
        return [_thaw(v) for v in value]
    if isinstance(value, FrozenMap):
        return {k: _thaw(v) for k, v in value.items}
    return value


def _make_instruction(data: InstrData, span: Span, text: str) -> Instruction:
    """A fresh `Instruction` from cached line data (passes mutate instructions freely)."""
    mods: dict[str, Modifier] = {}
    for m in data.mods:
        mods[m.kind] = Modifier(m.kind, dict(m.fields) if m.flat else {k: _thaw(v) for k, v in m.fields}, m.raw)
    return Instruction(data.mnemonic, list(data.dsts), list(data.srcs), mods, span, text, data.cycles)


def blank_block_comments(text: str) -> tuple[str, list[tuple[int, int]]]:
    """`text` with every `/* ... */` replaced by spaces (newlines kept, so positions hold).

    Also returns the offsets of unterminated block comments, which are reported as errors.
    """
    if "/*" not in text:
        return text, []
    parts: list[str] = []
    unterminated: list[tuple[int, int]] = []
    last = 0
    for m in _BLOCK_COMMENT_RE.finditer(text):
        tok = m.group(0)
        if not tok.startswith("/*"):
            continue
        parts.append(text[last:m.start()])
        parts.append(re.sub(r"[^\r\n]", " ", tok))
        if not tok.endswith("*/") or len(tok) < 4:
            unterminated.append((m.start(), m.end()))
        last = m.end()
    parts.append(text[last:])
    return "".join(parts), unterminated


@dataclass
class _Scan:
    """Mutable state of the structure scan over one file."""

    module: Module
    flat: bool
    func: Function | None = None
    func_line: int = 0
    #: inside a top-level `st.metadata ... { ... }` block (skipped up to its closing brace)
    in_metadata: bool = False
    block: Block | None = None
    block_closed: bool = False
    labels: set[str] = field(default_factory=set)
    succ_refs: list[tuple[Function, str, int, int, int]] = field(default_factory=list)
    last_line: int = 0
    last_end: int = 1
    block_end: tuple[int, int] | None = None
    #: the instruction (LABEL included) made for each line, for the next version's re-parse
    insts: list[Instruction | None] = field(default_factory=list)
    #: `reuse(idx, info)`: the previous version's instruction for line index `idx`, or None
    reuse: Callable[[int, LineInfo], Instruction | None] | None = None

    def diag(self, severity: str, message: str, line: int, start: int, end: int) -> None:
        self.module.diagnostics.append(Diagnostic(
            severity, "parse-error" if severity == ERROR else "parse-warning", message,
            line, start + 1, line, max(end, start) + 1,
            function=self.func.name if self.func is not None else None))

    def touch(self, lineno: int, end: int) -> None:
        """Record that the current block extends to this line (its span is set on close)."""
        self.last_line, self.last_end = lineno, end + 1
        if self.block is not None:
            self.block_end = (lineno, end + 1)

    def finish_block(self) -> None:
        """Give the current block its final span, header to its last line."""
        b = self.block
        if b is not None and b.span is not None and self.block_end is not None:
            b.span = Span(b.span.line, b.span.col, *self.block_end)
        self.block = None
        self.block_end = None

    def open_block(self, label: str, lineno: int, start: int, end: int) -> Block:
        assert self.func is not None
        if label in self.labels:
            self.diag(ERROR, f"duplicate block label '^{label}'", lineno, start, end)
        self.labels.add(label)
        self.finish_block()
        self.block = Block(label, span=Span(lineno, start + 1, lineno, end + 1))
        self.block_closed = False
        self.func.blocks.append(self.block)
        return self.block

    def ensure_block(self, lineno: int, start: int, end: int) -> Block:
        """The block a content line belongs to, opening an implicit `entry` when needed."""
        if self.func is None:
            self.open_function("", lineno, start, end, None)
        if self.block is None:
            if not self.flat:
                self.diag(ERROR, "instruction outside a block; expected a '^name:' header first",
                          lineno, start, end)
            self.open_block("entry", lineno, start, end)
        elif self.block_closed:
            self.diag(ERROR, "instruction after the block's Successors: line", lineno, start, end)
            self.block_closed = False
        assert self.block is not None
        return self.block

    def open_function(self, name: str, lineno: int, start: int, end: int, name_span: Span | None) -> None:
        self.finish_block()
        self.func = Function(name, span=Span(lineno, start + 1, lineno, end + 1), name_span=name_span)
        self.func_line = lineno
        self.block = None
        self.block_closed = False
        self.labels = set()
        self.module.functions.append(self.func)

    def close_function(self, end_line: int, end_col: int) -> None:
        self.finish_block()
        if self.func is not None and self.func.span is not None:
            s = self.func.span
            self.func.span = Span(s.line, s.col, end_line, end_col)
        self.func = None
        self.block = None


def clear_caches() -> None:
    """Forget every memoised line and attribute dictionary (benchmarks measure cold parses)."""
    analyze_line.cache_clear()
    _attributes.cache_clear()


class _StirState:
    """What a parse keeps for the next version's: the lines, their analyses and instructions.

    `superseded` is set once a re-parse has taken the instructions over (their spans then
    describe that newer version)."""

    __slots__ = ("path", "lines", "infos", "insts", "superseded")

    def __init__(self, path: str, lines: list[str], infos: list[LineInfo], insts: list[Instruction | None]) -> None:
        self.path = path
        self.lines = lines
        self.infos = infos
        self.insts = insts
        self.superseded = False


def parse_stir(text: str, path: str, previous: Module | None = None) -> Module:
    """Parse STIR text into a linked `Module` (kind "stir"); never raises.

    `previous`: the Module of the previous version of the same document (same `path`).  The
    result is a fresh parse's, except that every instruction (LABEL included) on a line
    outside the edited region (between the longest common prefix and suffix of the two
    versions' lines; a window of equal length on both sides is matched line by line) whose
    analysis is unchanged is the same object as in `previous`, its `span` set to its new
    line.  Blocks and functions are new; `previous` is not mutated but for those
    instructions' spans and `block`.  What the analysis adds to instructions (`sources`, LDS
    pseudo registers) stays.  A fresh parse is made when `previous` is not a STIR parse of
    `path` or was already the previous version of another parse.
    """
    module = Module(path=path, kind="stir", text=text)
    prev = previous.front_end_state if previous is not None and previous.kind == "stir" else None
    if not (isinstance(prev, _StirState) and prev.path == path and not prev.superseded):
        prev = None
    with bulk_construction():  # GC pause: two thirds of a 30k-line re-parse otherwise
        try:
            _scan(module, text, prev)
        except RecursionError:  # pragma: no cover - nesting is bounded per line; belt and braces
            module.diagnostics.append(Diagnostic(ERROR, "parse-error", "input nested too deeply"))
    return module


def _reuser(prev: _StirState, lines: list[str], infos: list[LineInfo]) -> Callable[[int, LineInfo], Instruction | None]:
    """The previous version's instruction for an unchanged line (see `parse_stir`)."""
    from . import common_prefix, common_suffix
    old = prev.lines
    p = common_prefix(lines, old)
    q = common_suffix(lines, old, min(len(lines), len(old)) - p)
    new_stop = len(lines) - q
    delta = len(lines) - len(old)
    paired = delta == 0  # an edited window of equal length: matched line by line
    prev.superseded = True

    def reuse(idx: int, info: LineInfo) -> Instruction | None:
        o = idx if idx < p or (paired and idx < new_stop) else idx - delta if idx >= new_stop else -1
        if o < 0 or (prev.infos[o] is not info and prev.infos[o] != info) or prev.lines[o] != lines[idx]:
            return None
        inst = prev.insts[o]
        if inst is not None and o != idx and inst.span is not None:
            sp = inst.span
            inst.span = Span(sp.line + idx - o, sp.col, sp.end_line + idx - o, sp.end_col)
        return inst

    return reuse


def _line_starts(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for m in _NEWLINE_RE.finditer(text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    return out


def _scan(module: Module, text: str, prev: _StirState | None = None) -> None:
    clean, unterminated = blank_block_comments(text)
    lines = _line_starts(clean)
    infos = [analyze_line(line) for _pos, line in lines]
    flat = not any(info.kind == FUNC for info in infos)
    st = _Scan(module, flat)
    originals = _NEWLINE_RE.split(text)
    st.insts = [None] * len(infos)
    if prev is not None:
        st.reuse = _reuser(prev, originals, infos)
    module.front_end_state = _StirState(module.path, originals, infos, st.insts)
    for start, _end in unterminated:
        line_no = text.count("\n", 0, start) + 1
        col = start - (text.rfind("\n", 0, start) + 1)
        st.diag(ERROR, "unterminated block comment", line_no, col, col + 2)
    if flat:
        st.open_function("", 1, 0, 0, None)
        st.func_line = 0
    for idx, info in enumerate(infos):
        lineno = idx + 1
        if st.func is None and (st.in_metadata or info.kind == META):
            # experimental-branch module metadata: opaque text up to a lone closing brace
            st.in_metadata = info.kind != FUNC_END
            continue
        if st.func is None and info.kind not in (BLANK, FUNC):
            # upstream skips top-level text between functions; say so once per line
            st.diag(WARNING, "text outside st.func is ignored", lineno, info.start, info.end)
            continue
        for p in info.problems:
            st.diag(p.severity, p.message, lineno, p.start, p.end)
        _scan_line(st, info, lineno, text, lines[idx][0])
    if st.func is not None:
        if not flat:
            fn = st.func
            st.diag(ERROR, f"missing closing '}}' of st.func @{fn.name}", st.func_line,
                    fn.span.col - 1 if fn.span else 0, fn.span.end_col - 1 if fn.span else 1)
        st.close_function(st.last_line or 1, st.last_end)
    for fn in module.functions:
        fn.link()
    labels = {id(fn): {b.label for b in fn.blocks} for fn in module.functions}
    for fn, label, lineno, s, e in st.succ_refs:
        if label not in labels[id(fn)]:
            module.diagnostics.append(Diagnostic(
                ERROR, "unknown-successor", f"unknown successor block '^{label}'",
                lineno, s + 1, lineno, e + 1, function=fn.name))


def _scan_line(st: _Scan, info: LineInfo, lineno: int, text: str, pos: int) -> None:
    """Advance the structure state machine by one analysed line."""
    kind = info.kind
    if kind == BLANK:
        return
    if kind == FUNC:
        if st.func is not None:
            st.diag(ERROR, f"missing closing '}}' before the next st.func (st.func @{st.func.name})",
                    lineno, info.start, info.end)
            st.close_function(st.last_line or lineno, st.last_end)
        st.open_function(info.name, lineno, info.start, info.end,
                         Span(lineno, info.name_start + 1, lineno, info.name_end + 1))
        st.last_line, st.last_end = lineno, info.end + 1
        return
    if kind == FUNC_END:
        if st.func is None or st.flat:
            st.diag(ERROR, "'}' without an open st.func", lineno, info.start, info.end)
            return
        st.close_function(lineno, info.end + 1)
        return
    if st.func is None:  # pragma: no cover - _scan filters top-level lines before calling
        return
    if kind == BLOCK:
        st.open_block(info.name, lineno, info.start, info.end)
        st.last_line, st.last_end = lineno, info.end + 1
        return
    if kind == BAD:
        if st.block is not None:
            st.touch(lineno, info.end)
        return
    if kind == SUCCS:
        if st.block is None:
            st.diag(ERROR, "Successors: line outside a block", lineno, info.start, info.end)
            return
        block = st.block
        if block.succ_span is not None:
            st.diag(ERROR, f"block '^{block.label}' already has a Successors: line", lineno, info.start, info.end)
        block.succ_labels = [name for name, _s, _e in info.succs]
        block.succ_span = Span(lineno, info.start + 1, lineno, info.end + 1)
        st.succ_refs.extend((st.func, name, lineno, s, e) for name, s, e in info.succs)
        st.touch(lineno, info.end)
        st.block_closed = True
        return
    block = st.ensure_block(lineno, info.start, info.end)
    inst = None if st.reuse is None else st.reuse(lineno - 1, info)
    if inst is None and (kind == LABEL or info.instr is not None):
        span = Span(lineno, info.start + 1, lineno, info.end + 1)
        source = text[pos + info.start:pos + info.end]
        if kind == LABEL:
            inst = Instruction(info.name, span=span, text=source, is_label=True)
        else:
            inst = _make_instruction(info.instr, span, source)
    if inst is not None:
        block.instrs.append(inst)
        st.insts[lineno - 1] = inst
    st.touch(lineno, info.end)
