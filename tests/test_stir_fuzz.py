"""Property tests of the STIR front end: it never raises, and well-formed input round-trips."""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stinkywait_core.cli.opt import run as opt_run
from stinkywait_core.ir import Module
from stinkywait_core.syntax.stir_parser import parse_stir
from stinkywait_core.syntax.stir_printer import print_module_asm, print_module_stir

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance" / "upstream"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: characters that matter to the lexer, so random text hits the interesting paths often
STIR_ALPHABET = st.sampled_from(list('stfunc@(){}[]^:,="#/*\\ \t\n\r.-0x19vSCLDaemod_') + ["st.func @f() {\n",
                                 "^entry:\n", "Successors: ^entry\n", '"st.ds_load_b64"', "}\n", "/*", "*/"])


def check_module(m: Module, text: str) -> None:
    """Invariants every parse must satisfy, whatever the input."""
    assert isinstance(m, Module) and m.kind == "stir" and m.text == text
    n_lines = len(re.split(r"\r\n|\r|\n", text))  # LSP line breaks, as the parser counts them
    for d in m.diagnostics:
        assert d.severity in ("error", "warning")
        assert 1 <= d.line and d.col >= 1
        assert d.end_line is None or d.end_line >= d.line
    for f in m.functions:
        for b in f.blocks:
            assert all(s in f.blocks for s in b.succs)
            for i in b.instrs:
                assert i.span is not None and 1 <= i.span.line <= max(n_lines, 1)
                assert i.block is b
    # printing whatever parsed must not raise either
    print_module_stir(m)
    print_module_asm(m, preserve_comments=True)


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_unicode_never_raises(text: str):
    check_module(parse_stir(text, "fuzz.stir"), text)


@FUZZ
@given(st.lists(STIR_ALPHABET, max_size=200).map("".join))
def test_lexer_heavy_text_never_raises(text: str):
    check_module(parse_stir(text, "fuzz.stir"), text)


@FUZZ
@given(st.binary(max_size=300))
def test_binary_garbage_decoded_with_replace(data: bytes):
    text = data.decode("utf-8", errors="replace")
    check_module(parse_stir(text, "bin.stir"), text)
    # a control character that starts a line is never valid STIR: it must be diagnosed
    garbage = "\x01" + text
    m = parse_stir(garbage, "bin.stir")
    check_module(m, garbage)
    assert any(d.line == 1 and d.col == 1 for d in m.diagnostics)


def _corpus_lines() -> list[str]:
    if not CORPUS.is_dir():
        return ['  v[0:1] = "st.ds_load_b64"(v10) { mod.ds = { na = 1, offset = 0, gds = false } }']
    return [line for p in sorted(CORPUS.glob("*.stir")) for line in p.read_text().splitlines()
            if '"st.' in line and not line.lstrip().startswith("#")][:400]


CORPUS_LINES = _corpus_lines()


@FUZZ
@given(st.sampled_from(CORPUS_LINES), st.integers(0, 10_000), st.integers(0, 5),
       st.text(alphabet='(){}[],="-x0 ^:v', max_size=3))
def test_mutated_corpus_lines_are_located(line: str, pos: int, cut: int, insert: str):
    """Damage a real instruction: the damage is reported on its line, the rest still parses."""
    pos %= len(line) + 1
    broken = line[:pos] + insert + line[pos + cut:]
    text = f'st.func @f() {{\n^entry:\n{broken}\n  "st.s_nop"(0)\n}}\n'
    m = parse_stir(text, "mut.stir")
    check_module(m, text)
    for d in m.diagnostics:
        assert d.line == 3, d
        assert d.col <= len(broken) + 1
    assert m.functions[0].blocks[0].instrs[-1].mnemonic == "s_nop"


# --- well-formed programs round-trip ------------------------------------------------------------

REGS = st.one_of(
    st.builds(lambda k, n: f"{k}{n}", st.sampled_from(["v", "s", "a", "acc", "ttmp", "LDS"]), st.integers(0, 255)),
    st.builds(lambda k, lo, w: f"{k}[{lo}:{lo + w}]", st.sampled_from(["v", "s", "a"]), st.integers(0, 200),
              st.integers(1, 7)),
    st.sampled_from(["SCC0", "vcc", "vcc_lo", "exec_hi", "m0"]))
SRCS = st.one_of(REGS, st.integers(-2**31, 2**31).map(str), st.sampled_from(["0x1", "0xFF", "1.500000", "off"]),
                 st.sampled_from(['"loop"', '"exit"']))
