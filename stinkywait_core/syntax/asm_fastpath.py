"""The fast path of the line parser: instruction lines of the common shapes.

Compilers emit mostly lines of one shape (a mnemonic, operands separated by commas, closed
``/*...*/`` notes, trailing ``key:value`` modifiers, maybe a line comment).  These are read
here with string splits or a token loop instead of the general path's masking and bracket
handling; anything else defers to the general path (`asm_line._parse_line_general`), whose
result this path must reproduce exactly (`tests/test_asm_fastpath.py`).
"""

from __future__ import annotations

from .asm_expr import EMPTY_SYMBOLS, Symbols
from .asm_flow import _mnemonic_facts, branch_target
from .asm_lex import (LINE_CACHE_SIZE, _MNEMONIC, _OPERATOR_END, _OPERATOR_START, _TOKEN_LIST, _annotation_from,
                      _memtoken, _Pattern)
from .asm_operands import (_IS_MODIFIER, _ITEM_KINDS, _LOOKS_LIKE_OPERAND, _NEEDS_GENERAL, _PLAIN,
                           _PLAIN_OPERANDS, _SIMPLE_MODIFIERS, _SINGLE_OPERANDS, _VALID_MODIFIER,
                           _annotated_operand, _item_kind, _operand, _plain_operand)
from .asm_records import ROLE_INSTRUCTION, LineSyntax
from .asm_split import _split_dst_src
from .asm_tables import VERBATIM_OPERAND_MNEMONICS

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from ..ir import Operand

_new_tuple = tuple.__new__

#: one token of an instruction's operand text, after optional blanks: an item (a maximal
#: run without blanks, commas and comment starts) or a closed block comment, each with the
#: comma that follows it; a line comment; or a character only the general path handles (a
#: comma after nothing, an unclosed `/*`)
_FAST_TOKEN = _Pattern(r'([ \t]*)(?:([^ \t,/;]+(?:/(?![*/])[^ \t,/;]*)*|/(?![*/])[^ \t,/;]*(?:/(?![*/])[^ \t,/;]*)*)'
                       r'([ \t]*,)?|/\*(.*?)(\*/)([ \t]*,)?|(?://|;)(.*)|(\S))')


def _parse_plain_instruction(text: str, symbols: Symbols) -> LineSyntax | None:
    """`parse_line` for an instruction line of the common shapes, or None to defer.

    Takes lines starting (after blanks) with a mnemonic, whose operand text splits at blanks
    and commas into items that need no bracket or operator handling, with closed block
    comments (VGPR annotations) and an optional line comment: what compilers emit.  Items
    are classified and converted exactly as `_operand_list_general` does; anything it would
    treat differently (parentheses, lists, expressions spread over blanks, labels,
    assignments, legacy waits, errors) returns None and goes the general way.

    Two tiers: operand text without comments whose items are all plain operands and simple
    modifiers is split with string methods (`_split_plain_operands`); the rest is read token
    by token (`_read_operand_tokens`).
    """
    if not text.isascii() or '"' in text:
        return None
    stripped = text.lstrip(" \t")
    # `_BAD_CHAR` without the regex: for ASCII text, printable is exactly \x20-\x7e (the
    # stripped blanks are allowed characters)
    if not (stripped.isprintable() or stripped.replace("\t", " ").isprintable()):
        return None
    if not stripped or not (stripped[0].isalpha() or stripped[0] == "_"):
        return None  # not a mnemonic first
    start = len(text) - len(stripped)
    blank = stripped.find(" ")
    word = stripped[:blank] if blank >= 0 else stripped
    if not word.isidentifier():  # not followed by a blank (a tab, a comma, a colon...) or the end
        end = 1
        while end < len(word) and (word[end].isalnum() or word[end] == "_"):  # ASCII: [A-Za-z0-9_]
            end += 1
        word = word[:end]
        if stripped[end] not in " \t/;":
            return None  # a label, an assignment, a comma right after the mnemonic: tier two
            # refuses an item or a character there, and tier one wants a blank
    facts = _HEADS.get(word)
    if facts is None:
        facts = _head_facts(word)
    mnemonic, deferred, flow, branches = facts
    if deferred:
        return None
    pos = start + len(word)
    read = None
    if symbols is EMPTY_SYMBOLS and ";" not in text and "//" not in text:
        read = _split_plain_operands(text, pos)
    if read is None:
        if "(" in text and "/" not in text and ";" not in text:
            return None  # an item with a parenthesis, which tier two leaves to the general path
        read = _read_operand_tokens(text, pos, symbols)
        if read is None:
            return None
    left, ops, modifiers, suffix, code_end, line_comment = read
    mods, token_problems = (), ()
    comment = line_comment
    if comment is not None:
        mods, token_problems = _memtoken(comment, max(text.find("st.token"), 0), len(text))
        comment = _TOKEN_LIST.sub("", comment).strip() or None
    target = None
    if left is not None:  # dual: both first operands are destinations; the second half's suffix is kept
        dsts = tuple(left[:1]) + tuple(ops[:1])
        srcs = tuple(left[1:]) + tuple(ops[1:])
        operands = (tuple(left) + tuple(ops), modifiers, len(left))
    else:
        dsts, srcs = _split_dst_src(mnemonic, ops, modifiers)
        if branches:
            target = branch_target(srcs)
        operands = (tuple(ops), modifiers, -1)
    # the named tuple made with tuple.__new__: its Python-level __new__ costs 0.6 us per line
    return _new_tuple(LineSyntax, ("instruction", start, None, None, None, "", mnemonic, (start, code_end), dsts, srcs,
                                   suffix, mods, comment, target, token_problems, False, ROLE_INSTRUCTION, flow,
                                   operands))



