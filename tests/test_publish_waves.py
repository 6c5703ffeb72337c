"""The publish rule in functions specialised by wave index (waitcnt/wave_match.py pairs the
barrier instances of two waves for the pass, validate/hwwaves.py does it again for the
checker): a fill or store in flight at a barrier of one wave's path needs no drain when no
wave, at the barrier it meets as the same instance, touches its bytes before its next one."""

from __future__ import annotations

import gzip
import random
import textwrap
from pathlib import Path

import pytest

from stinkywait_core.api import analyze, parse
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module
from stinkywait_core.validate.hwfacts import local_transfer_ids
from stinkywait_core.validate.hwpublish import fence_role
from stinkywait_core.validate.hwwaves import barrier_pairs, skeleton
from stinkywait_core.validate.paths import block_successors
from stinkywait_core.waitcnt.publish import barrier_kind
from stinkywait_core.waitcnt.wave_match import WaveMatch

HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n.text\nk:\n'
DATA = Path(__file__).parent / "data" / "aiter_gfx1250"

# wave 0 stores 0x100 and both paths read it only after their second barrier
SPLIT = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_bfe_u32 s2, ttmp8, 0x50019
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lw0
  ds_load_b32 v7, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v8, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
  s_branch .Ljoin
.Lw0:
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_nop 0
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
.Ljoin:
  v_add_nc_u32 v6, v4, v4
  s_endpgm
"""


def kernel(body: str) -> str:
    return HEAD + textwrap.dedent(body)


def barrier_waits(text: str, **kw) -> list[int]:
    an = analyze(text, "k.s", Options(coalesce_window=0, **kw))
    lines = text.split("\n")
    return sorted({w.line for w in an.waits() if w.rule in ("fallback", "barrier") and "barrier" in lines[w.line - 1]})


def violations(text: str) -> list:
    mod = parse_asm(text, "k.s")
    return [v for r in check_module(mod, Options(), lds_addresses=True, max_trips=3) for v in r.violations]


def checker(text: str) -> list:
    return violations(analyze(text, "k.s", Options()).inserted_text())


def pairs_of(text: str) -> tuple[dict | None, dict | None]:
    """The pass's and the checker's pairings, both as {barrier line: {partner lines}}."""
    mod = parse(text, "k.s")
    fn = mod.functions[0]
    wm = WaveMatch(fn, barrier_kind, mod.target or "gfx1250")
    skel = skeleton(list(fn.blocks), block_successors(fn.blocks), fence_role, True, local_transfer_ids(fn))
    bp = barrier_pairs(skel) if skel is not None else None
    fences = [[i for i in blk.instrs if not i.is_label and fence_role(i)] for blk in fn.blocks]
    a = None if wm.met is None else {b.line: {x.line if x else 0 for x in xs} for b, xs in wm.met.items()}
    b = None if bp is None else {fences[p[0]][p[1]].line: {fences[x[0]][x[1]].line if x else 0 for x in xs}
                                 for p, xs in bp.items()}
    return a, b


def test_barriers_of_two_paths_are_paired():
    a, b = pairs_of(kernel(SPLIT))
    assert a == b
    assert a[10] == {10, 19} and a[13] == {13, 22}


def test_store_runs_across_the_first_barrier_of_its_path():
    text = kernel(SPLIT)
    got = barrier_waits(text)
    assert 19 not in got  # no wave reads 0x100 before the second barrier
    assert checker(text) == []


def test_consumer_reading_before_the_second_barrier_drains():
    """Mutation: the other path reads the stored bytes right after the first barrier."""
    text = kernel(SPLIT.replace("ds_load_b32 v8, v2", "ds_load_b32 v8, v1"))
    assert 19 in barrier_waits(text)
    assert checker(text) == []


def test_checker_catches_the_removed_drain():
    """The pass's output for the mutated kernel, with its drain at wave 0's first barrier
    removed by hand: the checker's own pairing reports the barrier."""
    text = kernel(SPLIT.replace("ds_load_b32 v8, v2", "ds_load_b32 v8, v1"))
    out = analyze(text, "k.s", Options(coalesce_window=0)).inserted_text().split("\n")
    k = next(i for i, ln in enumerate(out) if "s_barrier_signal" in ln and i > 18)
    assert "s_wait_dscnt" in out[k - 1]
    del out[k - 1]
    vs = violations("\n".join(out))
    assert any(v.rule == "barrier" and v.producer.mnemonic == "ds_store_b32" for v in vs)


def test_unequal_barrier_counts_pair_with_every_candidate():
    """One more barrier on wave 0's path: instance 2 of the others is the join's barrier, so
    the reader after it is met at wave 0's second barrier: drained."""
    body = SPLIT.replace("  s_nop 0\n", "  s_nop 0\n  s_barrier_signal -1\n  s_barrier_wait 0xffff\n")
    body = body.replace("  ds_load_b32 v4, v1\n.Ljoin:", "  s_nop 0\n.Ljoin:")
    a, b = pairs_of(kernel(body))
    assert a == b
    text = kernel(body)
    assert checker(text) == []


