"""Unit tests of the STIR front end: structure, operands, modifiers, positions, recovery."""

from __future__ import annotations

from stinkywait_core.ir import FloatImm, Imm, Reg, Span, Special, Str
from stinkywait_core.syntax import parse
from stinkywait_core.syntax.stir_parser import analyze_line, parse_stir

SAMPLE = """\
# RUN: ignored
st.func @first() {
^entry:
  v[0:1] = "st.ds_load_b64"(v10) { mod.ds = { na = 1, offset = 16, gds = false }, mod.memtoken = { tokens = [0] } }
  SCC0 = "st.s_cmp_eq_u32"(s60, 0x1)
  "st.s_cbranch_scc1"("loop", SCC0)
  Successors: ^loop, ^exit
^loop:
  "st.s_branch"("loop")
  Successors: ^loop
^exit:
}
st.func @second() {
^entry:
  "st.s_nop"(0) { issueCycles = 3, latencyCycles = 20 }
}
"""


def errors(module):
    return [d for d in module.diagnostics if d.severity == "error"]


def test_functions_blocks_and_cfg():
    m = parse_stir(SAMPLE, "s.stir")
    assert m.kind == "stir" and m.diagnostics == []
    assert [f.name for f in m.functions] == ["first", "second"]
    first = m.functions[0]
    assert [b.label for b in first.blocks] == ["entry", "loop", "exit"]
    entry, loop, exit_ = first.blocks
    assert entry.succs == [loop, exit_]
    assert loop.succs == [loop]
    assert loop.preds == [entry, loop]
    assert exit_.preds == [entry] and exit_.succs == [] and exit_.instrs == []
    assert all(i.block is entry for i in entry.instrs)
    assert [b.index for b in first.blocks] == [0, 1, 2]


def test_exact_spans_and_text():
    m = parse_stir(SAMPLE, "s.stir")
    first = m.functions[0]
    assert first.span == Span(2, 1, 12, 2)
    assert first.name_span == Span(2, 10, 2, 15)
    entry = first.blocks[0]
    assert entry.span == Span(3, 1, 7, 27)
    assert entry.succ_span == Span(7, 3, 7, 27)
    load = entry.instrs[0]
    line4 = SAMPLE.splitlines()[3]
    assert load.span == Span(4, 3, 4, len(line4) + 1)
    assert load.text == line4.strip()
    cmp_ = entry.instrs[1]
    assert cmp_.span == Span(5, 3, 5, 37)
    assert cmp_.text == 'SCC0 = "st.s_cmp_eq_u32"(s60, 0x1)'
    assert m.functions[1].span == Span(13, 1, 16, 2)


def test_mnemonic_namespace_dropped_and_operands_kept():
    m = parse_stir(SAMPLE, "s.stir")
    load, cmp_, br = m.functions[0].blocks[0].instrs
    assert load.mnemonic == "ds_load_b64"
    assert load.dsts == [Reg("v", 0, 1, spelling="v[0:1]")]
    assert load.srcs == [Reg("v", 10, 10, spelling="v10")]
    assert cmp_.dsts == [Reg("SCC", 0, 0, spelling="SCC0")]
    assert cmp_.srcs[1] == Imm(1, "0x1")
    assert br.srcs == [Str("loop", '"loop"'), Reg("SCC", 0, 0, spelling="SCC0")]


def test_modifiers_in_input_order_with_raw_text():
    m = parse_stir(SAMPLE, "s.stir")
    load = m.functions[0].blocks[0].instrs[0]
    assert list(load.mods) == ["ds", "memtoken"]
    ds = load.mods["ds"]
    assert ds.kind == "ds"
    assert list(ds.fields.items()) == [("na", 1), ("offset", 16), ("gds", False)]
    assert ds.raw == "{ na = 1, offset = 16, gds = false }"
    assert load.tokens == (0,)
    assert load.cycles is None


