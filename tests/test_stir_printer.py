"""The STIR `--print-output` printer and the `--emit-asm` printer, byte for byte."""

from __future__ import annotations

from stinkywait_core.ir import Block, Function, Imm, Instruction, Modifier, Module, Reg, Str
from stinkywait_core.syntax.stir_parser import parse_stir
from stinkywait_core.syntax.stir_printer import (default_cycles, format_asm_instruction, format_instruction,
                                                 format_modifier, print_module_asm, print_module_stir,
                                                 wait_count, with_comment)


def one(text: str) -> Instruction:
    m = parse_stir(text, "t.stir")
    assert m.diagnostics == []
    return m.functions[0].blocks[0].instrs[0]


def test_ds_load_with_default_costs_matches_upstream_example():
    inst = one('v[0:1] = "st.ds_load_b64"(v10, LDS0) { mod.ds = { na = 1, offset = 0, gds = false }, '
               'mod.memtoken = { tokens = [0] } }')
    assert format_instruction(inst) == (
        'v[0:1] = "st.ds_load_b64"(v10, LDS0) { issueCycles = 1, latencyCycles = 52, '
        'mod.ds = { na = 1, offset = 0, gds = false }, mod.memtoken = { tokens = [0] } }')


def test_inserted_waits_print_like_upstream():
    """The shapes formats.md 6.2 documents, built the way the insertion pass builds them."""
    ds = Instruction("s_wait_dscnt", srcs=[Imm(2)], inserted=True, mods={"swaitcnt": Modifier(
        "swaitcnt", {"vlcnt": -1, "vscnt": -1, "dlcnt": 2, "dscnt": -1, "kmcnt": -1})})
    assert format_instruction(ds) == (
        '"st.s_wait_dscnt"(2) { issueCycles = 1, latencyCycles = 1, '
        'mod.swaitcnt = { vlcnt = -1, vscnt = -1, dlcnt = 2, dscnt = -1, kmcnt = -1 } }')
    tensor = Instruction("s_wait_tensorcnt", srcs=[Imm(1)], inserted=True, mods={
        "swaittensorcnt": Modifier("swaittensorcnt", {"tlcnt": 1}),
        "memtoken": Modifier("memtoken", {"tokens": [0, 1]}),
        "wait_provenance": Modifier("wait_provenance", {"text": 'drains "x" \\ y'})})
    assert format_instruction(tensor) == (
        '"st.s_wait_tensorcnt"(1) { issueCycles = 1, latencyCycles = 1, mod.swaittensorcnt = { tlcnt = 1 }, '
        'mod.memtoken = { tokens = [0,1] }, mod.wait_provenance = { text = "drains \\"x\\" \\\\ y" } }')
    asyn = Instruction("s_wait_asynccnt", srcs=[Imm(0)], mods={
        "swaitasynccnt": Modifier("swaitasynccnt", {"asynccnt": 0})})
    assert format_instruction(asyn).endswith("mod.swaitasynccnt = { asynccnt = 0 } }")


def test_partial_swaitcnt_prints_all_five_fields():
    inst = one('"st.s_wait_dscnt"(2) { mod.swaitcnt = { dlcnt = 2 } }')
    assert format_instruction(inst) == (
        '"st.s_wait_dscnt"(2) { issueCycles = 1, latencyCycles = 1, '
        'mod.swaitcnt = { vlcnt = -1, vscnt = -1, dlcnt = 2, dscnt = -1, kmcnt = -1 } }')


def test_fixed_field_orders_and_defaults():
    assert format_modifier(Modifier("ds", {"gds": True, "offset": 8})) == \
        "mod.ds = { na = 1, offset = 8, gds = true }"
    assert format_modifier(Modifier("ds", {"na": 2, "offset0": 1, "offset1": 3})) == \
        "mod.ds = { na = 2, offset = 0, offset0 = 1, offset1 = 3, gds = false }"
    assert format_modifier(Modifier("mubuf", {"offen": True, "offset12": 16, "th": "NT"})) == \
        ('mod.mubuf = { offen = true, offset12 = 16, glc = false, slc = false, nt = false, lds = false, '
         'th = "NT" }')
    assert format_modifier(Modifier("mfma", {"reuseB": True, "reuseA": False})) == \
        "mod.mfma = { reuseA = false, reuseB = true }"
    assert format_modifier(Modifier("lds_ring", {"accesses": [0, 0, 3, 2, 3], "advances": []})) == \
        "mod.lds_ring = { accesses = [0,0,3,2,3], advances = [] }"
    assert format_modifier(Modifier("loopcarriedwar", {"tokens": [0], "distance": 1})) == \
        "mod.loopcarriedwar = { tokens = [0], distance = 1 }"
    assert format_modifier(Modifier("waitcnt", {"vlcnt": 0})) is None


def test_unknown_modifier_kind_kept_in_ir_but_not_printed():
    inst = one('"st.s_wait_loadcnt"() { issueCycles = 1, latencyCycles = 1, mod.waitcnt = { vlcnt = 0 } }')
    assert inst.mods["waitcnt"].fields == {"vlcnt": 0}
    assert format_instruction(inst) == '"st.s_wait_loadcnt"() { issueCycles = 1, latencyCycles = 1 }'


def test_operand_spellings():
    inst = one('v1 = "st.x"(0x1F, -7, 1.5, "loop", hwreg(HW_REG_MODE, 0, 4), v 12, acc3, a[1:2], LDS2, SCC0)')
    assert format_instruction(inst) == (
        'v1 = "st.x"(0x1F, -7, 1.500000, loop, hwreg(HW_REG_MODE, 0, 4), v12, acc3, a[1:2], LDS2, SCC0) '
        '{ issueCycles = 1, latencyCycles = 1 }')