def test_loop_counters_pair_the_two_loops():
    """Two loops, one per wave parity, on the same uniform counter (aiter's fmha bwd shape):
    their barriers pair trip by trip; with a counter of its own in one loop they do not."""
    body = """\
      s_bfe_u32 s2, ttmp8, 0x50019
      s_and_b32 s3, s2, 1
      s_mov_b32 s4, 0
      s_cmp_eq_u32 s3, 0
      s_cbranch_scc1 .Leven
    .Lodd:
      s_barrier_signal -1
      s_barrier_wait 0xffff
      s_add_u32 s4, s4, 1
      s_cmp_lt_u32 s4, s10
      s_cbranch_scc1 .Lodd
      s_branch .Lend
    .Leven:
      s_barrier_signal -1
      s_barrier_wait 0xffff
      s_add_u32 s4, s4, 1
      s_cmp_lt_u32 s4, s10
      s_cbranch_scc1 .Leven
    .Lend:
      s_endpgm
    """
    a, b = pairs_of(kernel(body))
    assert a == b and a[10] == {10, 17}
    other = body.replace("s_cmp_lt_u32 s4, s10\n      s_cbranch_scc1 .Leven", "s_cmp_lt_u32 s4, s11\n      s_cbranch_scc1 .Leven")
    a, b = pairs_of(kernel(other))
    assert a == b and 0 in a[10]  # an odd wave may meet an even wave that has ended


def test_calls_out_of_the_function_give_no_pairing():
    body = SPLIT.replace("  s_endpgm\n", "  s_getpc_b64 s[30:31]\n  s_swappc_b64 s[30:31], s[30:31]\n  s_endpgm\n")
    assert pairs_of(kernel(body)) == (None, None)


# aiter's gfx1250 f4gemm: each role calls one subroutine of the kernel, whose barriers every
# role's wave meets as the same instance; after the call the roles run their own barriers
CALLED = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_bfe_u32 s2, ttmp8, 0x50019
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lw0
  s_call_i64 s[100:101], .Lsub
  ds_load_b32 v7, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v8, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
  s_branch .Ljoin
.Lw0:
  s_call_i64 s[100:101], .Lsub
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_nop 0
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
.Ljoin:
  v_add_nc_u32 v6, v4, v4
  s_endpgm
.Lsub:
  ds_load_b32 v9, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_set_pc_i64 s[100:101]
"""


def test_local_calls_are_followed_by_both_pairings():
    """A subroutine called on both wave paths: its barrier meets itself (both waves run it as
    their first), and the paths' barriers after the call are paired as without the call (the
    return goes back after the wave's own call, not after the other path's)."""
    text = kernel(CALLED)
    a, b = pairs_of(text)
    assert a is not None and a == b
    lines = text.split("\n")
    sub = next(n for n, ln in enumerate(lines, 1) if ln.strip() == "s_barrier_signal -1" and n > 30)
    first = [n for n, ln in enumerate(lines, 1) if ln.strip() == "s_barrier_signal -1"]
    assert a[sub] == {sub}
    assert a[first[0]] == {first[0], first[2]} and a[first[1]] == {first[1], first[3]}
    # the store runs across the first barrier after the call (no one reads 0x100 before the
    # second); the checker, pairing on its own, agrees
    assert first[2] not in barrier_waits(text)
    assert checker(text) == []


# only wave 0 calls the subroutine (its barrier is wave 0's first); the other waves read the
# stored bytes after their second barrier, which wave 0's first after the call meets
ONE_CALLS = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_bfe_u32 s2, ttmp8, 0x50019
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lw0
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v7, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v8, v1
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_branch .Ljoin
.Lw0:
  s_call_i64 s[100:101], .Lsub
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_nop 0
  s_barrier_signal -1
  s_barrier_wait 0xffff
.Ljoin:
  s_endpgm
.Lsub:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_set_pc_i64 s[100:101]
"""


def test_a_pairing_that_skips_the_callee_is_caught(monkeypatch):
    """The subroutine's barrier counts: wave 0's first barrier after the call is the other
    waves' second, after which they read the stored bytes, so the store is drained there.  A
    mutated pass walk that steps over the call (as if the callee had no barrier) pairs it with
    their first and lets the store run; the checker, pairing on its own, reports it."""
    import stinkywait_core.waitcnt.wave_match as wmod
    text = kernel(ONE_CALLS)
    lines = text.split("\n")
    store = next(n for n, ln in enumerate(lines, 1) if ln.strip().startswith("ds_store_b32"))
    second = [n for n, ln in enumerate(lines, 1) if ln.strip() == "s_barrier_signal -1"][1]
    a, b = pairs_of(text)
    assert a == b and a[store + 1] == {store + 1, second}
    assert store + 1 in barrier_waits(text)
    assert checker(text) == []
    real = wmod.WaveMatch._succs

    def step_over(self, pos):
        term = pos[0].terminator()
        if term is not None and term in self._calls:
            return [(self._calls[term], 0, pos[2])]
        return real(self, pos)

    monkeypatch.setattr(wmod.WaveMatch, "_succs", step_over)
    assert store + 1 not in barrier_waits(text)
    assert any(v.rule == "barrier" and v.consumer.line == store + 1 for v in checker(text))


