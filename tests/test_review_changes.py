"""Every change the review offers is safe alone (issue 12, "The review's relaxations are wrong").

The review (`Analysis.check_diagnostics`) calls a hand-written wait redundant or stricter than
needed; the editor offers to delete or relax it.  Here each offered change is applied alone to
the file, the file is planned from scratch, and no wait the original plan did not already
need may appear.  This re-applies the changes independently of how the review verified them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus" / "asm"


def _kernels() -> list[Path]:
    out = sorted(ROOT.glob("examples/*.s"))
    if SHARED.is_dir():
        out += sorted(p for p in SHARED.glob("*.s"))
        out += sorted((SHARED / "llvm22-pairs").glob("*.llvm.s"))
    return out


def _planned(text: str, path: str) -> dict[tuple[str, int, str, str], int]:
    out: dict[tuple[str, int, str, str], int] = {}
    for w in analyze(text, path, Options()).waits():
        key = (w.function, w.line, w.placement, w.counter)
        out[key] = min(out.get(key, w.count), w.count)
    return out


def _apply(text: str, diag) -> str:
    lines = text.splitlines(keepends=True)
    line = lines[diag.line - 1]
    body = line.rstrip("\r\n")
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    new = diag.data.get("instruction", "") if "replace_line" in diag.data else ""
    lines[diag.line - 1] = indent + new + line[len(body):]
    return "".join(lines)


@pytest.mark.parametrize("path", _kernels(), ids=lambda p: p.name)
def test_each_offered_change_alone_needs_no_new_wait(path: Path):
    text = path.read_text(encoding="utf-8", errors="replace")
    an = analyze(text, str(path), Options())
    offered = [d for d in an.check_diagnostics() if d.code in ("redundant-wait", "stricter-wait")]
    base = _planned(text, str(path))
    for d in offered:
        changed = _planned(_apply(text, d), str(path))
        new = {k: v for k, v in changed.items() if k not in base or base[k] > v}
        assert not new, f"{path.name}:{d.line}: applying '{d.message}' needs new waits {new}"


def test_review_offers_a_real_redundant_wait_and_a_real_relaxation(tmp_path):
    """The review does find something on a small kernel (so the test above cannot pass by
    never offering anything)."""
    text = ('.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n'
            "  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
            "  v_add_f32 v3, v1, v1\n  s_wait_dscnt 0x0\n  v_add_f32 v4, v2, v2\n  s_endpgm\n")
    diags = analyze(text, "k.s", Options()).check_diagnostics()
    # each change is safe alone (both together would leave v2 unprotected: the review checks
    # them one by one once the group fails)
    assert [(d.line, d.code) for d in diags] == [(5, "stricter-wait"), (7, "redundant-wait")]
    assert diags[0].data["instruction"] == "s_wait_dscnt 0x1"  # the user's radix kept