#: `_head_facts` by mnemonic spelling
_HEADS: dict[str, tuple[str, bool, int, bool]] = {}


def _head_facts(word: str) -> tuple[str, bool, int, bool]:
    """(mnemonic in lower case, whether the general path must read the line, its FLOW_* bits,
    whether it takes a branch target) of a mnemonic as spelled (memoised)."""
    mnemonic = word.lower()
    deferred = mnemonic in VERBATIM_OPERAND_MNEMONICS or mnemonic.startswith("s_waitcnt")
    facts = (mnemonic, deferred) + tuple(_mnemonic_facts(mnemonic))
    if len(_HEADS) >= 8192:
        _HEADS.clear()
    _HEADS[word] = facts  # type: ignore[assignment]
    return facts  # type: ignore[return-value]


#: what reading an instruction's operand text gives: (a dual instruction's first operands or
#: None, operands, modifiers, suffix, end of the code, line comment)
_Operands = tuple


def _split_plain_operands(text: str, pos: int) -> _Operands | None:
    """Tier one: the operand text after `pos` (no line comment, empty `.set` table) when every
    item is a single plain operand (`_SINGLE_OPERANDS`), possibly followed by a closed
    ``/*...*/`` note, and the last chunk's trailing items are simple modifiers
    (`_SIMPLE_MODIFIERS`).  Then the general path's comma and blank splits are `str.split`s,
    a note is the comment right after its chunk's operand (`_annotation_after`), nothing
    joins and nothing is an error, so the result is the same.  A dual instruction
    (``v_dual_X ... :: v_dual_Y ...``) is read as two such lists, the first without modifiers.
    None: use tier two."""
    rest = text[pos:]
    if not rest or rest.isspace():  # no operands (``s_endpgm``); only blanks are left as white space
        return None, [], (), "", pos, None
    if rest[0] not in " \t":
        return None
    if "::" not in rest:
        return _plain_list(text, rest)
    left_text, _, right_text = rest.partition("::")
    second = right_text.lstrip(" \t")
    word = second.split(None, 1)[0] if second else ""
    if not word.isidentifier() or not left_text.strip():
        return None  # the general path reports a missing or malformed second mnemonic
    left = _plain_list(text, left_text)
    right = _plain_list(text, second[len(word):])
    if left is None or right is None or left[2]:
        return None
    return left[1], right[1], right[2], right[3], right[4], None


