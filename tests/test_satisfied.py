"""Waits left satisfied on every path after folding (waitcnt/satisfied.py): a wait past a join
whose predecessors already hold its counter at most at its value is dropped; one that a push on
some path into it leaves needed stays.  Under a model in which every op is back at once
(test_coalesce's `FREE`), so CoalesceWaits folds whatever it may."""

from __future__ import annotations

from stinkywait_core import api
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.targets.latency import MEMORY_KINDS

FREE = tuple((f"latency.{k}", 0) for k in MEMORY_KINDS)
HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\n\t.text\nk:\n'
LOADS = "".join(f"\tds_load_b32 v{10 + i}, v0 offset:{4 * i}\n" for i in range(4))


def plan(body: str, cpu: str = "gfx1250", window: int = -1) -> list[tuple[int, str, int]]:
    text = HEAD.format(cpu=cpu) + body + "\ts_endpgm\n"
    an = analyze(text, "t.s", Options(coalesce_window=window, latency_overrides=FREE))
    assert not [d for d in an.diagnostics if d.severity == "error"], an.diagnostics
    return sorted((w.line, w.counter, w.count) for w in an.waits())


def diamond(fall: str) -> str:
    # lines 4-7 loads, 8 A (needs ds 3), 11.. the fall-through block, then .Lj whose use of
    # v11 needs ds 2 on the taken edge
    return (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n" + fall
            + ".Lj:\n\tv_mov_b32 v22, v11\n")


def test_a_wait_past_a_join_that_every_path_satisfies_is_dropped():
    # the fall-through block's wait (ds 2) folds into A; then at .Lj at most 2 are in flight
    # on both edges: its wait would not wait
    body = diamond("\tv_mov_b32 v21, v11\n")
    assert plan(body, window=0) == [(8, "ds", 3), (11, "ds", 2), (13, "ds", 2)]
    assert plan(body) == [(8, "ds", 2)]


def test_a_push_on_one_path_keeps_the_wait():
    # near miss: the fall-through block issues one more load, so on that edge 3 may be in
    # flight at .Lj, more than its wait's 2
    body = diamond("\tv_mov_b32 v21, v11\n\tds_load_b32 v14, v0 offset:16\n")
    got = plan(body)
    assert (8, "ds", 2) in got
    assert [w for w in got if w[0] > 12] == [(14, "ds", 2)]


def test_a_loop_back_edge_into_the_join_is_counted():
    # near miss: the join is a loop head whose back edge brings a load in flight
    body = (LOADS + "\tv_mov_b32 v20, v11\n.Lj:\n\tv_mov_b32 v22, v11\n\tds_load_b32 v11, v0 offset:16\n"
            "\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n")
    got = plan(body)
    assert [w for w in got if w[0] == 10] == [(10, "ds", 0)]


def test_a_call_forgets_the_bound():
    # near miss: after a call nothing is known about the counter, so the wait after it stays
    body = (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n"
            "\tv_mov_b32 v21, v11\n\ts_swappc_b64 s[30:31], s[4:5]\n.Lj:\n\tv_mov_b32 v22, v11\n")
    got = plan(body)
    assert any(w[0] == 14 for w in got), got


def test_edits_give_what_a_fresh_analysis_gives():
    # A takes the fall-through's ds 1; the join's wait (ds 2, for the taken edge) has taken the
    # next use's in its block (ds 1 after one more load) and goes.  CoalesceWaits' record of
    # that fold is shared with the incremental memo: the next version (a load in the
    # fall-through block keeps the join's wait) must read it whole
    def body(fall: str) -> str:
        return (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n"
                "\tv_mov_b32 v21, v12\n" + fall + ".Lj:\n\tv_mov_b32 v22, v11\n"
                "\tds_load_b32 v14, v0 offset:16\n\tv_mov_b32 v23, v12\n")
    versions = [body(""), body("\tds_load_b32 v15, v0 offset:20\n"), body(""), body("\ts_nop 0\n")]
    cache = api.AnalysisCache()
    seen = []
    for b in versions:
        text = HEAD.format(cpu="gfx1250") + b + "\ts_endpgm\n"
        opts = Options(latency_overrides=FREE)
        warm = api.analyze(text, "t.s", opts, cache=cache)
        cold = api.analyze(text, "t.s", opts)
        assert (warm.to_json(), warm.inserted_text(explain=True)) == (cold.to_json(), cold.inserted_text(explain=True))
        seen.append(sorted((w.line, w.counter, w.count) for w in cold.waits()))
    assert seen[0] == [(8, "ds", 1)]  # (the join's wait went in the first version)
    assert len(seen[1]) > 1  # (and stayed in the second)