def test_cycles_given_and_defaults_for_partial_or_invalid():
    m = parse_stir(SAMPLE, "s.stir")
    assert m.functions[1].blocks[0].instrs[0].cycles == (3, 20)
    m = parse_stir('"st.v_add_f32"(v1) { latencyCycles = 9 }\n'
                   '"st.v_add_f32"(v1) { issueCycles = 0, latencyCycles = -4 }\n', "c.stir")
    a, b = m.functions[0].blocks[0].instrs
    assert a.cycles == (1, 9)
    assert b.cycles is None


def test_operand_forms():
    line = ('v1, acc[4:5] = "st.x"(v 12, v[3], -v2, -3, 1.5, 2e3, "s", off, BufferLimit, '
            'hwreg(HW_REG_MODE, 0, 4), label_L1, vcc_lo, exec, m0, acc7, ttmp2, LDS3, '
            'src_shared_base, 0xFF)')
    m = parse_stir(line, "o.stir")
    assert m.diagnostics == []
    inst = m.functions[0].blocks[0].instrs[0]
    assert inst.dsts == [Reg("v", 1, 1, spelling="v1"), Reg("a", 4, 5, spelling="acc[4:5]")]
    assert inst.srcs == [
        Reg("v", 12, 12, spelling="v 12"), Reg("v", 3, 3, spelling="v[3]"),
        Reg("v", 2, 2, neg=True, spelling="-v2"), Imm(-3, "-3"), FloatImm(1.5, "1.5"),
        FloatImm(2000.0, "2e3"), Str("s", '"s"'), Special("off"), Special("BufferLimit"),
        Special("hwreg(HW_REG_MODE, 0, 4)"), Str("label_L1", "label_L1"),
        Reg("vcc", 0, 0, spelling="vcc_lo"), Reg("exec", 0, 1, spelling="exec"),
        Reg("m", 0, 0, spelling="m0"), Reg("a", 7, 7, spelling="acc7"),
        Reg("ttmp", 2, 2, spelling="ttmp2"), Reg("LDS", 3, 3, spelling="LDS3"),
        Reg("src_shared_base", 0, 0, spelling="src_shared_base"), Imm(255, "0xFF")]


def test_modifier_values():
    m = parse_stir('"st.x"() { mod.foo = { a = "q\\"s", b = [1, -2, 0x10], c = 1.25, d = true, '
                   'e = IDENT, f = { g = [] } }, mod.swaitcnt = { dlcnt = 2 } }', "v.stir")
    assert m.diagnostics == []
    inst = m.functions[0].blocks[0].instrs[0]
    assert inst.mods["foo"].fields == {"a": 'q\\"s', "b": [1, -2, 16], "c": 1.25, "d": True,
                                        "e": "IDENT", "f": {"g": []}}
    assert inst.mods["swaitcnt"].fields == {"dlcnt": 2}


def test_comments_everywhere():
    text = ('st.func @f() { // header comment\n'
            '^entry: # block comment\n'
            '  /* leading */ v1 = "st.v_add_f32"(v2 /* inside */, "a#b//c") // tail\n'
            '  /* spans\n'
            '     lines */\n'
            '}\n')
    m = parse_stir(text, "c.stir")
    assert m.diagnostics == []
    inst = m.functions[0].blocks[0].instrs[0]
    assert inst.srcs[1] == Str("a#b//c", '"a#b//c"')
    assert inst.span == Span(3, 17, 3, 63)


def test_labels_and_asm_directive():
    m = parse_stir('st.func @f() {\n^entry:\n  top:\n  "st.asm_directive"(".globl", "sym")\n}\n', "l.stir")
    assert m.diagnostics == []
    label, directive = m.functions[0].blocks[0].instrs
    assert label.is_label and label.mnemonic == "top" and label.span == Span(3, 3, 3, 7)
    assert directive.mnemonic == "asm_directive"
    assert directive.srcs == [Str(".globl", '".globl"'), Str("sym", '"sym"')]


