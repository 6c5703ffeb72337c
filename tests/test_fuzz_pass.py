"""Fuzzing: the front ends, the pass and the exact checker never raise, whatever the input.

Three input families, all through the public entry point `api.analyze` (which every CLI and
the language server use) and through `run_insertion` + `check_function` directly:

* generated programs (tests/proggen.py) damaged by random line edits, so the text is *almost*
  valid STIR: dangling successors, instructions outside blocks, unbalanced braces;
* instruction soup: random lines built from real gfx1250 mnemonics and odd operand forms
  (huge, negative and missing wait immediates, empty or string token lists, barriers without
  ids, registers beyond the file, unknown labels, self loops);
* damaged assembly: the demo kernel with random line edits.
Every combination of the pass options is drawn as well, except ``bounded=False``: the exact
(unwidened) iteration is documented as possibly slow, and fuzzing found a three-instruction,
two-block program on which it grows past 1.5 GB within 15 s (reported to the pass owner), which
would take the test process down instead of failing it.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from proggen import GenParams, programs
from stinkywait_core.analysis.implicit_deps import build_implicit_dependencies
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.validate.exhaustive import check_function, format_result
from stinkywait_core.waitcnt.pipeline import run_insertion

FUZZ = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gemm_loop.s"

options = st.builds(Options, num_waves=st.sampled_from([0, 1, 2, 8]),
                    enable_loop_carried_token_deps=st.booleans(),
                    enable_tensor_descriptor_war=st.booleans(), optimize=st.booleans(),
                    replace_waits=st.booleans(),
                    count_from_instance=st.sampled_from(["newest", "oldest"]))


@st.composite
def damaged(draw, text: str) -> str:
    """`text` with a few random line edits (delete, duplicate, swap, truncate, splice)."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "dup", "swap", "truncate", "splice"]))
        if op == "delete":
            del lines[i]
        elif op == "dup":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        else:
            lines[i] = lines[i] + draw(st.sampled_from(["}", "{", "^x:", " Successors: ^nowhere", ",",
                                                        " { mod.memtoken = { tokens = [] } }", "(", "\""]))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


MNEMONICS = ["ds_load_b32", "ds_load_b128", "ds_store_b64", "ds_add_u32", "ds_bpermute_b32",
             "global_load_b32", "buffer_load_b128", "global_atomic_add_u32", "s_load_b64",
             "s_buffer_load_b32", "tensor_load_to_lds", "global_store_async_from_lds_b64",
             "global_load_async_to_lds_b128", "s_barrier", "s_barrier_signal", "s_barrier_wait",
             "s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt", "s_wait_asynccnt",
             "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_waitcnt", "s_wait_xcnt",
             "v_add_f32", "v_wmma_f32_16x16x32_bf16", "s_cbranch_scc1", "s_branch", "s_endpgm",
             "s_and_saveexec_b64", "buffer_store_b32"]
OPERANDS = ["v0", "v[0:3]", "v[250:255]", "s[0:3]", "s5", "a[0:7]", "SCC0", "LDS0", "vcc", "exec_lo",
            "0", "-1", "-3", "63", "64", "65535", "-70000", "0x203", "1.5", '"loop"', '"nowhere"', "off"]
MODS = ["", " { mod.memtoken = { tokens = [0] } }", " { mod.memtoken = { tokens = [1,2] } }",
        " { mod.memtoken = { tokens = [] } }", ' { mod.memtoken = { tokens = ["x"] } }',
        " { mod.memtoken = { tokens = 3 } }", " { mod.swaitcnt = { dlcnt = 2 } }",
        " { mod.swaittensorcnt = { tlcnt = -5 } }"]


@st.composite
def soup(draw) -> str:
    """A syntactically plausible function of random instructions and successor edges."""
    n_blocks = draw(st.integers(1, 5))
    labels = [f"b{i}" for i in range(n_blocks)]
    out = ["st.func @soup() {"]
    for lab in labels:
        out.append(f"^{lab}:")
        for _ in range(draw(st.integers(0, 6))):
            dsts = draw(st.lists(st.sampled_from(OPERANDS[:9]), max_size=2))
            srcs = draw(st.lists(st.sampled_from(OPERANDS), max_size=3))
            lhs = ", ".join(dsts) + " = " if dsts else ""
            out.append(f'  {lhs}"st.{draw(st.sampled_from(MNEMONICS))}"({", ".join(srcs)})'
                       f"{draw(st.sampled_from(MODS))}")
        succs = draw(st.lists(st.sampled_from(labels + ["ghost"]), max_size=3))
        if succs:
            out.append("  Successors: " + ", ".join(f"^{s}" for s in succs))
    out.append("}")
    return "\n".join(out) + "\n"


def _exercise(text: str, path: str, opts: Options) -> None:
    """analyze + direct pass + checker on every function: none of them may raise."""
    note(text)
    an = analyze(text, path, opts)
    an.inserted_text()
    an.to_json()
    module = parse(text, path)
    for func in module.functions:
        build_implicit_dependencies(func)
        run_insertion(func, opts)
        res = check_function(func, opts, max_trips=2, max_paths=500)
        format_result(res, path)


@FUZZ
@given(programs(GenParams(max_depth=2)).flatmap(lambda p: damaged(p.to_stir())), options)
def test_damaged_generated_stir_never_raises(text: str, opts: Options):
    _exercise(text, "fuzz.stir", opts)


@FUZZ
@given(soup(), options)
def test_instruction_soup_never_raises(text: str, opts: Options):
    _exercise(text, "soup.stir", opts)


@FUZZ
@given(damaged(EXAMPLE.read_text()), options)
def test_damaged_asm_never_raises(text: str, opts: Options):
    _exercise(text, "fuzz.s", opts)


@FUZZ
@given(st.text(max_size=300), options)
def test_arbitrary_text_never_raises(text: str, opts: Options):
    _exercise(text, "any.stir", opts)
    _exercise(text, "any.s", opts)
