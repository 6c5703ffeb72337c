"""The asm front end's fast paths give exactly what the general path gives.

`parse_line` reads common instruction lines with `_parse_plain_instruction` (two tiers:
string splits for lines whose items were all seen before, a token loop otherwise) and falls
back to `_parse_line_general` for everything else.  These tests run both on the corpus and on
generated lines (token soups and mutations) and require identical `LineSyntax` records; and
a whole parse of every corpus file must not depend on which lines were seen before.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stinkywait_core.syntax import asm_fastpath, asm_lex, asm_line, asm_operands
from stinkywait_core.syntax.asm_expr import EMPTY_SYMBOLS
from stinkywait_core.syntax.asm_parser import parse_asm, split_lines
from test_asm_fuzz import mutate

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "asm"
CORPUS_FILES = sorted(CORPUS.glob("*.s")) + sorted(CORPUS.glob("llvm22-pairs/*.s")) if CORPUS.is_dir() else []
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.s"))

VOCAB = ["v1", "v[0:3]", "s[4:7]", "s0", "vcc", "vcc_lo", "exec", "null", "off", "m0", "0", "0x10", "-1", "1.0",
         "-v2", "|v3|", "abs(v1)", "offset:16", "offset:", "16", "glc", "nv", "offen", "lds", "th:TH_LOAD_NT",
         "op_sel:[1,0]", "matrix_a_fmt:MATRIX_FMT_FP4", "/*v300*/", "/*v[4:7]*/", "/**/", "/* x */", "//c", "; c",
         "// st.token:1", "::", "v_dual_mov_b32", "+", "-", "4", "*", "sym", "sym@lo", "[v1,", "v2]", "(", ")", ":",
         "=", ",", ",", ",", "v0/*v9*/", "s[0 : 1]", "v01", "V5", "ttmp6", "acc[0:1]", "a5", "v1.l", "-0x1f",
         "hwreg(HW_REG_MODE)", "/", "/*", "*/", "x:y:z", "1e3", "v99999", "v[3:1]", "\x01", "op_sel_hi:[1,0]",
         "op_sel:[0,1,1]", "op_sel:[1,", "0]", "neg_lo:[1, 0]", "offset: 0x400", "0x8e0 * 1", "64 * 0", "|v4|",
         "-|v5|", "|", "clamp"]
MNEMONICS = ["v_mov_b32", "ds_load_b128", "s_mov_b32", "v_cmp_gt_i32_e32", "v_add_co_u32", "global_atomic_add_u32",
             "s_cbranch_scc1", "s_waitcnt", "s_delay_alu", "v_dual_add_f32", "buffer_load_dword", "s_endpgm",
             "v_fmac_f32", "v_swap_b32", "k:", "x =", ".set", "s_waitcnt_vscnt"]


def soup(rng: random.Random) -> str:
    """A line of random operand-ish tokens after a mnemonic, with random separators."""
    line = rng.choice(["\t", "  ", ""])
    for tok in [rng.choice(MNEMONICS)] + [rng.choice(VOCAB) for _ in range(rng.randint(0, 8))]:
        line += tok + rng.choice([" ", "", ", ", "\t", "  ", ","])
    return line


def both_paths_agree(line: str) -> bool:
    """Run the fast path twice (cold: the token loop; then with every item known: the string
    splits) and compare each answer with the general path's."""
    general = asm_line._parse_line_general(line, False, EMPTY_SYMBOLS)
    for _ in range(2):
        fast = asm_fastpath._parse_plain_instruction(line, EMPTY_SYMBOLS)
        if fast is not None:
            assert fast == general, (line, fast, general)
    return asm_fastpath._parse_plain_instruction(line, EMPTY_SYMBOLS) is not None


def corpus_lines() -> list[str]:
    out: dict[str, None] = {}
    for path in CORPUS_FILES + EXAMPLES:
        out.update(dict.fromkeys(split_lines(path.read_text())))
    return list(out)


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
def test_corpus_lines_fast_equals_general():
    lines = corpus_lines()
    taken = sum(both_paths_agree(line) for line in lines)
    assert taken > len(lines) // 2  # the fast path is the common one


@pytest.mark.parametrize("seed", range(4))
def test_generated_lines_fast_equals_general(seed):
    rng = random.Random(seed)
    pool = corpus_lines() if CORPUS_FILES else [soup(rng) for _ in range(200)]
    for _ in range(2500):
        both_paths_agree(soup(rng))
        both_paths_agree(mutate(rng.choice(pool), rng, rng.randint(1, 4), "[]():,;/*|-+0x9vs \t.:=\"",
                                "[]{}@?!'`\\ ,:-+/"))


def test_fast_path_handles_the_common_shapes():
    for line in ("\tv_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]",
                 "\tds_load_b128 v[106:109] /*v[362:365]*/, v93 /*v349*/ offset:512 // st.token:0",
                 "\tbuffer_load_b32 v1, v2, s[4:7], null offen",
                 "\tv_dual_mov_b32 v80 /*v336*/, 0 :: v_dual_mov_b32 v81, 0",
                 "\ts_cbranch_scc1 .LBB0_2",
                 "\ts_endpgm",
                 "\tv_pk_add_f32 v[12:13], v[12:13], 1.0 op_sel_hi:[1,0]",
                 " buffer_load_dwordx4  acc[28:31], v5, s[20:23], 0 offen offset: 0x400 * 1 ",
                 "\tv_dual_mov_b32 v203, v80 /*v336*/ :: v_dual_mov_b32 v204, v80 /*v336*/"):
        assert both_paths_agree(line), line


def test_fast_path_character_check_is_the_general_paths():
    """The fast path's check for characters only the general path reports (str methods, no
    regex) refuses exactly the characters `_BAD_CHAR` finds, and the general path reports them."""
    for code in range(256):
        c = chr(code)
        line = f"\tv_mov_b32 v1, v2{c}"
        bad = asm_lex._BAD_CHAR.search(line) is not None
        assert (asm_fastpath._parse_plain_instruction(line, EMPTY_SYMBOLS) is None) or not bad, repr(c)
        if bad:
            assert asm_line._parse_line_general(line, False, EMPTY_SYMBOLS).kind == "error", repr(c)
        elif c not in "\"/;,:[]()|-+*&^%<>=!~ \t":
            both_paths_agree(line)


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES[:4], ids=lambda p: p.name)
def test_parse_does_not_depend_on_what_was_seen_before(path):
    """A parse after the caches were emptied equals a parse with warm caches."""
    text = path.read_text()
    warm = parse_asm(text, str(path))
    for cache in (asm_line.parse_line, asm_operands._operand):
        cache.cache_clear()
    for table in (asm_operands._ITEM_KINDS, asm_operands._PLAIN_OPERANDS, asm_operands._SINGLE_OPERANDS,
                  asm_operands._SIMPLE_MODIFIERS, asm_operands._ANNOTATED, asm_fastpath._HEADS,
                  asm_fastpath._CHUNK_OPERANDS):
        table.clear()
    cold = parse_asm(text, str(path))
    assert [(ln.kind, ln.instruction is not None) for ln in cold.lines] == \
        [(ln.kind, ln.instruction is not None) for ln in warm.lines]
    for fa, fb in zip(cold.functions, warm.functions):
        for a, b in zip(fa.instructions(), fb.instructions()):
            assert (a.mnemonic, a.dsts, a.srcs, a.suffix, a.span, a.text, a.comment) == \
                (b.mnemonic, b.dsts, b.srcs, b.suffix, b.span, b.text, b.comment)
