"""Waits land on the right line whatever characters the comments hold.

Both front ends end lines only at ``\\r\\n``, ``\\r`` and ``\\n``; `str.splitlines` also breaks
at form feeds, ``\\x0b``, ``\\x1c``-``\\x1e``, NEL and U+2028/9.  Placing waits with it shifted
every inserted wait after such a character by one line (found in review: a silent misplaced
wait).  Each case puts one of them in a comment near the top of a kernel and checks that the
waits are inserted exactly where they go without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stinkywait_core import api

REPO = Path(__file__).resolve().parents[1]
ODD_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
STIR = """st.func @breaks() {
^entry:
  v[0:3] = "st.buffer_load_b128"(v100, s[0:3], 0) { mod.mubuf = { offen = true, offset12 = 0 } }
  v10 = "st.v_add_f32"(v0, v1)
  Successors: ^exit
^exit:
}
"""


def _with_comment(text: str, after_line: int, comment: str) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:after_line] + [comment] + lines[after_line:])


@pytest.mark.parametrize("brk", ODD_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_asm_waits_ignore_odd_line_breaks(brk: str) -> None:
    text = (REPO / "examples" / "gemm_loop.s").read_text()
    plain = api.analyze(text, "k.s")
    assert plain.waits(), "the example must need waits, or this test proves nothing"
    odd = _with_comment(text, 3, f"// page{brk}break")
    got = api.analyze(odd, "k.s")
    assert [w.line for w in got.waits()] == [w.line + 1 for w in plain.waits()]
    assert got.inserted_text() == _with_comment(plain.inserted_text(), 3, f"// page{brk}break")


@pytest.mark.parametrize("brk", ["\x0c", "\u2028"], ids=lambda c: f"U+{ord(c):04X}")
def test_stir_waits_ignore_odd_line_breaks(brk: str) -> None:
    plain = api.analyze(STIR, "b.stir")
    assert plain.waits()
    odd = f"# page{brk}break\n" + STIR
    got = api.analyze(odd, "b.stir")
    assert got.inserted_text() == f"# page{brk}break\n" + plain.inserted_text()


def test_insert_command_keeps_the_odd_character_and_the_placement(tmp_path: Path) -> None:
    text = _with_comment((REPO / "examples" / "gemm_loop.s").read_text(), 3, "// page\x0cbreak")
    src = tmp_path / "k.s"
    src.write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "stinkywait_core.cli.main", "insert", str(src), "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    assert out == api.analyze(text, str(src)).inserted_text()
    assert "// page\x0cbreak\n" in out
