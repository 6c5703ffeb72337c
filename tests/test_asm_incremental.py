"""Incremental asm re-parse (`parse(text, path, previous=module)`): a fresh parse's result,
with the instructions of unchanged lines kept.

Random edit sequences on the corpus kernels (replace, insert or delete a line, edit inside a
comment, break a label, plus edits that must fall back: `.set` values, an opened `/*`) are
re-parsed from the previous version and compared with a fresh parse of the same text: the
printed output (STIR and asm printers), every span, the line table, the CFG and the
diagnostics must be equal, every instruction on a line outside the edited region must be the
previous version's object, and the previous module must be left as it was (but for those
instructions' spans and blocks).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stinkywait_core.syntax import parse
from stinkywait_core.syntax.asm_parser import split_lines
from stinkywait_core.syntax.stir_printer import print_module_asm, print_module_stir

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "asm"
KERNELS = ([CORPUS / "aiter_gfx1250_mxscale_gemm1_final_isa.s", CORPUS / "aiter_gfx1250_mxscale_gemm2_final_isa.s",
            CORPUS / "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s"] if CORPUS.is_dir() else [])
KERNELS += [ROOT / "examples" / "gemm_loop.s"]

SMALL = """\t.text
\t.set base, 4
\t.globl\tk
\t.type\tk,@function
k:
\ts_load_b64 s[base:base+1], s[0:1], 0x0   // kernel arguments
\tv_mov_b32 v0, 0
.LBB0_1:
\tds_load_b64 v[0:1], v100 offset:8 // st.token:0
\t/* a note */ v_add_f32_e32 v2, v0, v1
\ts_cmp_lt_u32 s10, 4
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
"""


def structure(m) -> list:
    """Everything a fresh parse determines, as comparable data (instructions by content)."""
    out: list = [print_module_stir(m), print_module_asm(m, preserve_comments=True)]
    for ln in m.lines:
        out.append((ln.kind, ln.span, ln.text, ln.label, ln.directive, ln.indent, ln.comment, ln.label_span,
                    None if ln.instruction is None else ln.instruction.span))
    for f in m.functions:
        out.append((f.name, f.span, f.name_span))
        for b in f.blocks:
            out.append((b.label, b.succ_labels, b.span, b.index, [s.label for s in b.succs], [p.label for p in b.preds]))
            for i in b.instrs:
                assert i.block is b
                out.append((i.mnemonic, i.dsts, i.srcs, {k: (v.kind, v.fields) for k, v in i.mods.items()}, i.span,
                            i.text, i.comment, i.suffix, i.is_label))
    out.extend((d.severity, d.code, d.message, d.line, d.col, d.end_line, d.end_col, d.function)
               for d in m.diagnostics)
    return out


def instructions_by_line(m) -> dict[tuple[int, bool], object]:
    """(line, is LABEL) -> instruction object."""
    return {(i.span.line, i.is_label): i for f in m.functions for i in f.instructions()}


def frozen_view(m) -> list:
    """The previous module as the re-parse must leave it: all but its instructions' spans."""
    out: list = [(ln.kind, ln.span, ln.text, id(ln.instruction)) for ln in m.lines]
    for f in m.functions:
        out.append((id(f), f.name, f.span, f.name_span))
        for b in f.blocks:
            out.append((id(b), b.label, b.span, b.succ_labels, [id(s) for s in b.succs], [id(i) for i in b.instrs]))
    out.extend((d.code, d.line, d.message) for d in m.diagnostics)
    return out


def edit(lines: list[str], rng: random.Random, pool: list[str]) -> tuple[list[str], str]:
    """One random edit of the line list."""
    lines = list(lines)
    i = rng.randrange(len(lines)) if lines else 0
    kind = rng.choice(["replace", "replace", "insert", "insert", "delete", "comment", "label", "set", "open", "same"])
    if kind == "replace" and lines:
        lines[i] = rng.choice(pool)
    elif kind == "insert":
        lines.insert(i, rng.choice(pool))
    elif kind == "delete" and lines:
        del lines[i]
    elif kind == "comment" and lines:
        text = lines[i]
        lines[i] = text.replace("//", "// edited", 1) if "//" in text else text + "  // note " + str(rng.random())
    elif kind == "label":
        labels = [k for k, t in enumerate(lines) if t.rstrip().endswith(":")]
        if labels:
            k = rng.choice(labels)
            lines[k] = lines[k].rstrip()[:-1]
    elif kind == "set":
        lines.insert(i, f"\t.set base, {rng.randint(0, 8)}")
    elif kind == "open" and lines:
        lines[i] = lines[i] + " /* open" if rng.random() < 0.5 else lines[i].replace("/*", "", 1)
    return lines, kind


