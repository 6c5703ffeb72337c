"""In-process checks of the pieces the protocol tests exercise only indirectly: position
conversion, insertion edits at the end of a file, settings validation, CLI entry points."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, strategies as st
from lsprotocol import types as T

from stinkywait_lsp.positions import LineMap, in_range, ranges_overlap, split_lines
from stinkywait_lsp.settings import Settings, section_of
from stinkywait_lsp.snapshot import apply_insertions

from .conftest import apply_text_edits


def test_columns_per_encoding():
    text = "a🚀b\nxyz"
    for enc, col in (("utf-16", 3), ("utf-8", 5), ("utf-32", 2)):
        assert LineMap.of(text, enc).position(1, 3) == T.Position(line=0, character=col)
    lm = LineMap.of(text, "utf-16")
    assert lm.line_end(1) == T.Position(line=0, character=4)
    assert lm.position(9, 1) == lm.end() == T.Position(line=1, character=3)
    assert lm.position(0, 5) == T.Position(line=0, character=0)


def test_lines_split_like_lsp():
    assert split_lines("a\r\nb\rc\nd\x0ce") == ["a", "b", "c", "d\x0ce"]
    assert split_lines("a\n") == ["a", ""]


def test_span_without_end_runs_to_line_end():
    lm = LineMap.of("  s_nop 0\n", "utf-16")
    assert lm.span(1, 3, None, None) == T.Range(start=T.Position(line=0, character=2),
                                                end=T.Position(line=0, character=9))
    assert lm.span(1, 3, 1, 3).end == T.Position(line=0, character=9)


@given(st.lists(st.text(alphabet="ab \t;", max_size=6), max_size=5), st.booleans(),
       st.lists(st.integers(min_value=1, max_value=8), max_size=4))
def test_insertions_apply_like_a_client(lines, final_newline, at):
    """Our verification replay and a client's edit application agree, for every insertion
    point including past the end of a file with or without a final newline."""
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    lm = LineMap.of(text, "utf-16")
    edits = [lm.insertion(n, f"\ts_wait_dscnt {i}\n") for i, n in enumerate(at)]
    assert apply_insertions(text, lm, edits) == apply_text_edits(text, edits)
    for e in edits:
        once = apply_text_edits(text, [e])
        assert "\ts_wait_dscnt" in once and once.count("\n") == text.count("\n") + 1


def test_range_helpers_are_closed_intervals():
    r = T.Range(start=T.Position(line=1, character=0), end=T.Position(line=2, character=4))
    assert in_range(T.Position(line=2, character=4), r) and not in_range(T.Position(line=2, character=5), r)
    cursor = T.Range(start=T.Position(line=2, character=4), end=T.Position(line=2, character=4))
    assert ranges_overlap(cursor, r)


def test_settings_validation():
    s, problems = Settings().merged({"numWaves": True, "optimize": False, "arch": "gfx1250", "other": 1})
    assert s.optimize is False and s.num_waves == 0 and len(problems) == 1
    s, problems = Settings().merged({"numWaves": -2})
    assert s == Settings() and problems
    assert Settings().merged("nonsense")[1]
    assert section_of({"stinkywait": {"numWaves": 2}}) == {"numWaves": 2}
    opts = Settings(num_waves=4, enable_loop_carried_token_deps=True, optimize=False).to_options()
    assert (opts.num_waves, opts.enable_loop_carried_token_deps, opts.optimize) == (4, True, False)
    assert Settings().to_json()["numWaves"] == 0


def test_coalesce_window_setting():
    s, problems = Settings().merged({"coalesceWindow": 0})
    assert not problems and s.to_options().coalesce_window == 0
    s, problems = Settings().merged({"coalesceWindow": -1})
    opts = s.to_options()
    assert not problems and opts.coalesce_for(True) == opts.COALESCE_WINDOW == 128 and opts.coalesce_for(False) == 0
    s, problems = Settings().merged({"coalesceWindow": -2})
    assert s == Settings() and problems == ["stinkywait.coalesceWindow: must be >= -1, got -2"]


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "stinkywait_lsp", "--version"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("stinkywait-lsp ")


def test_console_script_runs():
    import pytest
    from pathlib import Path
    script = Path(sys.executable).parent / "stinkywait-lsp"
    if not script.exists():
        pytest.skip("package not installed with its console scripts")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "stinkywait-lsp" in out.stdout


def test_relax_keeps_the_users_radix_and_spelling():
    from stinkywait_lsp.actions import relaxed_text, spelled_like
    assert spelled_like("0xa", 18) == "0x12" and spelled_like("0XA", 26) == "0X1A" and spelled_like("0x0", 4) == "0x4"
    assert spelled_like("0b1", 2) == "0b10" and spelled_like("7", 9) == "9"
    # a core that spells the count in decimal: the user's hex kept, the rest of the line too
    assert relaxed_text("s_wait_dscnt 0xa", "s_wait_dscnt 18", 18) == "s_wait_dscnt 0x12"
    assert relaxed_text("s_wait_dscnt 0xa // keep", "s_wait_dscnt 18", 18) == "s_wait_dscnt 0x12 // keep"
    # the core's own spelling whenever it already keeps the radix, or the user wrote decimal
    assert relaxed_text("s_wait_dscnt 0xa", "s_wait_dscnt 0x12", 18) == "s_wait_dscnt 0x12"
    assert relaxed_text("s_wait_dscnt  10", "s_wait_dscnt 18", 18) == "s_wait_dscnt 18"
    # combined waits (one immediate, several counts) and other mnemonics: never patched
    assert relaxed_text("s_wait_loadcnt_dscnt 0x0", "s_wait_loadcnt_dscnt 0x3", 3) == "s_wait_loadcnt_dscnt 0x3"
    assert relaxed_text("s_wait_loadcnt_dscnt 0x0", "s_wait_loadcnt_dscnt 259", 3) == "s_wait_loadcnt_dscnt 259"
    assert relaxed_text("s_waitcnt lgkmcnt(0)", "s_wait_dscnt 4", 4) == "s_wait_dscnt 4"


def test_text_of_a_range_in_client_units():
    lm = LineMap.of("a🚀b s_wait_dscnt 0xa\n", "utf-16")
    rng = T.Range(start=T.Position(line=0, character=5), end=T.Position(line=0, character=21))
    assert lm.text_of(rng) == "s_wait_dscnt 0xa"
    assert lm.text_of(T.Range(start=T.Position(line=0, character=0), end=T.Position(line=1, character=0))) == ""


def test_view_settings_nested_dotted_and_bad():
    s, problems = Settings().merged({"hints": {"label": "compact"}, "hints.position": "endOfPreviousLine",
                                     "severity": {"unproven": "information", "redundant": "off"}})
    assert not problems
    assert s.view.hint_label == "compact" and s.view.hint_position == "endOfPreviousLine"
    assert s.view.severities == {"missing": "error", "unproven": "info", "redundant": "off", "stricter": "hint"}
    same, problems = s.merged({"hints": {"label": "loud"}, "severity": {"missing": "fatal", "bogus": "hint"}})
    assert same == s and len(problems) == 3
    assert Settings().merged({"severity": "error"})[1]


def test_reason_rest_drops_the_restated_producer_of_a_folded_wait():
    from types import SimpleNamespace

    from stinkywait_lsp.explain import reason_rest
    folded = SimpleNamespace(reason="raw: ds_load_b128 (line 446) still in flight, countFrom 11 via ^k_1; "
                                    "waits here for v_wmma_f32 (line 460), so that one needs no wait of its own")
    assert reason_rest(folded) == "waits here for v_wmma_f32 (line 460), so that one needs no wait of its own"
    plain = SimpleNamespace(reason="raw: ds_load_b128 (line 446) still in flight, countFrom 11 via ^k_1")
    assert reason_rest(plain) == ""