def test_explicit_costs_win():
    inst = one('v3 = "st.global_atomic_inc_u32"(v1, v2, s[14:15]) { issueCycles = 1, latencyCycles = 20 }')
    assert format_instruction(inst).endswith("{ issueCycles = 1, latencyCycles = 20 }")


def test_default_cost_table():
    assert default_cycles("s_wait_dscnt") == (1, 1)
    assert default_cycles("s_branch") == (1, 1)
    assert default_cycles("s_cmp_eq_u32") == (1, 2)
    assert default_cycles("s_xor_b32") == (1, 2)
    assert default_cycles("v_add_f32") == (1, 5)
    assert default_cycles("v_wmma_f32_16x16x32_bf16") == (1, 8)
    assert default_cycles("ds_load_b64") == (1, 52)
    assert default_cycles("ds_load_b128") == (1, 56)
    assert default_cycles("tensor_load_to_lds") == (1, 1)
    assert default_cycles("global_atomic_inc_u32") == (1, 1)
    assert default_cycles("buffer_load_b128")[0] == 12
    assert default_cycles("s_load_b64") == (1, 1)


def test_function_layout_labels_phis_and_unnamed_blocks():
    phi = Instruction("phi", dsts=[Reg("v", 0, 0)], is_phi=True)
    label = Instruction("L0", is_label=True)
    nop = Instruction("s_nop", srcs=[Imm(0)])
    a = Block("entry", instrs=[label, phi, nop], succ_labels=[""])
    b = Block("")
    fn = Function("f", blocks=[a, b])
    a.succ_labels = [""]
    fn.link()
    text = print_module_stir(Module("m", "stir", "", functions=[fn, Function("g", blocks=[Block("e")])]))
    assert text == ('st.func @f() {\n'
                    '  ^entry:\n'
                    '    "st.s_nop"(0) { issueCycles = 1, latencyCycles = 1 }\n'
                    '    Successors: ^bb1\n'
                    '  ^bb1:\n'
                    '}\n'
                    'st.func @g() {\n'
                    '  ^e:\n'
                    '}\n')


def test_asm_directive_round_trip():
    inst = one('"st.asm_directive"(".globl", "sym")')
    assert format_instruction(inst) == '"st.asm_directive"(".globl", "sym")'
    assert format_asm_instruction(inst) == ".globl sym"


def test_emit_asm_skips_pseudo_registers_and_prints_modifiers():
    text = ('st.func @f() {\n^entry:\n'
            '  v[0:1] = "st.ds_load_b64"(v10, LDS0) { mod.ds = { na = 1, offset = 16, gds = false } }\n'
            '  LDS1 = "st.ds_store_b64"(v1, v[2:3]) { mod.ds = { na = 2, offset0 = 1, offset1 = 2, gds = true } }\n'
            '  SCC0 = "st.s_cmp_eq_u32"(s60, 0x1)\n'
            '  "st.s_cbranch_scc1"("loop", SCC0)\n'
            '  a[10:17] = "st.v_wmma_f32_16x16x32_bf16"(v[20:27], v[30:37], a[10:17]) '
            '{ mod.mfma = { reuseA = true, reuseB = false } }\n'
            '  "st.s_wait_tensorcnt"() { mod.swaittensorcnt = { tlcnt = 1 } }\n'
            '  "st.s_wait_dscnt"(2)\n'
            '  done:\n'
            '}\n')
    m = parse_stir(text, "a.stir")
    assert m.diagnostics == []
    assert print_module_asm(m) == (
        "ds_load_b64 v[0:1], v10 offset:16\n"
        "ds_store_b64 v1, v[2:3] offset0:1 offset1:2 gds\n"
        "s_cmp_eq_u32 s60, 0x1\n"
        "s_cbranch_scc1 loop\n"
        "v_wmma_f32_16x16x32_bf16 a[10:17], v[20:27], v[30:37], a[10:17] matrix_a_reuse\n"
        "s_wait_tensorcnt 1\n"
        "s_wait_dscnt 2\n"
        "done:\n")


def test_preserved_comment_column():
    short = with_comment("s_wait_dscnt 2", "why")
    assert short.index("//") == 50 and short.endswith("// why")
    long_line = "x" * 60
    assert with_comment(long_line, "why") == long_line + " // why"
    wait = Instruction("s_wait_tensorcnt", srcs=[Imm(1)], comment="drains token LDS0 from ^entry")
    m = Module("m", "stir", "", functions=[Function("f", blocks=[Block("entry", instrs=[wait])])])
    assert print_module_asm(m, preserve_comments=True) == \
        "s_wait_tensorcnt 1" + " " * 32 + "// drains token LDS0 from ^entry\n"
    assert print_module_asm(m, preserve_comments=False) == "s_wait_tensorcnt 1\n"


def test_wait_count_prefers_literal_then_modifier():
    assert wait_count(one('"st.s_wait_dscnt"(3) { mod.swaitcnt = { dlcnt = 2 } }')) == 3
    assert wait_count(one('"st.s_wait_kmcnt"() { mod.swaitcnt = { kmcnt = 1 } }')) == 1
    assert wait_count(one('"st.s_wait_loadcnt"()')) is None
    assert wait_count(Instruction("s_wait_asynccnt", srcs=[Str("x")])) is None
