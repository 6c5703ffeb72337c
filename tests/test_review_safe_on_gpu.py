"""Every delete or relax the review offers is safe on the GPU (issue 19, item 5).

The review's "redundant" and "stricter than needed" findings used to be judged against the
pass's plan alone, and that plan holds waits the source does not (the pass's own fallbacks
for LDS accesses, tensor fills and barriers it cannot prove safe): on aiter's gfx1250 f4gemm
12 of 39 offered deletes created stale reads.  Here each offered change is applied *alone*
to real kernels nobody here wrote, and the hardware checker (validate/hwcheck.py, with the
LDS address analysis: `check --exhaustive`'s engine) runs on the edited file.  The edited
file may have no violation, proven or not, that the file as written does not have (nor a
stricter need for one it has), and the checker must finish.  The comparison is written here
again, apart from the review's own proof (stinkywait_core/review_proof.py).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.review_proof import Change, proven_safe
from stinkywait_core.syntax import parse
from stinkywait_core.textlines import physical_lines
from stinkywait_core.validate.hwcheck import check_module
from test_review_changes import _apply

ROOT = Path(__file__).resolve().parents[1]
AITER = ROOT / "tests" / "data" / "aiter_gfx1250"
CORPUS = ROOT.parent / "shared" / "corpus" / "asm"
OFFERED = ("redundant-wait", "stricter-wait")


def _kernels() -> list[Path]:
    # one f4gemm of the four (the others are the same kernel with other scale formats), the
    # aiter code objects but fmha_fwd_bf16 (one checker run there takes 25 s), the shared
    # corpus when present
    out = [AITER / "f4gemm_mxfp4_256x256_apre0.s.gz"]
    out += sorted(p for p in AITER.glob("*.s.gz") if not p.name.startswith(("f4gemm", "fmha_fwd_bf16")))
    if CORPUS.is_dir():
        out += sorted(CORPUS.glob("*.s"))
    return out


def _read(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", errors="replace")


def _hw(text: str, path: str, options: Options) -> tuple[dict, bool]:
    found: dict = {}
    finished = True
    for res in check_module(parse(text, path, "asm"), options, lds_addresses=True):
        finished = finished and not res.bounded and not res.trip_cut
        for v in res.violations:
            key = (res.function, v.consumer.span.line, v.producer.span.line, v.rule)
            found[key] = (dict(v.needs), v.proven)
    return found, finished


def _broken(base: dict, edited: dict) -> list:
    out = []
    for key, (needs, proven) in edited.items():
        had = base.get(key)
        if had is None or (proven and not had[1]) or any(cn not in had[0] or had[0][cn] > n
                                                        for cn, n in needs.items()):
            out.append((key, needs, proven))
    return out


@pytest.mark.parametrize("path", _kernels(), ids=lambda p: p.name)
def test_each_offered_change_alone_is_safe_by_the_hardware_checker(path: Path):
    if not path.is_file():
        pytest.skip(f"{path} not present")
    text = _read(path)
    an = analyze(text, str(path), Options())
    offered = [d for d in an.check_diagnostics() if d.code in OFFERED]
    if path.name.startswith("f4gemm"):
        # the review does offer changes here (the test cannot pass by offering none)
        assert offered
    if not offered:
        return
    base, base_finished = _hw(text, str(path), an.options)
    for d in offered:
        edited, finished = _hw(_apply(text, d), str(path), an.options)
        # a search of the file as written that did not finish can still back an offer: a
        # wait its block shows idle (validate/hwidle.py) changes no state of any path, so
        # the edited file's search is the same search, cut where it was cut
        assert finished or not base_finished, f"{path.name}:{d.line}: the checker did not finish after '{d.message}'"
        broken = _broken(base, edited)
        assert not broken, f"{path.name}:{d.line}: '{d.message}' breaks {broken[:3]}"


BARRIER = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
k:
  ds_load_b32 v1, v0
  ds_load_b32 v2, v0 offset:4
  s_wait_dscnt 0x1
  s_barrier_signal -1
  s_barrier_wait -1
  v_add_f32 v3, v1, v1
  s_wait_dscnt 0x0
  v_add_f32 v4, v2, v2
  s_wait_dscnt 0x0
  s_endpgm
"""


def _change(an, lines: list[str], line: int, new: str, code: str = "redundant-wait") -> Change:
    from stinkywait_core.diagnostics import WARNING, Diagnostic
    body = lines[line - 1].rstrip("\r\n")
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    d = Diagnostic(WARNING, code, "offered", line, len(indent) + 1, line, len(body) + 1, [], {}, "k")
    return Change(d, line, indent + new + lines[line - 1][len(body):], "k")