def test_flat_fallback():
    m = parse_stir('\n  "st.s_nop"(0)\n  v1 = "st.v_mov_b32"(v2)\n', "flat.stir")
    assert m.diagnostics == []
    (fn,) = m.functions
    assert fn.name == "" and [b.label for b in fn.blocks] == ["entry"]
    assert [i.mnemonic for i in fn.blocks[0].instrs] == ["s_nop", "v_mov_b32"]
    assert fn.blocks[0].instrs[0].span == Span(2, 3, 2, 16)


def test_bad_line_is_located_and_rest_parses():
    text = SAMPLE.replace('SCC0 = "st.s_cmp_eq_u32"(s60, 0x1)', 'SCC0 = "st.s_cmp_eq_u32"(s60,, 0x1)')
    m = parse_stir(text, "e.stir")
    (d,) = m.diagnostics
    assert (d.severity, d.code, d.line, d.col) == ("error", "parse-error", 5, 32)
    assert "unexpected ','" in d.message
    assert d.format("e.stir").startswith("e.stir:5:32: error: ")
    entry = m.functions[0].blocks[0]
    assert [i.mnemonic for i in entry.instrs] == ["ds_load_b64", "s_cbranch_scc1"]
    assert m.functions[1].blocks[0].instrs[0].mnemonic == "s_nop"


def test_unknown_successor_is_an_error_at_the_label():
    m = parse_stir(SAMPLE.replace("Successors: ^loop, ^exit", "Successors: ^loop, ^nowhere"), "u.stir")
    (d,) = errors(m)
    assert d.code == "unknown-successor" and d.message == "unknown successor block '^nowhere'"
    assert (d.line, d.col, d.end_col) == (7, 22, 30)
    assert m.functions[0].blocks[0].succ_labels == ["loop", "nowhere"]
    assert [b.label for b in m.functions[0].blocks[0].succs] == ["loop"]


def test_structural_errors():
    cases = {
        'st.func @f() {\n^a:\n"st.s_nop"()\n': "missing closing '}'",
        'st.func @f() {\n"st.s_nop"()\n}\n': "instruction outside a block",
        'st.func @f() {\n^a:\n^a:\n}\n': "duplicate block label",
        'st.func @f() {\n^a:\nSuccessors: ^a\n"st.s_nop"()\n}\n': "after the block's Successors",
        'st.func @f {\n}\n': "malformed function header",
        'st.func @f() {\n^a:\n  x = "st.s_nop"()\n}\n': "is not a register",
        'st.func @f() {\n^a:\n  "st.s_nop"(q[1:2])\n}\n': "unknown register type 'q'",
        'st.func @f() {\n^a:\n  "st.s_nop"(v[3:1])\n}\n': "upper bound below",
        'st.func @f() {\n^a:\nSuccessors: ^a ^b\n}\n': "expected ','",
        'st.func @f() {\n^a:\n/* open\n}\n': "unterminated block comment",
    }
    for text, expected in cases.items():
        m = parse_stir(text, "x.stir")
        assert any(expected in d.message and d.severity == "error" for d in m.diagnostics), \
            (text, m.diagnostics)


def test_text_between_functions_is_a_warning():
    m = parse_stir("junk line\n" + SAMPLE, "w.stir")
    (d,) = m.diagnostics
    assert d.severity == "warning" and d.line == 1 and "outside st.func" in d.message
    assert len(m.functions) == 2


def test_dispatcher_picks_stir_by_extension():
    assert parse(SAMPLE, "a.stir").kind == "stir"
    assert parse(SAMPLE, "a.txt", language="stir").kind == "stir"


def test_edit_reparses_only_the_changed_line():
    lines = [f'  v{i} = "st.v_add_f32"(v{i + 1}, v{i + 2})' for i in range(400)]
    text = "st.func @big() {\n^entry:\n" + "\n".join(lines) + "\n}\n"
    parse_stir(text, "big.stir")
    before = analyze_line.cache_info()
    edited = text.replace("v7 = ", "v700 = ", 1)
    m = parse_stir(edited, "big.stir")
    after = analyze_line.cache_info()
    assert after.misses - before.misses == 1
    assert m.functions[0].blocks[0].instrs[7].dsts[0].lo == 700