def check_step(prev, text: str, path: str):
    new = parse(text, path, previous=prev)
    before = frozen_view(prev)
    fresh = parse(text, path)
    assert structure(new) == structure(fresh)
    assert frozen_view(prev) == before
    return (new,) + unchanged_ends(split_lines(prev.text), split_lines(text))


def unchanged_ends(old_lines: list[str], new_lines: list[str]) -> tuple[int, int]:
    """Lengths of the common prefix and suffix (the unchanged lines), counted naively."""
    p = 0
    while p < min(len(old_lines), len(new_lines)) and old_lines[p] == new_lines[p]:
        p += 1
    q = 0
    while q < min(len(old_lines), len(new_lines)) - p and old_lines[-1 - q] == new_lines[-1 - q]:
        q += 1
    return p, q


@pytest.mark.parametrize("path", KERNELS + ["small"], ids=lambda p: getattr(p, "name", p))
@pytest.mark.parametrize("seed", range(3))
def test_random_edit_sequences_match_a_fresh_parse(path, seed):
    rng = random.Random(seed)
    text = SMALL if path == "small" else path.read_text()
    name = "k.s" if path == "small" else str(path)
    lines = text.split("\n")
    pool = [ln for ln in lines if ln.strip()] + ["\ts_nop 0", "\tv_mov_b32 v1, v2 /*v300*/", ".Lnew:", "\ts_endpgm",
                                                 "\ts_branch .LBB0_1", "// comment", "", "\ts_mov_b32 s0, (1"]
    prev = parse(text, name)
    for _ in range(12 if path == "small" else 6):
        old_insts = instructions_by_line(prev)
        old_lines = split_lines(prev.text)
        lines, _ = edit(lines, rng, pool)
        text = "\n".join(lines)
        new, p, q = check_step(prev, text, name)
        new_lines = split_lines(text)
        delta = len(new_lines) - len(old_lines)
        for (line, is_label), inst in instructions_by_line(new).items():
            old_line = line if line <= p else line - delta if line > len(new_lines) - q else None
            old = old_insts.get((old_line, is_label))
            if old is not None and same_content(old, inst):
                assert old is inst, (line, inst)
        prev = new


def same_content(a, b) -> bool:
    """What a fresh parse puts into an instruction, but its position."""
    return (a.mnemonic, a.dsts, a.srcs, a.mods, a.text, a.comment, a.suffix, a.is_label, a.span.col) == \
        (b.mnemonic, b.dsts, b.srcs, b.mods, b.text, b.comment, b.suffix, b.is_label, b.span.col)


def test_one_line_edit_keeps_every_other_instruction():
    text = SMALL
    m1 = parse(text, "k.s")
    old = instructions_by_line(m1)
    m2 = parse(text.replace("v2, v0, v1", "v3, v0, v1"), "k.s", previous=m1)
    new = instructions_by_line(m2)
    assert {k for k in new if new[k] is not old.get(k)} == {(10, False)}
    # an inserted line moves the instructions after it, same objects, spans updated
    m3 = parse(m2.text.replace("\tv_mov_b32 v0, 0\n", "\tv_mov_b32 v0, 0\n\ts_nop 0\n"), "k.s", previous=m2)
    moved = instructions_by_line(m3)
    assert moved[(11, False)] is new[(10, False)] and moved[(11, False)].span.line == 11
    assert (8, True) not in moved and moved[(9, True)] is new[(8, True)]  # the label moved down
    assert structure(m3) == structure(parse(m3.text, "k.s"))


def test_previous_used_twice_gives_a_fresh_parse():
    m1 = parse(SMALL, "k.s")
    parse(SMALL + "\ts_nop 1\n", "k.s", previous=m1)
    again = parse(SMALL.replace("s_endpgm", "s_endpgm  // x"), "k.s", previous=m1)
    assert structure(again) == structure(parse(again.text, "k.s"))
    assert not set(map(id, instructions_by_line(again).values())) & set(map(id, instructions_by_line(m1).values()))