def _random_program(rng: random.Random) -> str:
    """Two wave-index paths of random barrier counts, random DS stores and loads at a few
    addresses, optional uniform loops."""
    lines = ["  v_mov_b32 v1, 0x100", "  v_mov_b32 v2, 0x200", "  v_mov_b32 v5, 0x300",
             "  s_bfe_u32 s2, ttmp8, 0x50019", f"  s_cmp_lt_u32 s2, {rng.randint(1, 3)}", "  s_cbranch_scc1 .La"]

    def path(tag: str) -> list[str]:
        out = []
        loop = rng.random() < 0.4
        if loop:
            out += ["  s_mov_b32 s4, 0", f".Lh{tag}:"]
        for _ in range(rng.randint(1, 6)):
            r = rng.random()
            addr = rng.choice(["v1", "v2", "v5"])
            if r < 0.3:
                out.append(f"  ds_store_b32 {addr}, v3")
            elif r < 0.6:
                out.append(f"  ds_load_b32 v{rng.randint(6, 9)}, {addr}")
            else:
                out += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"]
        if loop:
            out += ["  s_add_u32 s4, s4, 1", "  s_cmp_lt_u32 s4, s10", f"  s_cbranch_scc1 .Lh{tag}"]
        return out

    lines += path("b") + ["  s_branch .Lj", ".La:"] + path("a") + [".Lj:", "  s_barrier_signal -1",
                                                                   "  s_barrier_wait 0xffff", "  ds_load_b32 v9, v1",
                                                                   "  v_add_nc_u32 v6, v9, v6", "  s_endpgm"]
    return HEAD + "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_random_specialised_programs_pass_the_checker(seed):
    """The pass's waits on random wave-specialised programs: the checker (own pairing, own
    epochs) finds nothing unsafe, and the two pairings agree."""
    text = _random_program(random.Random(seed))
    a, b = pairs_of(text)
    assert a == b
    assert checker(text) == []


def test_fmha_bwd_pairings_agree_and_publish():
    """aiter's gfx1250 fmha v3 bwd (even and odd waves run different loops, eight barriers a
    trip each): both pairings are made over the same barriers, the checker's (value numbers)
    within the pass's (equal scalar runs only); the even loop's first barrier meets the odd
    loop's in both."""
    path = DATA / "fmha_v3_bwd__bwd_hd128_bf16_a32_pssk.s.gz"
    if not path.exists():
        pytest.skip("test data absent")
    text = gzip.decompress(path.read_bytes()).decode()
    a, b = pairs_of(text)
    assert a is not None and b is not None and set(a) == set(b)
    assert all(b[k] <= a[k] for k in a)
    assert b[1416] == {1416, 3846} and a[1416] >= {1416, 3846}


def test_a_pairing_that_forgets_the_other_path_is_caught(monkeypatch):
    """Mutation: the pass pairs each barrier only with itself (as if every wave ran it), so
    a reader on the other path is never seen.  The checker, pairing on its own, reports the
    barrier on the SPLIT kernel's mutated variant and on some random programs."""
    import stinkywait_core.waitcnt.wave_match as wmod
    real = wmod.WaveMatch._solve

    def only_self(self):
        real(self)
        if self.met is not None:
            self.met = {b: {b} for b in self.met}

    monkeypatch.setattr(wmod.WaveMatch, "_solve", only_self)
    text = kernel(SPLIT.replace("ds_load_b32 v8, v2", "ds_load_b32 v8, v1"))
    assert 19 not in barrier_waits(text)  # the mutated pass lets the store run across
    assert any(v.rule == "barrier" for v in checker(text))
    caught = sum(1 for seed in range(40) if checker(_random_program(random.Random(seed))))
    assert caught > 0


def test_an_edit_of_vector_code_reuses_the_pairing(monkeypatch):
    """The pairing is kept with the alignment's key (the CFG and the scalar instructions with
    their reaching definitions): an edit of a vector instruction walks no pair again, and the
    plan equals a fresh one; an edit of the branch's condition walks again."""
    from stinkywait_core.api import AnalysisCache
    import stinkywait_core.waitcnt.wave_match as wmod
    text = kernel(SPLIT)
    cache = AnalysisCache()
    analyze(text, "k.s", Options(), cache=cache)
    walks = []
    real = wmod.WaveMatch._solve
    monkeypatch.setattr(wmod.WaveMatch, "_solve", lambda self: walks.append(1) or real(self))
    edited = text.replace("v_add_nc_u32 v6, v4, v4", "v_add_nc_u32 v9, v4, v4")
    inc = analyze(edited, "k.s", Options(), cache=cache)
    assert walks == []
    assert inc.inserted_text() == analyze(edited, "k.s", Options()).inserted_text()
    walks.clear()
    analyze(text.replace("s_cmp_eq_u32 s2, 0", "s_cmp_eq_u32 s2, 1"), "k.s", Options(), cache=cache)
    assert walks
