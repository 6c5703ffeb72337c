"""FIFO snapshots are made only where asked for (issue 21: no snapshots nobody asked for).

finalize used to keep the FIFO state before every instruction of every function (and the
incremental memo a second reference to each): most of the memory of a kernel with deep
queues.  Now an analysis holds none until a line's FIFO view (hover, plan view) or the
review asks, and then only the blocks asked about are replayed.  What they hold must equal
the states finalize walked through: compared here with every block replayed, and with the
analysis of the same text made from scratch and through the incremental cache after edits.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options

ROOT = Path(__file__).resolve().parents[1]
KERNELS = [ROOT / "examples" / "gemm_loop.s", ROOT / "tests" / "lsp" / "data" / "checked.s",
           ROOT / "tests" / "data" / "aiter_gfx1250" / "fmha_fwd_mxfp8__fmha_fwd_mxfp8_d128.s.gz"]


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _fifo(an) -> list:
    return [(fr.name, line, repr(fr.fifo[line])) for fr in an.functions for line in fr.fifo.keys()]


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
@pytest.mark.parametrize("replace", [False, True], ids=["as-written", "replace-waits"])
def test_snapshots_are_made_per_block_when_asked(path: Path, replace: bool):
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = _text(path)
    options = Options(replace_waits=replace)
    cache = AnalysisCache()
    an = analyze(text, str(path), options, cache=cache)
    dfs = [po.df for po in an.outputs]
    assert all(df._snapshots is None and not df._snap_blocks for df in dfs), "snapshots made unasked"
    # one line's view replays one block
    fr = next(fr for fr in an.functions if len(fr.fifo))
    df = next(po.df for po in an.outputs if po.func.name == fr.name)
    fr.fifo[fr.fifo.keys()[len(fr.fifo) // 2]]
    assert len(df._snap_blocks) == 1 and df._snapshots is None
    # every block replayed on its own equals the whole-function replay
    per_block = {inst: df.snapshot_at(inst) for inst in list(df.snapshot_lines().values())}
    whole = df.snapshots
    assert per_block and all(whole[inst] == snap for inst, snap in per_block.items())
    lazy = _fifo(an)
    # the same text from scratch, and through the cache after an edit and its undo
    assert lazy == _fifo(analyze(text, str(path), options))
    lines = text.split("\n")
    k = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("\tv_"))
    edited = "\n".join(lines[:k] + ["\tv_nop"] + lines[k:])
    analyze(edited, str(path), options, cache=cache)
    assert _fifo(analyze(text, str(path), options, cache=cache)) == lazy
