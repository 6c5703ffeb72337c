"""The stall prediction (waitcnt/stall.py) on programs small enough to check by hand: a one-wave
in-order walk, each instruction its issue cycles, each memory op back after its latency, each
wait until its counter has come down to its value (exact counter semantics)."""

from __future__ import annotations

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.targets import get_target
from stinkywait_core.waitcnt.stall import planned_points, ready_at, simulate

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\n\t.text\nk:\n'


def run(body: str, cpu: str = "gfx942", overrides: tuple = (), planned: bool = False):
    an = analyze(HEAD.format(cpu=cpu) + body, "t.s", Options(arch=cpu, latency_overrides=overrides))
    po = an.outputs[0]
    target = an.options.target
    points = planned_points(po.result.waits, target) if planned else None
    return simulate(po.func, target, points, an.options.latency_model), an.options.latency_model


MIXED = ("\ts_load_dword s10, s[0:1], 0x0\n"   # line 4, issued at 0: back at smem
         "\tds_read_b32 v10, v0\n"              # line 5, at 4: back at 4 + lds
         "\tds_read_b32 v11, v0 offset:4\n")    # line 6, at 8: back at 8 + lds


def test_ready_at_counts_what_is_left():
    assert ready_at([10.0, 30.0, 20.0], 3) == float("-inf")
    assert ready_at([10.0, 30.0, 20.0], 1) == 20.0
    assert ready_at([10.0, 30.0, 20.0], 0) == 30.0


def test_a_drain_waits_for_the_last_op():
    r, m = run(MIXED + "\ts_waitcnt lgkmcnt(0)\n\ts_endpgm\n")
    # gfx9: every instruction 4 cycles; the wait at line 7 issues at 12
    assert r.at(7, "self").per_trip == 8 + m.latency["lds"] - 12 == 60
    assert r.total == 60 and r.at(7, "self").loop is None


def test_a_mixed_counter_waits_until_at_most_n_of_either_kind_are_left():
    # lgkmcnt(1) over SMEM (back at 20) and two LDS reads (68, 72): at most one left at 68
    r, m = run(MIXED + "\ts_waitcnt lgkmcnt(1)\n\ts_endpgm\n")
    assert r.at(7, "self").per_trip == 4 + m.latency["lds"] - 12 == 56
    # lgkmcnt(2): the scalar load is back at 20, two reads left: no wait... until 20
    r, m = run(MIXED + "\ts_waitcnt lgkmcnt(2)\n\ts_endpgm\n")
    assert r.at(7, "self").per_trip == m.latency["smem"] - 12 == 8


def test_overrides_change_the_prediction():
    r, _ = run(MIXED + "\ts_waitcnt lgkmcnt(0)\n\ts_endpgm\n", overrides=(("latency.lds", 200),))
    assert r.at(7, "self").per_trip == 8 + 200 - 12
    r, _ = run(MIXED + "\ts_waitcnt lgkmcnt(0)\n\ts_endpgm\n", overrides=(("issue.ds", 1),))
    assert r.at(7, "self").per_trip == 4 + 1 + 64 - (4 + 1 + 1)


LOOP = ("\ts_mov_b32 s2, 4\n"                    # line 4
        ".Lloop:\n"                              # line 5
        "\tglobal_load_dword v1, v[2:3], off\n"  # line 6
        "\ts_waitcnt vmcnt(0)\n"                 # line 7
        "\tv_add_f32 v4, v1, v4\n"
        "\ts_sub_u32 s2, s2, 1\n"
        "\ts_cmp_lg_u32 s2, 0\n"
        "\ts_cbranch_scc1 .Lloop\n"
        "\ts_endpgm\n")


def test_a_wait_in_a_loop_reports_one_trip_and_its_loop():
    r, m = run(LOOP)
    p = r.at(7, "self")
    assert p.loop == ".Lloop" and p.visits == m.loop_trips
    assert p.per_trip == m.latency["vmem_load"] - 4 == 316
    assert p.total == r.total == m.loop_trips * 316
    r3, _ = run(LOOP, overrides=(("loop_trips", 3),))
    assert r3.at(7, "self").visits == 3 and r3.total == 3 * 316


def test_matrix_ops_hold_the_matrix_pipe():
    # two dependent-free MFMAs of 8 passes (32 cycles each): the second issues when the pipe is
    # free at 32, so the wait after them (line 7) issues at 36 + 4 and the load (0 + 320) stalls less
    body = ("\tglobal_load_dword v1, v[2:3], off\n"
            "\tv_mfma_f32_32x32x8_f16 a[0:15], v[4:5], v[6:7], a[0:15]\n"
            "\tv_mfma_f32_32x32x8_f16 a[16:31], v[4:5], v[6:7], a[16:31]\n"
            "\ts_waitcnt vmcnt(0)\n\ts_endpgm\n")
    r, m = run(body)
    assert m.passes("v_mfma_f32_32x32x8_f16") == 8
    assert r.at(7, "self").per_trip == 320 - (4 + 32 + 4) == 280