def test_a_run_reused_whole_sees_a_drop_that_came_or_went():
    # the same layout in every version (one line in the fall-through block swapped for
    # another), so `_build_result` may reuse the join's run whole: whether the join's wait is
    # satisfied rests on the fall-through block, outside that run, and flips with the swap
    def body(fall: str) -> str:
        return (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n"
                + fall + "\tv_mov_b32 v21, v12\n.Lj:\n\tv_mov_b32 v22, v11\n"
                "\tds_load_b32 v14, v0 offset:16\n\tv_mov_b32 v23, v12\n")
    quiet, busy = body("\ts_nop 0\n"), body("\tds_load_b32 v15, v0 offset:20\n")
    cache = api.AnalysisCache()
    opts = Options(latency_overrides=FREE)
    seen = []
    for b in [quiet, busy, quiet, busy, busy, quiet]:
        text = HEAD.format(cpu="gfx1250") + b + "\ts_endpgm\n"
        warm = api.analyze(text, "t.s", opts, cache=cache)
        cold = api.analyze(text, "t.s", opts)
        assert sorted((w.line, w.counter, w.count) for w in warm.waits()) == \
            sorted((w.line, w.counter, w.count) for w in cold.waits())
        assert (warm.to_json(), warm.inserted_text(explain=True)) == (cold.to_json(), cold.inserted_text(explain=True))
        seen.append((len(cold.waits()), warm.outputs[0].memo.layout_stable))
    assert seen[0][0] < seen[1][0]  # (the swap does flip the join's wait)
    assert all(stable for _, stable in seen[1:])  # (and no line moved: the reuse was allowed)


def test_a_blocks_record_is_its_instructions_stepped():
    # the fixed point runs on per-block transfers (x -> min(x + pushes, top), capped) and the
    # drop tests each wait on its prefix's transfer: both must be the bound stepped one
    # instruction at a time (a push adds one, a count the counter cannot hold is unknown, a
    # wait lowers it, a call forgets it), on a kernel with loads, planned and hand-written
    # waits, branches, and a scalar load after the join's `s_wait_kmcnt 0`
    from stinkywait_core.targets.model import CTL_CALL
    from stinkywait_core.waitcnt import satisfied
    from stinkywait_core.waitcnt.satisfied_blocks import UNKNOWN, apply, block_bounds, group_values
    body = (LOADS + "\ts_load_b32 s4, s[0:1], 0x0\n\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n"
            "\ts_cbranch_scc1 .Lj\n\tds_load_b32 v14, v0 offset:16\n\tv_mov_b32 v21, v12\n\ts_wait_dscnt 0x1\n"
            ".Lj:\n\tv_mov_b32 v22, v11\n\ts_mov_b32 s5, s4\n\ts_load_b32 s6, s[0:1], 0x4\n"
            "\tds_load_b32 v15, v0 offset:20\n")
    an = analyze(HEAD.format(cpu="gfx1250") + body + "\ts_endpgm\n", "t.s", Options(latency_overrides=FREE))
    po = an.outputs[0]
    df, anchors = po.df, po.plan.anchor_waits
    target = df.target
    groups, group_of, by_name = satisfied.counter_groups(target)
    n = len(groups)
    caps = [max(target.max_wait[c] for c in g) + 1 for g in groups]

    def step(inst, bound: list) -> None:
        if inst.is_label or inst.is_phi:
            return
        inf = df.info.get(inst)
        if inf is None or inf.control == CTL_CALL:
            bound[:] = [UNKNOWN] * n
            return
        if inf.is_wait:
            for cn, v in target.decode_wait(inst).items():
                if v >= 0 and cn in by_name:
                    bound[by_name[cn]] = min(bound[by_name[cn]], v)
        for c in inf.pushes:
            gi = group_of.get(c)
            if gi is not None and bound[gi] < UNKNOWN:
                bound[gi] = bound[gi] + 1 if bound[gi] + 1 < caps[gi] else UNKNOWN

    checked = tested = 0
    for b in po.func.blocks:
        rec = block_bounds(b, anchors, df, n, group_of, by_name, None)
        tests = {inst: {gi: (a, t, v) for gi, a, t, v in ts} for inst, ts in rec.checks}
        for x in (0, 1, 3, 7, 62, UNKNOWN):
            # (an entry bound is a count the counter can hold, or unknown: what exits leave)
            xs = [x if x < caps[gi] else UNKNOWN for gi in range(n)]
            bound = list(xs)
            for inst in b.instrs:
                spec = anchors.get(inst)
                if spec is not None:
                    for gi, v in enumerate(group_values(spec, group_of, n)):
                        if v != -1:
                            a, t, tv = tests[inst][gi]
                            assert (apply(xs[gi], a, t, caps[gi]), tv) == (bound[gi], v), (b.name, inst.text, x)
                            bound[gi] = min(bound[gi], v)
                            tested += 1
                step(inst, bound)
            assert bound == [apply(xs[gi], a, t, caps[gi]) for gi, (a, t) in enumerate(rec.trans)], (b.name, x)
            checked += 1
    assert checked >= 12 and tested > 0
