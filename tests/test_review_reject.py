"""A relaxation the review turns down without re-planning it really fails the re-plan
(stinkywait_core/review_reject.py; issue 21, the review tier within 200 ms).

Turning a "stricter than needed" candidate down can never offer an unsafe change, but it can
hide a good one.  Here every candidate the rejection turns down on real kernels nobody here
wrote is applied alone and the file is planned from scratch: it must need a wait the file
as written does not need (the re-plan the review skipped would have failed).  The small
kernels pin both directions: a relaxation a later read needs is turned down, one a later
hand-written wait covers is not.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stinkywait_core import review_reject
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from test_review_changes import _planned

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "asm"
AITER = ROOT / "tests" / "data" / "aiter_gfx1250"


def _kernels() -> list[Path]:
    out = sorted(ROOT.glob("examples/*.s"))
    if CORPUS.is_dir():
        out += sorted(CORPUS.glob("*.s")) + sorted((CORPUS / "llvm22-pairs").glob("*.llvm.s"))
    # an aiter code object with hand-tuned waits of its own (f4gemm's review alone takes 100 s
    # at load 5: left out)
    out += [AITER / "fmha_fwd_mxfp8__fmha_fwd_mxfp8_d128.s.gz"]
    return out


def _read(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", errors="replace")


def _rejected(monkeypatch, text: str, path: str) -> tuple[list[tuple[int, str]], list]:
    """(line, relaxed line text) of every candidate the review turned down, and its findings."""
    seen: list[tuple[int, str]] = []
    fails = review_reject.RelaxRejection.fails

    def spy(self, po, wait, counter, need):
        got = fails(self, po, wait, counter, need)
        if got:
            values = {cn: v for cn, v in po.df.target.decode_wait(wait).items() if v >= 0}
            seen.append((wait.span.line, "; ".join(po.df.target.encode_waits({**values, counter: need}))))
        return got

    monkeypatch.setattr(review_reject.RelaxRejection, "fails", spy)
    diags = analyze(text, path, Options()).check_diagnostics()
    return seen, diags


def _relaxed(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    body = lines[line - 1].rstrip("\r\n")
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    lines[line - 1] = indent + new + lines[line - 1][len(body):]
    return "".join(lines)


def _new_waits(text: str, edited: str, path: str) -> dict:
    base = _planned(text, path)
    return {k: v for k, v in _planned(edited, path).items() if k not in base or base[k] > v}


@pytest.mark.parametrize("path", [p for p in _kernels() if p.exists()], ids=lambda p: p.name)
def test_every_relaxation_turned_down_fails_its_replan(monkeypatch, path: Path):
    text = _read(path)
    seen, _ = _rejected(monkeypatch, text, str(path))
    for line, new in seen:
        assert _new_waits(text, _relaxed(text, line, new), str(path)), \
            f"{path.name}:{line}: '{new}' was turned down, yet the file re-planned with it needs nothing new"


_TARGET = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n'


def test_a_relaxation_a_later_read_needs_is_turned_down_without_a_replan(monkeypatch):
    # line 5 covers both loads; the stripped plan needs only dscnt 1 before line 6, but
    # line 7 reads v2 with nothing else waiting for it
    text = _TARGET + ("  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
                      "  v_add_f32 v3, v1, v1\n  v_add_f32 v4, v2, v2\n  s_endpgm\n")
    seen, diags = _rejected(monkeypatch, text, "k.s")
    assert seen == [(5, "s_wait_dscnt 1")]
    assert not [d for d in diags if d.code == "stricter-wait"]
    assert _new_waits(text, _relaxed(text, 5, "s_wait_dscnt 1"), "k.s")  # what the re-plan would find


def test_a_relaxation_a_later_wait_covers_is_still_tried_and_offered(monkeypatch):
    # the same, with the author's own wait before the second read: the relaxation is good
    text = _TARGET + ("  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
                      "  v_add_f32 v3, v1, v1\n  s_wait_dscnt 0x0\n  v_add_f32 v4, v2, v2\n  s_endpgm\n")
    seen, diags = _rejected(monkeypatch, text, "k.s")
    assert seen == []
    assert [(d.line, d.code) for d in diags] == [(5, "stricter-wait"), (7, "redundant-wait")]

