"""One line of AMDGPU assembly in isolation: `parse_line` -> `LineSyntax`.

`parse_line` is pure and memoised on (line text, comment state, symbol table).  It tries the
fast path (`asm_fastpath`) and falls back to the general path here, which masks comments,
recognises labels, assignments and directives, splits operands at top-level commas and blanks,
and reports every malformed line as a located problem.
"""

from __future__ import annotations

from functools import lru_cache

from ..diagnostics import ERROR
from ..ir import Special
from .asm_expr import EMPTY_SYMBOLS, Symbols
from .asm_fastpath import _parse_plain_instruction
from .asm_flow import _mnemonic_facts, branch_target
from .asm_lex import (_ASSIGN, _BAD_CHAR, _DIRECTIVE, _IDENT, _LABEL, _MASK_CHARS, _MNEMONIC, _MOD_KEY,
                      _OPERATOR_END, _OPERATOR_START, _TOKEN_LIST, _WAITCNT_FIELD, LINE_CACHE_SIZE,
                      _annotation_after, _clip, _items, _mask_comments, _memtoken, _Pattern, _split_top,
                      _strip_range, _token_warnings)
from .asm_operands import _is_modifier, _looks_like_operand, _operand
from .asm_records import ROLE_INSTRUCTION, ROLE_OTHER, LineSyntax
from .asm_split import _split_dst_src
from .asm_tables import BARE_MODIFIERS, VERBATIM_OPERAND_MNEMONICS
from .asm_waitcnt import _waitcnt_mods, read_legacy_waitcnt

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from ..ir import Operand
    from .asm_records import ModData, ParsedInstruction, Problem

class _Builder:
    """Mutable scratch state while one line is parsed (never escapes `parse_line`)."""

    __slots__ = ("text", "code", "symbols", "annots", "problems")

    def __init__(self, text: str, code: str, symbols: Symbols) -> None:
        self.text = text
        self.code = code
        self.symbols = symbols
        self.annots: dict[int, str] = {}
        self.problems: list[Problem] = []

    def error(self, message: str, s: int, e: int, code: str = "asm-syntax") -> None:
        self.problems.append((ERROR, code, message, s, max(e, s + 1)))


@lru_cache(maxsize=LINE_CACHE_SIZE)
def parse_line(text: str, in_comment: bool = False, symbols: Symbols = EMPTY_SYMBOLS) -> LineSyntax:
    """Parse one physical line in isolation (pure; memoised).

    `in_comment` says the line starts inside a ``/* */`` comment; `symbols` is the `.set`
    table in effect (callers pass the empty table for lines without ``[`` or ``waitcnt``, where
    symbols matter, so that a `.set` edit does not invalidate unrelated lines).
    """
    if not in_comment:
        plain = _parse_plain_instruction(text, symbols)
        if plain is not None:
            return plain
    return _parse_line_general(text, in_comment, symbols)


def _parse_line_general(text: str, in_comment: bool, symbols: Symbols) -> LineSyntax:
    """`parse_line` for any line (the fast path's reference; not memoised)."""
    if in_comment or _MASK_CHARS.search(text) is not None:
        code, comments, ends_in_comment, string_problem = _mask_comments(text, in_comment)
    else:  # nothing to mask (most lines)
        code, comments, ends_in_comment, string_problem = text, (), False, None
    line_comment = None
    for s, e, content, style in comments:
        if style in ("//", ";"):
            line_comment = content
    stripped = code.lstrip(" \t")
    indent = len(code) - len(stripped)
    end = len(code.rstrip(" \t"))
    if string_problem:
        return LineSyntax("error", indent, problems=((ERROR, "asm-syntax", string_problem, indent, len(text)),),
                          ends_in_comment=ends_in_comment)
    if indent >= end:
        kind = "comment" if comments else "blank"
        return LineSyntax(kind, indent, comment=line_comment, ends_in_comment=ends_in_comment,
                          problems=_token_warnings(line_comment, text))
    b = _Builder(text, code, symbols)
    label = None
    label_range = None
    start = indent
    m = _LABEL.match(code, indent) if ":" in code else None
    if m:
        label = m.group(1)
        label_range = (m.start(1), m.end())
        start = m.end()
        while start < end and code[start] in " \t":
            start += 1
        if start >= end:
            return LineSyntax("label", indent, label=label, label_range=label_range, comment=line_comment,
                              ends_in_comment=ends_in_comment,
                              problems=_token_warnings(line_comment, text), role=ROLE_OTHER)
    am = _ASSIGN.match(code, start) if label is None and "=" in code else None
    if am:
        return LineSyntax("directive", indent, directive="=", args=f"{am.group(1)},{code[am.end():end]}",
                          comment=line_comment, ends_in_comment=ends_in_comment, role=ROLE_OTHER)
    if code[start] == ".":
        dm = _DIRECTIVE.match(code, start)
        if dm:
            return LineSyntax("directive", indent, label=label, label_range=label_range,
                              directive=dm.group().lower(), args=code[dm.end():end].strip(),
                              comment=line_comment, ends_in_comment=ends_in_comment, role=ROLE_OTHER)
    bad = _BAD_CHAR.search(code, start, end)
    if bad:
        b.error(f"unexpected character {code[bad.start()]!r}", bad.start(), bad.start() + 1)
        return LineSyntax("error", indent, label=label, label_range=label_range, problems=tuple(b.problems),
                          ends_in_comment=ends_in_comment)
    for s, e, content, style in comments:
        if style == "/*":
            b.annots[s] = content
    parsed = _parse_instruction(b, start, end, line_comment)
    problems = tuple(b.problems)
    if parsed is None or any(p[0] == ERROR for p in problems):
        return LineSyntax("error", indent, label=label, label_range=label_range, problems=problems,
                          ends_in_comment=ends_in_comment)
    mnemonic, dsts, srcs, suffix, mods, target, token_problems, operands = parsed
    comment = line_comment
    if comment is not None:
        comment = _TOKEN_LIST.sub("", comment).strip() or None
    flow = _mnemonic_facts(mnemonic)[0]
    return LineSyntax("instruction", indent, label, label_range, None, "", mnemonic, (start, end), dsts, srcs,
                      suffix, mods, comment, target, problems + token_problems if token_problems else problems,
                      ends_in_comment, ROLE_OTHER if label is not None else ROLE_INSTRUCTION, flow, operands)



