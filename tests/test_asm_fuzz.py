"""Robustness of the assembly front end and printer: no input may raise or crash the parse."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stinkywait_core.diagnostics import ERROR
from stinkywait_core.syntax.asm_parser import parse_asm, split_lines
from stinkywait_core.syntax.asm_printer import indentation_for, insert_lines

SEED_LINES = [
    "\tds_load_b128 v[106:109] /*v[362:365]*/, v93 /*v349*/ offset:512 // st.token:0",
    "\tv_dual_mov_b32 v80 /*v336*/, 0 :: v_dual_bitop2_b32 v112, 15, v0 bitop3:0x40",
    "\ts_waitcnt vmcnt(0) lgkmcnt(1)",
    "\tbuffer_load_dwordx4  acc[0:3],   v4, s[20:23], 0 offen offset: 0x400 * 1 ",
    "\ts_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1",
    ".LBB0_2:                                ; %loop",
    "\ts_cbranch_scc1 .LBB0_2",
    "\t.set sgprX, 4",
    "\ts_load_b64 s[sgprX:sgprX+1], s[0:1], 0x0",
    "\t.amdhsa_kernel k",
    "\t.end_amdhsa_kernel",
    "/* open",
    "close */ s_nop 0",
    "\tv_pk_add_f32 v[12:13], v[12:13], 1.0 op_sel_hi:[1,0]",
    "\ts_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)",
    "\tglobal_atomic_add_u32 v0, v1, v2, s[0:1] th:TH_ATOMIC_RETURN",
    "k:",
    "\ts_endpgm",
]

FUZZ = settings(max_examples=int(__import__("os").environ.get("ASM_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(text: str) -> None:
    """The properties every parse must have, whatever the input."""
    m = parse_asm(text, "fuzz.s")
    assert not [d for d in m.diagnostics if d.code == "asm-internal"], m.diagnostics
    raw = split_lines(text)
    assert len(m.lines) == len(raw)
    for ln, t in zip(m.lines, raw):
        assert ln.text == t
        if ln.instruction is not None:
            s = ln.instruction.span
            assert t[s.col - 1:s.end_col - 1] == ln.instruction.text
    for d in m.diagnostics:
        assert 1 <= d.line <= max(len(raw), 1)
        assert d.col >= 1 and d.format("fuzz.s").startswith(f"fuzz.s:{d.line}:{d.col}: ")
    for f in m.functions:
        for b in f.blocks:
            assert all(s in f.blocks for s in b.succs)
            assert all(b in s.preds for s in b.succs)
    assert insert_lines(text, []) == text
    indentation_for(m, len(raw) + 1)


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text):
    check_invariants(text)


@FUZZ
@given(st.binary(max_size=400))
def test_binary_garbage_never_raises(data):
    check_invariants(data.decode("latin-1"))


def mutate(text: str, rnd: random.Random, edits: int, inserted: str = "[]():,;/*|-+0x9vs \t\n.:",
           replacing: str = "[]{}@?!'\"`\\") -> str:
    """`text` after `edits` random one-character deletions, insertions and replacements."""
    chars = list(text)
    for _ in range(edits):
        op = rnd.choice("dis")
        pos = rnd.randint(0, len(chars))
        if op == "d" and pos < len(chars):
            del chars[pos]
        elif op == "i":
            chars.insert(pos, rnd.choice(inserted))
        elif pos < len(chars):
            chars[pos] = rnd.choice(replacing)
    return "".join(chars)


@FUZZ
@given(st.lists(st.sampled_from(SEED_LINES), max_size=30), st.randoms(use_true_random=False))
def test_mutated_assembly_never_raises(lines, rnd):
    check_invariants(mutate("\n".join(lines), rnd, rnd.randint(0, 6)))


@FUZZ
@given(st.text(alphabet="{}?`'!\\~", min_size=1, max_size=20))
def test_garbage_instruction_lines_get_an_error(garbage):
    text = f"k:\n\ts_nop 0\n\t{garbage}\n\ts_endpgm\n"
    m = parse_asm(text, "fuzz.s")
    errs = [d for d in m.diagnostics if d.severity == ERROR]
    assert errs and all(d.line == 3 for d in errs)
    assert m.lines[2].kind == "error"
    assert [i.mnemonic for i in m.functions[0].instructions() if not i.is_label] == ["s_nop", "s_endpgm"]


@FUZZ
@given(st.lists(st.text(alphabet="ab \t\r\n", max_size=8), max_size=8),
       st.lists(st.tuples(st.integers(-3, 12), st.text(alphabet="xy\t", min_size=1, max_size=5)), max_size=6))
def test_insert_lines_only_adds_lines(parts, insertions):
    text = "".join(parts)
    out = insert_lines(text, insertions)
    before = split_lines(text)
    after = split_lines(out)
    assert len(after) == len(before) + len(insertions)
    # dropping the inserted lines gives the original lines back, in order
    inserted = {t for _, t in insertions}
    assert [ln for ln in after if ln not in inserted] == [ln for ln in before if ln not in inserted]
    assert out.endswith(("\n", "\r")) == (text.endswith(("\n", "\r")) or (not text and bool(insertions)))
    if not insertions:
        assert out == text


def test_huge_line_and_deep_nesting_do_not_explode():
    huge = "\tv_add_f32 v1, " + " + ".join(["1"] * 60000) + "\n"           # ~300 kB
    nested = "\tv_mov_b32 v0, " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    lists = "\timage_sample v[0:3], " + "[" * 3000 + "v1" + "]" * 3000 + "\n"
    digits = "\ts_mov_b32 s0, " + "9" * 10000 + " // st.token:" + "7" * 5000 + "\n"
    for text in (huge, nested, lists, digits, "v[" * 50000, "/*" * 50000, '"' * 9999):
        check_invariants(text)
    m = parse_asm(lists, "t.s")
    assert [d.severity for d in m.diagnostics] == [ERROR]


def test_hundred_thousand_lines():
    rng = random.Random(7)
    text = "\n".join(rng.choice(SEED_LINES) for _ in range(100_000)) + "\n"
    m = parse_asm(text, "big.s")
    assert len(m.lines) == 100_000
    assert not [d for d in m.diagnostics if d.code == "asm-internal"]