def test_cached_lines_give_fresh_objects():
    text = '"st.x"(v1) { mod.memtoken = { tokens = [0] } }\n'
    a = parse_stir(text, "a.stir").functions[0].blocks[0].instrs[0]
    b = parse_stir(text, "a.stir").functions[0].blocks[0].instrs[0]
    assert a is not b and a.mods["memtoken"] is not b.mods["memtoken"]
    a.mods["memtoken"].fields["tokens"].append(5)
    assert b.tokens == (0,)


def test_crlf_and_cr_line_endings():
    m = parse_stir(SAMPLE.replace("\n", "\r\n"), "crlf.stir")
    assert m.diagnostics == []
    assert m.functions[0].blocks[0].instrs[0].span.line == 4
    m = parse_stir(SAMPLE.replace("\n", "\r"), "cr.stir")
    assert m.diagnostics == [] and len(m.functions) == 2


def test_module_metadata_block_is_skipped():
    text = ('st.metadata "gir.frame_contract" {\ngir-frame-contract\ngen 0  ring=2 entry=0\n}\n\n'
            'st.func @f() {\n^entry:\n  "st.s_nop"(0)\n}\njunk\n')
    m = parse_stir(text, "meta.stir")
    assert [(d.line, d.message) for d in m.diagnostics] == [(10, "text outside st.func is ignored")]
    assert [i.mnemonic for i in m.functions[0].instructions()] == ["s_nop"]


def test_attribute_dictionaries_are_cached_apart_from_heads():
    """Two lines that differ only in registers share one parse of their attribute dictionary."""
    from stinkywait_core.syntax.stir_parser import _attributes

    tail = '{ mod.mfma = { reuseA = false, reuseB = true }, mod.zz_unique_kind = { q = 1 } }'
    parse_stir(f'a[0:7] = "st.v_wmma_f32_16x16x32_bf16"(v[0:7], v[8:15], a[0:7]) {tail}', "a.stir")
    before = _attributes.cache_info()
    m = parse_stir(f'a[8:15] = "st.v_wmma_f32_16x16x32_bf16"(v[16:23], v[8:15], a[8:15]) {tail}', "b.stir")
    after = _attributes.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)
    assert m.functions[0].blocks[0].instrs[0].mods["mfma"].fields == {"reuseA": False, "reuseB": True}


def test_attribute_errors_are_located_in_the_line():
    m = parse_stir('  v1 = "st.v_add_f32"(v2) { issueCycles = 1,, latencyCycles = 2 }', "e.stir")
    (d,) = m.diagnostics
    assert (d.line, d.col, d.message) == (1, 45, "unexpected ','; expected a name")
    m = parse_stir('  v1 = "st.v_add_f32"(v2 { issueCycles = 1 }', "e.stir")
    (d,) = m.diagnostics
    assert (d.col, d.message) == (26, "unexpected '{'")
    m = parse_stir('  "st.x"() { bogus = 1, mod.ds = 3 }', "e.stir")
    (d,) = m.diagnostics
    assert (d.col, d.end_col, d.message) == (25, 31, "mod.ds must be a dictionary { key = value, ... }")
    m = parse_stir('  "st.x"() { bogus = 1 }', "e.stir")
    (d,) = m.diagnostics
    assert (d.severity, d.col, d.end_col, d.message) == ("warning", 14, 19, "unknown attribute 'bogus' ignored")


def test_parse_restores_the_garbage_collector_state():
    import gc

    assert gc.isenabled()
    parse_stir(SAMPLE, "g.stir")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_stir(SAMPLE, "g.stir")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_error_messages_say_what_was_expected():
    cases = {
        'v1 = ': 'unexpected end of line; expected a quoted mnemonic such as "st.s_nop"',
        '"st.x"(v1) x': "unexpected 'x'; expected the end of the line",
        '"st.x"() { a 1 }': "unexpected '1'; expected '='",
        '"st.x"(v1,)': "unexpected ')'; expected an operand",
    }
    for text, message in cases.items():
        assert [d.message for d in parse_stir(text, "m.stir").diagnostics] == [message], text