def _parse_instruction(b: _Builder, start: int, end: int, comment: str | None) -> ParsedInstruction | None:
    code = b.code
    m = _MNEMONIC.match(code, start)
    if m is None:
        b.error(f"expected an instruction, label or directive, found '{_clip(code[start:end], 20)}'", start, end)
        return None
    mn_end = m.end()
    if mn_end < end and code[mn_end] not in " \t":
        b.error(f"unexpected character {code[mn_end]!r} after mnemonic", mn_end, mn_end + 1)
        return None
    mnemonic = m.group().lower()
    mark = b.text.find("st.token")
    mods, token_problems = _memtoken(comment, max(mark, 0), len(b.text))
    body_s, body_e = _strip_range(code, mn_end, end)
    if mnemonic in VERBATIM_OPERAND_MNEMONICS:
        srcs = (Special(code[body_s:body_e]),) if body_e > body_s else ()
        return mnemonic, (), srcs, "", mods, None, token_problems, ()
    dual = code.find("::", body_s, body_e)
    if dual >= 0:
        return _parse_dual(b, mnemonic, body_s, dual, body_e, mods, token_problems)
    if mnemonic == "s_waitcnt":
        # operands stay Special (even `s_waitcnt 0`): the counts live in mod.swaitcnt only
        ops = _legacy_wait_operands(b, body_s, body_e)
        if ops is None:
            return None
        mods = mods + _waitcnt_mods(mnemonic, code[body_s:body_e], ops, b.symbols)
        return mnemonic, (), tuple(ops), "", mods, None, token_problems, ()
    parsed = _operand_list(b, body_s, body_e)
    if parsed is None:
        return None
    ops, modifiers, suffix = parsed
    if mnemonic.startswith("s_waitcnt"):
        mods = mods + _waitcnt_mods(mnemonic, code[body_s:body_e], ops, b.symbols)
    dsts, srcs = _split_dst_src(mnemonic, ops, modifiers)
    target = branch_target(srcs) if _mnemonic_facts(mnemonic)[1] else None
    return mnemonic, dsts, srcs, suffix, mods, target, token_problems, (tuple(ops), modifiers, -1)


def _legacy_wait_operands(b: _Builder, s: int, e: int) -> list[Operand] | None:
    text = b.code[s:e]
    if read_legacy_waitcnt(text, b.symbols) is None:
        b.error(f"malformed s_waitcnt operand '{_clip(text.strip())}'", s, e)
        return None
    fields = [Special(m.group()) for m in _WAITCNT_FIELD.finditer(text)]
    return fields if fields else [Special(text.strip())]


#: operand text the fast path can segment like the general one: no parentheses, and brackets
#: unnested, balanced and free of commas and blanks
_PLAIN_BODY = _Pattern(r'[^\[\]()]*(?:\[[^\[\]() \t,]*\][^\[\]()]*)*')


def _operand_list(b: _Builder, s: int, e: int) -> tuple[list[Operand], tuple[str, ...], str] | None:
    """Operands, then trailing modifiers: `_operand_list_plain` when it applies, else the
    general `_operand_list_general` (which also reports every error)."""
    if s >= e:
        return [], (), ""
    if _PLAIN_BODY.fullmatch(b.code, s, e) is not None:
        done = _operand_list_plain(b, s, e)
        if done is not None:
            return done
    return _operand_list_general(b, s, e)