def _plain_list(text: str, rest: str) -> _Operands | None:
    """`_split_plain_operands` for one operand list `rest` (starting with a blank; the end of
    the code is right when `rest` ends the line)."""
    if not rest or rest[0] not in " \t":
        return None
    chunks = rest.split(",")
    if ":[" in rest:  # a modifier's list value (``op_sel_hi:[1,0]``): its commas separate nothing
        chunks = _join_lists(chunks)
        if chunks is None:
            return None
    final = chunks[-1]  # ends the line (a blank one makes no operand: None below)
    code_end = len(text) - len(final) + len(final.rstrip(" \t"))
    items = list(map(str.strip, chunks))
    last = items[-1]
    note = None  # the last chunk's block comment; the others' are part of their memo key
    if "/" in last:
        chunk = chunks[-1]
        split = _note_split(chunk)
        if split is None:
            return None
        item, note, after = split
        if after.strip():
            last = (item + " " + after).strip()
        else:
            last = item
            code_end = len(text) - len(chunk) + len(chunk.partition("/*")[0].rstrip(" \t"))
        items[-1] = last
    modifiers: tuple[str, ...] = ()
    suffix = ""
    if " " in last or "\t" in last:
        tail = last.split()
        items[-1] = tail[0]
        modifiers = tuple(tail[1:])
        if not all(map(_SIMPLE_MODIFIERS.__contains__, modifiers)):
            joined = _joined_modifiers(last, tail)  # ``offset: 0x400 * 1`` is one modifier
            if joined is None:
                return None
            modifiers = joined
            for m in modifiers:  # first seen: classify (which records the simple ones), then retry
                _item_kind(m)
            if not all(map(_SIMPLE_MODIFIERS.__contains__, modifiers)):
                return None
        suffix = last[len(tail[0]):].lstrip()
    ops = list(map(_CHUNK_OPERANDS.get, items))
    if note is not None:
        annotation = _annotation_from(note)
        if annotation is not None:
            op = ops[-1] = _annotated_operand(items[-1], annotation)
            if op is None:
                return None
    if not all(ops):  # a miss (operands are always true; `None in ops` would call their __eq__)
        for k, op in enumerate(ops):
            if op is None:  # first seen: convert (which records the chunk), then retry
                op = ops[k] = _chunk_operand(items[k])
                if op is None:
                    return None
    return None, ops, modifiers, suffix, code_end, None



#: `_chunk_operand` by chunk
_CHUNK_OPERANDS: dict[str, Operand] = {}


def _note_split(chunk: str) -> tuple[str, str, str] | None:
    """(item, note, text after the note) of a chunk ``item /*note*/ after`` whose note is its
    only slash, or None."""
    before, opened, after = chunk.partition("/*")
    content, closed, after = after.partition("*/")
    item = before.strip()
    if not opened or not closed or "/" in before or "/" in after or not item or " " in item or "\t" in item:
        return None
    return item, content, after


def _chunk_operand(chunk: str) -> Operand | None:
    """The operand of a comma-separated chunk of tier one (stripped, not the last chunk of its
    list, or the last one's item): a single plain item, maybe followed by a closed block
    comment (a VGPR note, applied as `_annotation_after` does); None otherwise.  Memoised in
    `_CHUNK_OPERANDS`: the same noted operands recur on many lines."""
    annotation = None
    if "/" in chunk:
        split = _note_split(chunk)
        if split is None or split[2].strip():
            return None
        item, note, _ = split
        annotation = _annotation_from(note)
    else:
        item = chunk
        if not item or " " in item or "\t" in item:
            return None
    if annotation is not None:
        op = _annotated_operand(item, annotation)
    else:
        op = _SINGLE_OPERANDS.get(item)
        if op is None:
            if not _item_kind(item) & _PLAIN:  # (classifying records a plain spelling's operand)
                return None
            op = _SINGLE_OPERANDS.get(item)
            if op is None:
                _plain_operand(item, EMPTY_SYMBOLS, None)
                op = _SINGLE_OPERANDS.get(item)
    if op is not None:
        if len(_CHUNK_OPERANDS) >= LINE_CACHE_SIZE:
            _CHUNK_OPERANDS.clear()
        _CHUNK_OPERANDS[chunk] = op
    return op


def _join_lists(chunks: list[str]) -> list[str] | None:
    """`chunks` (operand text split at every comma) with the pieces of a bracketed list
    joined again, as the general path's top-level split leaves them; None when a list spans a
    blank (the blank split of the last chunk would cut it) or is not closed."""
    out: list[str] = []
    open_list = False
    for chunk in chunks:
        if open_list:
            close = chunk.find("]")
            inner = chunk if close < 0 else chunk[:close]
            if " " in inner or "\t" in inner:
                return None
            chunk = out.pop() + "," + chunk
        open_list = chunk.count("[") > chunk.count("]")
        if open_list:
            inner = chunk[chunk.rfind("["):]
            if " " in inner or "\t" in inner:
                return None
        out.append(chunk)
    return None if open_list else out


