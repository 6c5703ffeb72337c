"""The assembler's text-level directives, expanded as llvm-mc does, before the line parser.

Hand-written kernels (ROCm/MIOpen's igemm, Winograd, conv) are written with ``.include``,
``.macro``/``.endm``, ``.rept``/``.irp``/``.irpc``/``.endr``, ``.if*``/``.elseif``/``.else``/
``.endif`` and ``.set``/``=`` symbols.  The instructions the GPU runs are the expansion, so
the analysis must run over it.  `expand` produces that expansion line by line, with a
`SourceMap` that takes every expanded line back to the line the user wrote in the open file
(the outermost call site) and the chain of macros and includes in between.

What follows llvm-mc's AsmParser (the rules were checked against llvm-mc-22's output):

* macro parameters ``name``, ``name=default``, ``name:req``, ``name:vararg``; arguments by
  position or ``name=value``, separated by commas or by blanks (a blank before an operator
  joins, as in ``a + b``); a quoted argument is substituted without its quotes;
* in a body ``\\name`` is the argument, ``\\@`` the number of macro instantiations so far,
  ``\\()`` nothing; an unknown ``\\name`` stays as written; under ``.altmacro`` a parameter's
  name alone is substituted too, ``%expr`` arguments are their value and ``<text>`` is text;
* ``.exitm`` ends the innermost macro instantiation, ``.purgem`` forgets a macro;
* ``.rept N``, ``.irp sym, a, b``, ``.irpc sym, chars`` with ``.endr``; bodies nest;
* conditionals over the symbols (expressions of `asm_expr`: GNU precedences, a true
  comparison is -1), with ``.amdgcn.gfx_generation_number / _minor / _stepping`` predefined
  from the processor as llvm-mc does for ``-mcpu``; ``.ifdef`` knows symbols and labels
  defined so far.

What cannot be resolved (an include not found, an undefined symbol in ``.if`` / ``.rept``,
a parameter without its required value, an unterminated block, raw instruction words such as
``.long 0xD6FE6A00`` in a code section) is a located warning on the
open file's line that says which results it leaves incomplete; the expansion goes on with
the most likely reading (the ``.if`` arm is skipped, the block is dropped).
"""

from __future__ import annotations

import re

from ..diagnostics import WARNING, Diagnostic
from ..lazy_regex import LazyPattern
from .asm_expr import EMPTY_SYMBOLS, Symbols, eval_expr
from .asm_include import read_from_disk, resolve_include
from .asm_needs import needs_expansion
from .asm_sourcemap import SourceMap