def _operand_list_plain(b: _Builder, s: int, e: int) -> tuple[list[Operand], tuple[str, ...], str] | None:
    """`_operand_list_general` for operand text that `_PLAIN_BODY` accepts, or None to defer.

    There, the general path's top-level comma split is `str.split(",")` and its item split is
    at blanks, so this only has to refuse what would join items (an operator at an item's
    edge) and what is an error (it reports nothing: the general path does, on None).  Same
    classification, same `_operand` calls, so the same result.
    """
    code = b.code
    symbols = b.symbols
    annots = b.annots
    text = b.text
    ops: list[Operand] = []
    modifiers: list[str] = []
    mod_start = mod_end = -1
    pos = s
    for chunk in code[s:e].split(","):
        cs = pos
        pos += len(chunk) + 1
        item = chunk.strip()
        if not item:
            return None
        if " " in item or "\t" in item:
            parts = item.split()
            prev = parts[0]
            for part in parts[1:]:
                if prev[-1] in _OPERATOR_END or part[0] in _OPERATOR_START or part == "-":
                    return None
                prev = part
            items = []
            p = cs
            for part in parts:
                p = code.find(part, p)
                items.append((part, p, p + len(part)))
                p += len(part)
        else:
            is_ = code.find(item, cs)
            items = [(item, is_, is_ + len(item))]
        k = 0
        for t, ts, te in items:
            if (t.lower() in BARE_MODIFIERS or (":" in t and _MOD_KEY.match(t) is not None)
                    or (mod_start >= 0 and k > 0 and not _looks_like_operand(t))):
                if not (_MOD_KEY.match(t) or _IDENT.fullmatch(t)):
                    return None
                if mod_start < 0:
                    mod_start = ts
                mod_end = te
                modifiers.append(t)
            elif mod_start >= 0:
                return None
            else:
                new_ops, err = _operand(t, symbols, _annotation_after(text, annots, te) if annots else None)
                if err:
                    return None
                ops.extend(new_ops)
            k += 1
    return ops, tuple(modifiers), code[mod_start:mod_end] if mod_start >= 0 else ""


def _operand_list_general(b: _Builder, s: int, e: int) -> tuple[list[Operand], tuple[str, ...], str] | None:
    """Operands, then trailing modifiers (kept verbatim as the suffix).

    The AMDGPU assembler makes the commas between operands optional (``s_cmp_gt_i32 s40 1``
    is accepted, and appears in real kernels), so items are split at top-level commas and
    whitespace alike.  An item is a modifier when it is spelled ``key:value`` or is a known
    bare modifier (``offen``, ``glc``...); once modifiers start, every later item that is not
    introduced by a comma is a modifier too.
    """
    code = b.code
    if s >= e:
        return [], (), ""
    chunks, problem = _split_top(code, s, e, ",")
    if problem:
        b.problems.append(problem)
        return None
    ops: list[Operand] = []
    modifiers: list[str] = []
    mod_start = mod_end = -1
    annots = b.annots
    for cs, ce in chunks:
        cs, ce = _strip_range(code, cs, ce)
        if cs >= ce:
            b.error("empty operand", cs, cs + 1)
            return None
        chunk = code[cs:ce]
        items = [(cs, ce)] if " " not in chunk and "\t" not in chunk else _items(code, cs, ce)
        for k, (is_, ie) in enumerate(items):
            t = code[is_:ie] if len(items) > 1 else chunk
            if _is_modifier(t) or (mod_start >= 0 and k > 0 and not _looks_like_operand(t)):
                if not (_MOD_KEY.match(t) or _IDENT.fullmatch(t)):
                    b.error(f"malformed modifier '{_clip(t)}'", is_, ie)
                    return None
                if mod_start < 0:
                    mod_start = is_
                mod_end = ie
                modifiers.append(t)
                continue
            if mod_start >= 0:
                b.error(f"operand '{_clip(t)}' after modifiers", is_, ie)
                return None
            new_ops, err = _operand(t, b.symbols, _annotation_after(b.text, annots, ie) if annots else None)
            if err:
                b.error(err, is_, ie)
                return None
            ops.extend(new_ops)
    suffix = code[mod_start:mod_end] if mod_start >= 0 else ""
    return ops, tuple(modifiers), suffix



def _parse_dual(b: _Builder, mnemonic: str, s: int, dual: int, e: int, mods: ModData,
                token_problems: tuple[Problem, ...]) -> ParsedInstruction | None:
    """``v_dual_X dstX, srcs :: v_dual_Y dstY, srcs``: both first operands are destinations."""
    code = b.code
    left = _operand_list(b, *_strip_range(code, s, dual))
    if left is None:
        return None
    ys, ye = _strip_range(code, dual + 2, e)
    m = _MNEMONIC.match(code, ys)
    if m is None or (m.end() < ye and code[m.end()] not in " \t"):
        b.error("expected the second mnemonic of a dual instruction after '::'", ys, ye)
        return None
    right = _operand_list(b, *_strip_range(code, m.end(), ye))
    if right is None:
        return None
    lops, rops = left[0], right[0]
    dsts = tuple(lops[:1]) + tuple(rops[:1])
    srcs = tuple(lops[1:]) + tuple(rops[1:])
    return mnemonic, dsts, srcs, right[2], mods, None, token_problems, (tuple(lops) + tuple(rops), right[1], len(lops))