def test_fallbacks_stay_exact():
    m1 = parse(SMALL, "k.s")
    for edited in (SMALL.replace(".set base, 4", ".set base, 6"),          # symbol table changes
                   SMALL.replace("/* a note */", "/* a note"),              # comment state changes
                   SMALL.replace(".LBB0_1:", ".LBB0_1"),                    # a broken label
                   SMALL.replace("\ts_endpgm\n", "")):                      # a block end goes
        m2 = parse(edited, "k.s", previous=parse(SMALL, "k.s"))
        assert structure(m2) == structure(parse(edited, "k.s"))
    assert structure(parse(SMALL, "other.s", previous=m1)) == structure(parse(SMALL, "other.s"))


# --- the STIR front end keeps unchanged instructions too ---------------------------------------

STIR_FILES = sorted((ROOT.parent / "shared" / "conformance" / "upstream").glob("*.stir"))[:12]


def stir_structure(m) -> list:
    out: list = [print_module_stir(m)]
    for f in m.functions:
        out.append((f.name, f.span, f.name_span))
        for b in f.blocks:
            out.append((b.label, b.succ_labels, b.span, b.succ_span, [s.label for s in b.succs]))
            for i in b.instrs:
                assert i.block is b
                out.append((i.mnemonic, i.dsts, i.srcs, i.span, i.text, i.is_label))
    out.extend((d.severity, d.code, d.message, d.line, d.col, d.end_line, d.end_col) for d in m.diagnostics)
    return out


@pytest.mark.skipif(not STIR_FILES, reason="shared conformance corpus not available")
@pytest.mark.parametrize("seed", range(3))
def test_stir_edit_sequences_match_a_fresh_parse(seed):
    rng = random.Random(seed)
    for path in STIR_FILES:
        lines = path.read_text().split("\n")
        pool = [ln for ln in lines if ln.strip()] + ["  s_nop 0", "^extra:", "}", "  // note"]
        prev = parse("\n".join(lines), str(path))
        for _ in range(5):
            old = {(i.span.line, i.text): i for f in prev.functions for i in f.instructions()}
            old_lines = prev.text.split("\n")
            lines, _ = edit(lines, rng, pool)
            text = "\n".join(lines)
            new = parse(text, str(path), previous=prev)
            assert stir_structure(new) == stir_structure(parse(text, str(path)))
            p, q = unchanged_ends(old_lines, lines)
            delta = len(lines) - len(old_lines)
            for f in new.functions:
                for i in f.instructions():
                    line = i.span.line
                    was = line if line <= p else line - delta if line > len(lines) - q else None
                    if was is not None and (was, i.text) in old and not i.is_phi:
                        before = old[(was, i.text)]
                        if (before.mnemonic, before.dsts, before.srcs) == (i.mnemonic, i.dsts, i.srcs):
                            assert before is i
            prev = new


def test_a_file_with_duplicate_labels_is_spliced_and_its_errors_move():
    """A kernel pasted twice (the same labels twice: an error each) is still spliced after a
    plain-line edit, and the duplicate-label errors, which name the first definition's line,
    name it where it is now (the edit above both definitions, or between them)."""
    twice = SMALL + SMALL
    m1 = parse(twice, "k.s")
    assert [d for d in m1.diagnostics if d.code == "asm-duplicate-label"]
    nops = "\ts_nop 0\n\ts_nop 1\n\tv_mov_b32 v0, 0\n"
    for edited in (twice.replace("\tv_mov_b32 v0, 0\n", nops, 1),
                   SMALL.replace("\ts_cmp_lt_u32 s10, 4\n", "") + SMALL,
                   SMALL + SMALL.replace("\tv_mov_b32 v0, 0\n", nops)):
        m2 = parse(edited, "k.s", previous=parse(twice, "k.s"))
        assert m2.front_end_state.spliced is not None, "not spliced: the test would not see a stale message"
        fresh = parse(edited, "k.s")
        assert structure(m2) == structure(fresh)
        moved = [d.message for d in fresh.diagnostics if d.code == "asm-duplicate-label"]
        assert (moved == [d.message for d in m1.diagnostics if d.code == "asm-duplicate-label"]) == \
            edited.startswith(SMALL), "an edit above the first definitions moves the lines they name"