def test_planned_waits_are_priced_at_their_point():
    # no wait in the text: the pass plans lgkmcnt(0) before the use at line 7
    r, m = run(MIXED + "\tv_add_f32 v20, v10, v11\n\ts_endpgm\n", planned=True)
    p = r.at(7, "before")
    assert p is not None and p.per_trip == 8 + m.latency["lds"] - 12


def test_the_analysis_gives_each_planned_wait_its_stall():
    an = analyze(HEAD.format(cpu="gfx942") + MIXED + "\tv_add_f32 v20, v10, v11\n\ts_endpgm\n", "t.s",
                 Options(arch="gfx942"))
    (w,) = an.waits()
    assert an.wait_stall(w).per_trip == 60
    js = an.to_json()["functions"][0]
    assert js["waits"][0]["stall"] == {"cycles": 60, "loop": None, "total": 60}
    assert js["stall"]["cycles"] == 60
    assert get_target("gfx942").latency.latency["lds"] == 64


def test_check_prices_a_stricter_than_needed_wait():
    # gfx1250, in a loop: the first LDS load issues at 0 (back at 72), two `s_nop 15` take 16
    # cycles each, the second load issues at 33 (back at 105).  `s_wait_dscnt 0` at 34 waits
    # for the second load (until 105) where `s_wait_dscnt 1` waits for the first (until 72):
    # 33 cycles more a trip; after the `s_nop 15`s the later wait finds both back either way.
    # (gfx9's lgkmcnt is never relaxed by the review: SMEM on it completes out of order.)
    body = (".Lloop:\n"
            "\tds_load_b32 v1, v0\n"
            "\ts_nop 15\n\ts_nop 15\n"
            "\tds_load_b32 v2, v0 offset:4\n"
            "\ts_wait_dscnt 0\n"                          # line 9
            "\tv_add_f32 v3, v1, v1\n"
            + "\ts_nop 15\n" * 5 +
            "\ts_wait_dscnt 0\n"
            "\tv_add_f32 v4, v2, v2\n"
            "\ts_sub_u32 s2, s2, 1\n\ts_cmp_lg_u32 s2, 0\n\ts_cbranch_scc1 .Lloop\n\ts_endpgm\n")
    an = analyze(HEAD.format(cpu="gfx1250") + body, "t.s", Options())
    (d,) = [d for d in an.check_diagnostics() if d.code == "stricter-wait"]
    assert d.line == 9 and d.message.endswith("s_wait_dscnt 1 suffices; costs ~33 cycles per trip of .Lloop")
    # slower nops: the loads lie 1 + 2 x 32 cycles apart, the strict wait costs that much
    an = analyze(HEAD.format(cpu="gfx1250") + body, "t.s", Options(latency_overrides=(("issue.nop", 2),)))
    (d,) = [d for d in an.check_diagnostics() if d.code == "stricter-wait"]
    assert d.message.endswith("costs ~65 cycles per trip of .Lloop")


def test_wait_idle_is_priced_as_a_drain_but_not_trusted_by_the_pass():
    # gfx1250: an LDS load at 0 (back at 72), then `s_wait_idle` at line 5, then its use.  The
    # model prices the idle as a drain: it waits until 72 (71 cycles after its issue slot at 1),
    # and the pass's own `s_wait_dscnt 0` before the use (line 6) then waits no more.  The pass
    # still plans that wait (LLVM 22 does not read S_WAIT_IDLE as a wait either).
    body = ("\tds_load_b32 v1, v0\n"
            "\ts_wait_idle\n"
            "\tv_add_f32 v3, v1, v1\n"
            "\ts_endpgm\n")
    r, m = run(body, cpu="gfx1250", planned=True)
    idle = r.at(5, "self")
    assert idle is not None and idle.per_trip == m.latency["lds"] - m.issue["ds"] == 71
    planned = r.at(6, "before")
    assert planned is not None and planned.per_trip == 0
    an = analyze(HEAD.format(cpu="gfx1250") + body, "t.s", Options())
    assert [(w.line, w.counter, w.count) for w in an.waits()] == [(6, "ds", 0)]
    # the same program with an `s_nop 0` instead: no drain there, the planned wait pays the rest
    # (issued at 2, after the nop's own cycle)
    r, _ = run(body.replace("s_wait_idle", "s_nop 0"), cpu="gfx1250", planned=True)
    assert r.at(5, "self") is None and r.at(6, "before").per_trip == 72 - 2