def _joined_modifiers(last: str, tail: list[str]) -> tuple[str, ...] | None:
    """The modifiers of the last chunk `last` (its blank-separated items `tail`, the first
    being the operand) when items are joined at operators as the general path's `_items`
    joins them (``offset: 0x400 * 1`` is one item), spelled as in the text; None when the
    operand itself would join."""
    spans: list[tuple[int, int]] = []
    p = 0
    for part in tail:
        s = last.find(part, p)
        p = s + len(part)
        if spans:
            ps, pe = spans[-1]
            prev_is_abs = pe - ps > 1 and last[pe - 1] == "|" and (
                last[ps] == "|" or (last[ps] == "-" and last[ps + 1] == "|"))
            if (last[pe - 1] in _OPERATOR_END and not prev_is_abs) or part[0] in _OPERATOR_START or part == "-":
                if len(spans) == 1:
                    return None
                spans[-1] = (ps, p)
                continue
        spans.append((s, p))
    return tuple(last[s:e] for s, e in spans[1:])


def _read_operand_tokens(text: str, pos: int, symbols: Symbols) -> _Operands | None:
    """Tier two: the operand text after `pos`, token by token (see `_FAST_TOKEN`)."""
    first = code_end = pos
    tokens = _FAST_TOKEN.findall(text, pos)
    if tokens:
        ws, item = tokens[0][:2]
        if (not ws and item) or item[:1] in (":", "="):
            return None  # no blank after the mnemonic (an error), or a label, or an assignment
    kinds = _ITEM_KINDS
    plain = _PLAIN_OPERANDS if symbols is EMPTY_SYMBOLS else {}
    left: list[Operand] | None = None  # a dual instruction's first operand list
    ops: list[Operand] = []
    modifiers: list[str] = []
    mod_start = mod_end = -1
    k = 0  # items in the current comma-separated chunk
    prev = ""  # the previous item of the chunk
    pending = ""  # an operand item waiting for a possible annotation comment
    pending_comma = False  # ... which a comma already ended
    line_comment = None
    second = False  # a dual instruction's second mnemonic comes next
    for ws, item, comma, block, closing, block_comma, rest, other in tokens:
        pos += len(ws)
        if pending:  # an annotation is a block comment right after the operand (no comma between)
            r = None if item or not closing or pending_comma else _annotation_from(block)
            r = plain.get(pending) if r is None else _operand(pending, symbols, r)
            if r is None:
                r = _plain_operand(pending, symbols, None)
            if r[1]:
                return None
            ops.extend(r[0])
            pending = ""
        if item:
            if second:
                if comma or _MNEMONIC.fullmatch(item) is None:
                    return None
                second = False
            elif item == "::":
                if comma or left is not None or (ops or modifiers) and not k:
                    return None
                left = ops
                ops, modifiers = [], []
                mod_start = -1
                k = 0
                second = True
            else:
                if k and (prev[-1] in _OPERATOR_END or item[0] in _OPERATOR_START or item == "-"):
                    return None  # the general path joins these into one item
                kind = kinds.get(item)
                if kind is None:
                    kind = _item_kind(item)
                if kind & _PLAIN and mod_start < 0:
                    pending = item  # the common case: a register or an integer
                    pending_comma = bool(comma)
                elif kind & _NEEDS_GENERAL:
                    return None
                elif kind & _IS_MODIFIER or (mod_start >= 0 and k and not kind & _LOOKS_LIKE_OPERAND):
                    if not kind & _VALID_MODIFIER:
                        return None
                    if mod_start < 0:
                        mod_start = pos
                    mod_end = pos + len(item)
                    modifiers.append(item)
                elif mod_start >= 0:
                    return None  # an operand after modifiers
                else:
                    pending = item
                    pending_comma = bool(comma)
                prev = item
                k += 1
            pos += len(item)
            code_end = pos
            if comma:
                pos += len(comma)
                code_end = pos
                k = 0
        elif closing:  # a block comment (maybe empty)
            if mod_start >= 0 and not pending:
                return None  # masked to blanks inside the suffix: the general path keeps them
            pos += len(block) + 4
            if block_comma:
                if not k:
                    return None
                pos += len(block_comma)
                code_end = pos
                k = 0
        elif other:
            return None
        else:
            line_comment = rest
            break
    if pending:
        r = _plain_operand(pending, symbols, None)
        if r[1]:
            return None
        ops.extend(r[0])
    if second or (not k and code_end > first and text[code_end - 1] == ","):
        return None  # nothing after "::", or a trailing comma (an empty operand)
    return left, ops, tuple(modifiers), text[mod_start:mod_end] if mod_start >= 0 else "", code_end, line_comment