MODS = st.sampled_from([
    "mod.ds = { na = 1, offset = 16, gds = false }", "mod.memtoken = { tokens = [0,2] }",
    "mod.swaitcnt = { vlcnt = -1, vscnt = -1, dlcnt = 3, dscnt = -1, kmcnt = -1 }",
    "mod.lds_ring = { accesses = [0,0,3,1,2], advances = [] }", "mod.mfma = { reuseA = true, reuseB = false }",
    "mod.loopcarriedraw = { tokens = [2], distance = 2 }", 'mod.wait_provenance = { text = "a; b" }'])
MNEMONICS = st.sampled_from(["ds_load_b64", "v_add_f32", "s_cmp_eq_u32", "tensor_load_to_lds", "s_wait_dscnt",
                             "buffer_load_b128", "v_wmma_f32_16x16x32_bf16", "s_barrier_signal"])


@st.composite
def instruction_lines(draw) -> str:
    dsts = draw(st.lists(REGS, max_size=2))
    srcs = draw(st.lists(SRCS, max_size=4))
    mods = draw(st.lists(MODS, max_size=3, unique=True))
    attrs = []
    if draw(st.booleans()):
        attrs.append(f"issueCycles = {draw(st.integers(1, 9))}, latencyCycles = {draw(st.integers(1, 200))}")
    attrs += mods
    head = ", ".join(dsts) + " = " if dsts else ""
    tail = " { " + ", ".join(attrs) + " }" if attrs else ""
    return f'  {head}"st.{draw(MNEMONICS)}"({", ".join(srcs)}){tail}'


@st.composite
def programs(draw) -> str:
    funcs = []
    for fi in range(draw(st.integers(1, 3))):
        n_blocks = draw(st.integers(1, 4))
        labels = [f"b{i}" for i in range(n_blocks)]
        body = []
        for label in labels:
            body.append(f"^{label}:")
            body += draw(st.lists(instruction_lines(), max_size=5))
            succs = draw(st.lists(st.sampled_from(labels), max_size=2, unique=True))
            if succs:
                body.append("  Successors: " + ", ".join(f"^{s}" for s in succs))
        funcs.append(f"st.func @fn{fi}() {{\n" + "\n".join(body) + "\n}\n")
    return "".join(funcs)


@FUZZ
@given(programs())
def test_generated_programs_parse_cleanly_and_print_to_a_fixed_point(text: str):
    m = parse_stir(text, "gen.stir")
    assert m.diagnostics == []
    printed = print_module_stir(m)
    again = parse_stir(printed, "printed.stir")
    assert again.diagnostics == []
    assert print_module_stir(again) == printed
    assert [[b.label for b in f.blocks] for f in again.functions] == [[b.label for b in f.blocks] for f in m.functions]
    assert [[[s.label for s in b.succs] for b in f.blocks] for f in again.functions] == \
        [[[s.label for s in b.succs] for b in f.blocks] for f in m.functions]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_cli_reports_instead_of_raising(tmp_path_factory, text: str):
    path = tmp_path_factory.mktemp("cli") / "in.stir"
    path.write_text(text, encoding="utf-8", errors="replace")
    out, err = io.StringIO(), io.StringIO()
    status = opt_run([str(path), "--StinkyBuildImplicitDependencyPass", "--StinkyWaitCntInsertionPass",
                      "--print-output"], out, err)
    assert status in (0, 1)
    if status == 1:
        assert f"{path}:" in err.getvalue() and ": error: " in err.getvalue()


def test_huge_line_and_deep_nesting_are_diagnosed():
    long_ops = ", ".join(f"v{i % 256}" for i in range(60_000))
    text = f'"st.x"({long_ops}) {{ mod.foo = {{ a = {"[" * 5000}1{"]" * 5000} }} }}'
    assert len(text) > 300_000
    m = parse_stir(text, "big.stir")
    assert [d.message for d in m.diagnostics] == ["brackets nested deeper than 64 levels"]
    m = parse_stir(f'"st.x"({long_ops})', "big.stir")
    assert m.diagnostics == [] and len(m.functions[0].blocks[0].instrs[0].srcs) == 60_000


def test_pathological_300k_lines_stay_linear():
    """Inputs that once made a regex backtrack quadratically (minutes) parse in well under a second
    each; the bound is loose because the test machine is shared."""
    import time

    cases = ['\\"' * 150_000, '"' + "a" * 300_000, '"a' * 150_000, "/*" * 150_000, "Successors: " + "^a," * 100_000,
             "^" + "x" * 300_000, "st.func @" + "x" * 300_000 + "() {", '"st.x"(' + "," * 300_000]
    for text in cases:
        t0 = time.process_time()
        m = parse_stir(text, "p.stir")
        assert time.process_time() - t0 < 5.0, text[:20]
        assert m.diagnostics and all(d.line == 1 for d in m.diagnostics)