def test_the_proof_keeps_a_safe_delete_and_drops_one_that_unblocks_a_stale_read():
    """The wait at line 9 is the only thing between v2's load and its read (the plan's own
    fallback wait before the barrier, which the source lacks, would hide that); the one at
    line 11 waits for nothing.  Tried together, alone, and in either order."""
    an = analyze(BARRIER, "k.s", Options())
    lines = physical_lines(BARRIER, keepends=True)
    unsafe = _change(an, lines, 9, "")
    safe = _change(an, lines, 11, "")
    relax = _change(an, lines, 9, "s_wait_dscnt 0x1", "stricter-wait")
    assert proven_safe(an, lines, [unsafe, safe]) == [safe]
    assert proven_safe(an, lines, [safe, unsafe]) == [safe]
    assert proven_safe(an, lines, [unsafe]) == []
    assert proven_safe(an, lines, [relax]) == []  # v2 is the youngest: a count of 1 leaves it in flight
    assert proven_safe(an, lines, [safe]) == [safe]


def _search(text: str, arch: str = "gfx1250"):
    from stinkywait_core.targets import get_target
    from stinkywait_core.validate.hwcheck import check_function
    func = parse(text, "k.s", "asm").functions[0]
    return func, get_target(arch, "hw"), check_function(func, Options(arch=arch), watch_waits=True)


def test_a_wait_that_retires_on_one_path_only_is_not_idle():
    """`HwResult.retiring`: the wait after the join retires the load on the path through it;
    the one after the drain retires nothing on either path."""
    from stinkywait_core.review_proof import _idle_waits
    text = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
k:
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lskip
  ds_load_b32 v1, v0
.Lskip:
  s_wait_dscnt 0x0
  s_wait_dscnt 0x0
  v_add_f32 v3, v1, v1
  s_endpgm
"""
    func, target, res = _search(text)
    assert not res.bounded and not res.trip_cut
    assert {i.span.line for i in res.retiring} == {7}
    assert _idle_waits(func, target, res.retiring) == {8}


def test_a_wait_whose_removal_changes_the_facts_before_it_is_not_idle():
    """An `s_set_vgpr_msb` drains the VMEM timelines unless a VMEM op follows it (it then opens
    that op's replay group: `Target.drain_before`): deleting the wait between them would
    change that fact, so the idle wait there still gets a checker run of its own."""
    from stinkywait_core.review_proof import _idle_waits
    text = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250:xnack+"
k:
  s_set_vgpr_msb 0x41
  s_wait_dscnt 0x0
  global_load_b32 v1, v[2:3], off
  s_wait_dscnt 0x0
  s_wait_loadcnt 0x0
  s_endpgm
"""
    func, target, res = _search(text, "gfx1250:xnack+")
    msb = func.blocks[0].instrs[0] if not func.blocks[0].instrs[0].is_label else func.blocks[0].instrs[1]
    assert msb.mnemonic == "s_set_vgpr_msb" and target.drains_by_context(msb)
    assert not res.bounded and not res.trip_cut
    assert {i.span.line for i in res.retiring} == {7}
    assert _idle_waits(func, target, res.retiring) == {6}


#: line 8's wait waits for nothing on either path into its block, but nothing in its block
#: shows that (it is the block's first instruction): only the checker's run can prove it idle
JOINED = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
k:
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lskip
  ds_load_b32 v1, v0
  s_wait_dscnt 0x0
.Lskip:
  s_wait_dscnt 0x0
  v_add_f32 v3, v1, v1
  s_endpgm
"""


def _counted_runs(monkeypatch) -> list[bool]:
    from stinkywait_core import review_proof
    runs: list[bool] = []
    check = review_proof._check

    def counted(an, text, functions, max_steps, proof_only=False, parsed=None):
        runs.append(proof_only)
        return check(an, text, functions, max_steps, proof_only, parsed)

    monkeypatch.setattr(review_proof, "_check", counted)
    return runs


def test_an_idle_waits_delete_is_proved_without_a_run_of_its_own(monkeypatch):
    """The run on the file as written proves the delete of the wait that waits for nothing
    (line 8 of JOINED: both paths into its block drained, which its block does not show);
    a wait a read needs (line 9 of BARRIER) gets its run and fails."""
    runs = _counted_runs(monkeypatch)
    an = analyze(JOINED, "k.s", Options())
    lines = physical_lines(JOINED, keepends=True)
    safe = _change(an, lines, 8, "")
    assert proven_safe(an, lines, [safe]) == [safe]
    assert runs == [True]
    runs.clear()
    an = analyze(BARRIER, "k.s", Options())
    lines = physical_lines(BARRIER, keepends=True)
    safe = _change(an, lines, 11, "")
    assert proven_safe(an, lines, [_change(an, lines, 9, ""), safe]) == [safe]
    assert runs == [True, False]


def test_a_wait_idle_by_its_block_is_proved_without_any_run(monkeypatch):
    """Line 11 of BARRIER follows line 9's `s_wait_dscnt 0x0` in its block with no LDS op
    between (validate/hwidle.py): its delete needs no checker run at all; line 9's needs one."""
    runs = _counted_runs(monkeypatch)
    an = analyze(BARRIER, "k.s", Options())
    lines = physical_lines(BARRIER, keepends=True)
    safe = _change(an, lines, 11, "")
    assert proven_safe(an, lines, [safe]) == [safe]
    assert runs == []