__all__ = ["expand", "needs_expansion", "generation_symbols", "Expansion"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .asm_include import Reader

_WORD = LazyPattern(r"[A-Za-z_.$][\w.$@]*")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")
_OPERATOR_CHARS = frozenset("+-*/%&|^~!<>=")
_MAX_DEPTH = 64          # nested macro / include instantiations (llvm-mc: 20 by default; deeper is a loop)
_MAX_LINES = 2_000_000   # expanded lines: a runaway .rept is reported, not followed
_CONDITIONALS = (".if", ".ifdef", ".ifndef", ".ifnotdef", ".ifeq", ".ifne", ".ifgt", ".ifge", ".iflt", ".ifle",
                 ".ifb", ".ifnb", ".ifc", ".ifnc", ".ifeqs", ".ifnes")
_REPEATS = (".rept", ".irp", ".irpc")
_SECTIONS = frozenset({".text", ".data", ".rodata", ".bss", ".section"})
#: data directives: in a code section they are instruction words the analysis cannot read
_DATA = frozenset({".long", ".4byte", ".int", ".word", ".short", ".2byte", ".byte", ".quad", ".8byte", ".inst",
                   ".incbin", ".fill", ".zero", ".skip", ".space"})


def generation_symbols(cpu: str) -> dict[str, int]:
    """The symbols llvm-mc predefines for ``-mcpu=gfxXYZ``: ``.amdgcn.gfx_generation_number``
    (X), ``_minor`` (Y) and ``_stepping`` (Z, hex: gfx90a is 9, 0, 10)."""
    m = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", (cpu or "").split(":")[0].lower())
    if m is None:
        return {}
    return {".amdgcn.gfx_generation_number": int(m.group(1)), ".amdgcn.gfx_generation_minor": int(m.group(2), 16),
            ".amdgcn.gfx_generation_stepping": int(m.group(3), 16)}


class _Macro:
    __slots__ = ("name", "params", "body", "file", "line")

    def __init__(self, name: str, params: list[tuple[str, str, str]], body: list[str], file: str, line: int):
        #: (name, qualifier "" / "req" / "vararg", default)
        self.name, self.params, self.body, self.file, self.line = name, params, body, file, line


class _ExitMacro(Exception):
    """``.exitm``: unwinds to the innermost macro instantiation."""


class _Source:
    """Lines being processed: their file, the 1-based line of the first one, and how they map
    to the open file (`user_line` None: they are the open file's own lines)."""

    __slots__ = ("lines", "file", "first", "user_line", "steps", "kind", "name")

    def __init__(self, lines: list[str], file: str, first: int, user_line: int | None, steps: tuple,
                 kind: str = "", name: str = ""):
        self.lines, self.file, self.first, self.user_line, self.steps = lines, file, first, user_line, steps
        self.kind, self.name = kind, name


class _Expander:
    def __init__(self, path: str, include_dirs: tuple[str, ...], read: "Reader", cpu: str,
                 defsyms: tuple = ()):
        self.path = path
        self.include_dirs = include_dirs
        self.read = read
        self.out: list[str] = []
        self.origins: list[tuple] = []
        self.diags: list[Diagnostic] = []
        self.incomplete: list[Diagnostic] = []
        self.includes: list[str] = []
        self.macros: dict[str, _Macro] = {}
        self.symbols: Symbols = EMPTY_SYMBOLS
        for k, v in generation_symbols(cpu).items():
            self.symbols = self.symbols.with_value(k, v)
        self.defined: set[str] = set(generation_symbols(cpu))
        self.defsyms = defsyms
        for name, value in defsyms:
            self.symbols = self.symbols.with_value(name, value)
            self.defined.add(name)
        self.instantiations = 0
        self.altmacro = False
        self.depth = 0
        self.stopped = False
        self.in_text = True  # the current section holds code (`.text`, the default)

    # -- reporting ---------------------------------------------------------------------------

    def warn(self, src: _Source, i: int, message: str, code: str, incomplete: bool = True) -> None:
        line = src.user_line if src.user_line is not None else src.first + i
        where = "" if src.user_line is None else f" ({_short(src.file)}:{src.first + i})"
        d = Diagnostic(WARNING, code, message + where, line, 1, line, len(self._user_text(line)) + 1)
        if any(x.line == d.line and x.message == d.message for x in self.diags):
            return  # a macro called in a loop of .rept warns once per line
        self.diags.append(d)
        if incomplete:
            self.incomplete.append(d)

    def _user_text(self, line: int) -> str:
        lines = self.user_lines
        return lines[line - 1] if 1 <= line <= len(lines) else ""

    # -- the walk ----------------------------------------------------------------------------

    def run(self, text: str) -> None:
        from .asm_lex import split_lines
        self.user_lines = split_lines(text)
        # --defsym symbols as `.set` lines first: the line parser evaluates register indices
        # with them, and the expansion assembles alone
        for name, value in self.defsyms:
            self.out.append(f".set {name}, {value}")
            self.origins.append((1, (("defsym", name, "<command line>", 1),)))
        self.process(_Source(self.user_lines, self.path, 1, None, ()))

    def emit(self, src: _Source, i: int, line: str) -> None:
        if src.user_line is None:
            self.origins.append((src.first + i, ()))
        else:
            self.origins.append((src.user_line, src.steps + ((src.kind, src.name, src.file, src.first + i),)))
        self.out.append(line)

    def process(self, src: _Source) -> None:
        lines = src.lines
        n = len(lines)
        i = 0
        in_comment = False
        # conditional stack: (this arm taken, some arm taken already, the enclosing region live)
        conds: list[list[bool]] = []
        live = True
        while i < n and not self.stopped:
            raw = lines[i]
            code, in_comment = _code_of(raw, in_comment)
            stmt = code.strip()
            if not stmt:
                if live:
                    self.emit(src, i, raw)
                i += 1
                continue
            label, head, rest = _statement(stmt)
            low = head.lower()
            if low.startswith(".if") and low in _CONDITIONALS:
                if live:
                    taken = self.condition(src, i, low, rest)
                    conds.append([taken, taken, True])
                else:
                    conds.append([False, True, False])
                live = _live(conds)
                i += 1
                continue
            if low in (".elseif", ".else", ".endif"):
                if not conds:
                    self.warn(src, i, f"{head} without .if", "asm-unbalanced-conditional", incomplete=False)
                elif low == ".endif":
                    conds.pop()
                else:
                    top = conds[-1]
                    if not top[2] or top[1]:
                        top[0] = False
                    elif low == ".else":
                        top[0] = top[1] = True
                    else:
                        taken = self.condition(src, i, ".if", rest)
                        top[0] = taken
                        top[1] = taken
                live = _live(conds)
                i += 1
                continue
            if not live:
                i += 1
                continue
            if label is not None and (low in (".macro", ".rept", ".irp", ".irpc", ".include") or low in self.macros):
                self.defined.add(label)
                self.emit(src, i, label + ":")
            elif label is not None:
                self.defined.add(label)
            if low == ".macro":
                i = self.define_macro(src, i, rest)
                continue
            if low in _REPEATS:
                i = self.repeat(src, i, low, rest)
                continue
            if low in (".endm", ".endmacro", ".endr"):
                self.warn(src, i, f"{head} without its opening directive", "asm-unbalanced-block", incomplete=False)
                i += 1
                continue
            if low == ".exitm":
                if src.kind == "macro":
                    raise _ExitMacro()
                self.warn(src, i, ".exitm outside a macro", "asm-unbalanced-block", incomplete=False)
                i += 1
                continue
            if low == ".include":
                self.include(src, i, rest)
                i += 1
                continue
            if low == ".purgem":
                self.macros.pop(rest.strip(), None)
                i += 1
                continue
            if low in (".altmacro", ".noaltmacro"):
                self.altmacro = low == ".altmacro"
                self.emit(src, i, raw)
                i += 1
                continue
            if low == ".end":
                self.stopped = True
                self.emit(src, i, raw)
                break
            macro = self.macros.get(head)
            if macro is not None:
                self.call(src, i, macro, rest)
                i += 1
                continue
            if low in _SECTIONS:
                self.in_text = low == ".text" or (low == ".section" and rest.strip().startswith(".text"))
            elif low in _DATA and self.in_text:
                self.warn(src, i, f"raw words ({head}) in the code: the instruction they encode is not analysed, "
                                  f"waits around it may be missing or stronger than needed", "asm-raw-instruction")
            elif low in (".error", ".err"):
                self.warn(src, i, f"{head} {rest.strip()}: llvm-mc stops with this error here, the file does not "
                                  f"assemble as configured (a symbol it expects may be missing)", "asm-error-directive")
            if low in (".set", ".equ", ".equiv"):
                self.assign(rest)
            elif rest.startswith("=") and not rest.startswith("==") and _WORD.fullmatch(head):
                self.assign(f"{head},{rest[1:]}")
            self.emit(src, i, raw)
            if len(self.out) > _MAX_LINES:
                self.warn(src, i, f"the expansion exceeds {_MAX_LINES} lines: the rest of the file is not analysed",
                          "asm-expansion-too-large")
                self.stopped = True
            i += 1
        if conds and not self.stopped:
            self.warn(src, n - 1 if n else 0, "a .if is not closed by .endif at the end of this text",
                      "asm-unbalanced-conditional", incomplete=False)

    # -- directives ----------------------------------------------------------------------------

    def assign(self, args: str) -> None:
        name, _, expr = args.partition(",")
        name = name.strip()
        if not name:
            return
        self.defined.add(name)
        value = eval_expr(expr.strip(), self.symbols)
        if value is not None:
            self.symbols = self.symbols.with_value(name, value)

    def value(self, src: _Source, i: int, expr: str, what: str) -> int | None:
        v = eval_expr(expr.strip(), self.symbols)
        if v is None:
            self.warn(src, i, f"cannot evaluate '{expr.strip()}' in {what} (an undefined symbol or not a constant): "
                              f"its expansion is not analysed, results after this line may be incomplete",
                      "asm-undefined-symbol")
        return v

    def condition(self, src: _Source, i: int, low: str, rest: str) -> bool:
        arg = rest.strip()
        if low in (".ifdef", ".ifndef", ".ifnotdef"):
            known = arg in self.defined
            return known if low == ".ifdef" else not known
        if low in (".ifb", ".ifnb"):
            return (arg == "") == (low == ".ifb")
        if low in (".ifc", ".ifnc", ".ifeqs", ".ifnes"):
            a, b = _two_strings(arg)
            same = a == b
            return same if low in (".ifc", ".ifeqs") else not same
        v = self.value(src, i, arg, low)
        if v is None:
            return False
        return {".if": v != 0, ".ifne": v != 0, ".ifeq": v == 0, ".ifgt": v > 0, ".ifge": v >= 0,
                ".iflt": v < 0, ".ifle": v <= 0}[low]

    def body(self, src: _Source, i: int, opens: tuple[str, ...], closes: tuple[str, ...], what: str) -> tuple[list[str], int]:
        """The lines of a block opened at line `i`, up to its matching end; and the index after it."""
        depth = 1
        j = i + 1
        in_comment = False
        lines = src.lines
        while j < len(lines):
            code, in_comment = _code_of(lines[j], in_comment)
            _, head, _ = _statement(code.strip())
            low = head.lower()
            if low in opens:
                depth += 1
            elif low in closes:
                depth -= 1
                if depth == 0:
                    return lines[i + 1:j], j + 1
            j += 1
        self.warn(src, i, f"{what} is not closed: its body is not analysed", "asm-unbalanced-block")
        return [], len(lines)

    def define_macro(self, src: _Source, i: int, rest: str) -> int:
        body, nxt = self.body(src, i, (".macro",), (".endm", ".endmacro"), ".macro")
        rest = rest.strip()
        m = re.match(r"[^\s,]+", rest)
        if m is None:
            self.warn(src, i, ".macro without a name", "asm-bad-macro")
            return nxt
        name = m.group()
        params = []
        for p in _split_args(rest[m.end():].lstrip(" \t,"), self.altmacro)[0]:
            pname, _, default = p.partition("=")
            pname, _, qual = pname.partition(":")
            params.append((pname.strip(), qual.strip().lower(), _unquote(default.strip())))
        self.macros[name] = _Macro(name, params, body, src.file, src.first + i)
        return nxt

    def call(self, src: _Source, i: int, macro: _Macro, rest: str) -> None:
        if self.depth >= _MAX_DEPTH:
            self.warn(src, i, f"macro {macro.name} nests deeper than {_MAX_DEPTH} levels: not expanded",
                      "asm-expansion-too-deep")
            return
        values = self.bind(src, i, macro, rest)
        if values is None:
            return
        text = [_substitute(line, values, self.instantiations, self.altmacro) for line in macro.body]
        self.instantiations += 1
        self.nested(src, i, _Source(text, macro.file, macro.line + 1, None, (), "macro", macro.name))

    def nested(self, src: _Source, i: int, inner: _Source) -> None:
        """Process `inner` as text produced at line `i` of `src`."""
        if src.user_line is None:
            inner.user_line, inner.steps = src.first + i, ()
        else:
            inner.user_line = src.user_line
            inner.steps = src.steps + ((src.kind, src.name, src.file, src.first + i),)
        self.depth += 1
        try:
            self.process(inner)
        except _ExitMacro:
            if inner.kind != "macro":
                raise
        finally:
            self.depth -= 1

    def bind(self, src: _Source, i: int, macro: _Macro, rest: str) -> dict[str, str] | None:
        params = macro.params
        vararg = bool(params) and params[-1][1] == "vararg"
        args, tail = _split_args(rest.strip(), self.altmacro, len(params) - 1 if vararg else -1)
        values: dict[str, str] = {}
        pos = 0
        for a in args:
            key = re.match(r"([A-Za-z_.$][\w.$]*)\s*=(?!=)", a)
            if key is not None and any(p[0] == key.group(1) for p in params):
                values[key.group(1)] = self.argument(a[key.end():].strip())
                continue
            if pos >= len(params):
                self.warn(src, i, f"too many arguments for macro {macro.name}: the call is not expanded",
                          "asm-bad-macro-call")
                return None
            values.setdefault(params[pos][0], self.argument(a))
            pos += 1
        if vararg and tail is not None:
            values[params[-1][0]] = tail
        for name, qual, default in params:
            if not values.get(name):
                if qual == "req":
                    self.warn(src, i, f"missing value for the required parameter '{name}' of macro {macro.name}: "
                                      f"the call is not expanded", "asm-bad-macro-call")
                    return None
                values[name] = default
        return values

    def argument(self, a: str) -> str:
        if self.altmacro and a.startswith("%"):
            v = eval_expr(a[1:], self.symbols)
            return str(v) if v is not None else a
        if self.altmacro and a.startswith("<") and a.endswith(">"):
            return re.sub(r"!(.)", r"\1", a[1:-1])
        return _unquote(a)

    def repeat(self, src: _Source, i: int, low: str, rest: str) -> int:
        body, nxt = self.body(src, i, _REPEATS, (".endr",), low)
        if low == ".rept":
            count = self.value(src, i, rest, ".rept")
            runs = [{}] * max(0, count or 0)
        else:
            sym, _, values = rest.strip().partition(",")
            if not values and " " in sym.strip():
                sym, _, values = sym.strip().partition(" ")
            sym = sym.strip()
            if low == ".irp":
                items = _split_args(values.strip(), self.altmacro)[0] or [""]
                runs = [{sym: self.argument(v)} for v in items]
            else:
                runs = [{sym: ch} for ch in _unquote(values.strip())]
        if len(runs) * max(1, len(body)) > _MAX_LINES:
            self.warn(src, i, f"{low} would expand to more than {_MAX_LINES} lines: not expanded",
                      "asm-expansion-too-large")
            return nxt
        for values in runs:
            text = [_substitute(line, values, None, self.altmacro) for line in body] if values else body
            self.nested(src, i, _Source(text, src.file, src.first + i + 1, None, (), low, low))
            if self.stopped:
                break
        return nxt

    def include(self, src: _Source, i: int, rest: str) -> None:
        name = _unquote(rest.strip())
        path, searched = resolve_include(name, src.file, self.include_dirs)
        text = self.read(path) if path is not None else None
        if text is None:
            self.warn(src, i, f"cannot find include file '{name}' (searched {', '.join(searched) or 'nothing'}; "
                              f"add a folder with -I DIR or stinkywait.includePaths): the instructions and macros "
                              f"it holds are not analysed, results after this line may be incomplete",
                      "asm-missing-include")
            return
        if self.depth >= _MAX_DEPTH:
            self.warn(src, i, f"includes nest deeper than {_MAX_DEPTH} levels: '{name}' is not read",
                      "asm-expansion-too-deep")
            return
        if path not in self.includes:
            self.includes.append(path)
        from .asm_lex import split_lines
        self.nested(src, i, _Source(split_lines(text), path, 1, None, (), "include", name))


def _live(conds: list[list[bool]]) -> bool:
    return all(c[0] for c in conds)


def _short(path: str) -> str:
    import os
    return os.path.basename(path)


def _code_of(line: str, in_comment: bool) -> tuple[str, bool]:
    """The code of a line without comments (``//``, ``;``, ``/* */`` across lines)."""
    if not in_comment and "/" not in line and ";" not in line and '"' not in line:
        return line, False
    out = []
    k = 0
    n = len(line)
    while k < n:
        if in_comment:
            end = line.find("*/", k)
            if end < 0:
                return "".join(out), True
            k = end + 2
            in_comment = False
            out.append(" ")
            continue
        c = line[k]
        if c == '"':
            end = k + 1
            while end < n and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            out.append(line[k:end + 1])
            k = end + 1
            continue
        if c == ";" or line.startswith("//", k):
            break
        if line.startswith("/*", k):
            in_comment = True
            k += 2
            continue
        out.append(c)
        k += 1
    return "".join(out), in_comment


def _statement(stmt: str) -> tuple[str | None, str, str]:
    """(label or None, the first word, the rest) of a statement without comments."""
    label = None
    m = re.match(r"([A-Za-z_.$][\w.$]*|\d+)[ \t]*:(?!:)", stmt)
    if m is not None:
        label = m.group(1)
        stmt = stmt[m.end():].lstrip()
    m = re.match(r"[^\s,=(\"]+", stmt)
    if m is None:
        return label, "", stmt
    return label, m.group(), stmt[m.end():].lstrip(" \t")


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return s[1:-1]
    return s


def _two_strings(arg: str) -> tuple[str, str]:
    args = _split_args(arg, False)[0]
    a = args[0] if args else ""
    b = args[1] if len(args) > 1 else ""
    return _unquote(a.strip()), _unquote(b.strip())


def _split_args(text: str, altmacro: bool, vararg_at: int = -1) -> tuple[list[str], str | None]:
    """Macro arguments as llvm-mc splits them: at commas and at blanks outside parentheses,
    where a blank followed by an operator joins (``a + b`` is one argument, spelled ``a+b``).
    `vararg_at`: the index of a ``:vararg`` parameter, which takes the rest of the text."""
    args: list[str] = []
    n = len(text)
    k = 0
    while k < n:
        while k < n and text[k] in " \t":
            k += 1
        if k >= n:
            break
        if vararg_at >= 0 and len(args) == vararg_at:
            return args, text[k:].rstrip()
        cur: list[str] = []
        depth = 0
        while k < n:
            c = text[k]
            if c == '"' or (altmacro and c == "<" and depth == 0 and not cur):
                close = '"' if c == '"' else ">"
                end = k + 1
                while end < n and text[end] != close:
                    end += 2 if text[end] in "\\!" else 1
                cur.append(text[k:end + 1])
                k = end + 1
                continue
            if depth == 0 and c == ",":
                break
            if depth == 0 and c in " \t":
                j = k
                while j < n and text[j] in " \t":
                    j += 1
                if j < n and text[j] in _OPERATOR_CHARS and cur:
                    cur.append(text[j])
                    k = j + 1
                    while k < n and text[k] in " \t":
                        k += 1
                    continue
                k = j
                break
            if c == "(":
                depth += 1
            elif c == ")" and depth:
                depth -= 1
            cur.append(c)
            k += 1
        args.append("".join(cur))
        while k < n and text[k] in " \t":
            k += 1
        if k < n and text[k] == ",":
            k += 1
            if k >= n or not text[k:].strip():
                args.append("")
    return args, None


def _substitute(line: str, values: dict[str, str], counter: int | None, altmacro: bool) -> str:
    """One body line with ``\\param``, ``\\@``, ``\\()`` (and, under ``.altmacro``, bare
    parameter names) replaced."""
    if "\\" not in line and not (altmacro and values):
        return line
    out: list[str] = []
    k = 0
    n = len(line)
    while k < n:
        c = line[k]
        if c == "\\" and k + 1 < n:
            nxt = line[k + 1]
            if nxt == "@" and counter is not None:
                out.append(str(counter))
                k += 2
                continue
            if nxt == "(" and line.startswith("()", k + 1):
                k += 3
                continue
            j = k + 1
            while j < n and line[j] in _IDENT_CHARS:
                j += 1
            name = line[k + 1:j]
            if not name:
                out.append(c)
                k += 1
                continue
            if altmacro and j < n and line[j] == "&":
                j += 1
            out.append(values[name] if name in values else "\\" + name)
            k = j
            continue
        if altmacro and c in _IDENT_CHARS and not c.isdigit():
            j = k
            while j < n and line[j] in _IDENT_CHARS:
                j += 1
            word = line[k:j]
            if word in values:
                out.append(values[word])
                if j < n and line[j] == "&":
                    j += 1
            else:
                out.append(word)
            k = j
            continue
        out.append(c)
        k += 1
    return "".join(out)


class Expansion:
    """The expanded text (`lines`), its `SourceMap`, and the located warnings."""

    __slots__ = ("lines", "source_map", "diagnostics")

    def __init__(self, lines: list[str], source_map: SourceMap, diagnostics: list[Diagnostic]):
        self.lines, self.source_map, self.diagnostics = lines, source_map, diagnostics

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.lines else "")


def expand(text: str, path: str = "<input>", include_dirs: tuple[str, ...] = (), cpu: str = "",
           read: "Reader | None" = None, defsyms: tuple = ()) -> Expansion:
    """Expand includes, macros, repetitions and conditionals of an assembly file; never raises.

    `cpu` (``gfx1030``) predefines llvm-mc's ``.amdgcn.gfx_generation_*`` symbols (the file's
    ``.amdgcn_target`` or ``--arch``); `read` returns an include's text (default: the disk);
    `defsyms`: (name, value) pairs defined first, as llvm-mc's ``--defsym``.
    """
    ex = _Expander(path, tuple(include_dirs), read or read_from_disk, cpu, tuple(defsyms))
    try:
        ex.run(text)
    except (RecursionError, _ExitMacro):
        ex.warn(_Source([], path, 1, None, ()), 0, "the expansion nests too deeply: results are incomplete",
                "asm-expansion-too-deep")
    return Expansion(ex.out, SourceMap(path, ex.origins, ex.includes, ex.incomplete), ex.diags)
