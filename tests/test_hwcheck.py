"""The hardware checker (validate/hwcheck.py) on hand-written kernels.

Each case is decided by hand from the hardware model in validate/hwstate.py and hwrules.py;
most come in pairs (a wait that is exactly enough, and the next weaker one), so a checker
that is too lax or too strict fails one of them.  Targets: gfx1250, gfx1200, gfx942, gfx1100.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

from proggen import GenParams, random_program
from stinkywait_core.ir import Instruction
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.validate.hwcheck import HwResult, HwViolation, check_function
from stinkywait_core.validate.hwreport import format_result
from stinkywait_core.validate.lds_overlap import RangeRegions

ROOT = pathlib.Path(__file__).resolve().parent.parent


def check(body: str, arch: str = "gfx1250", **kw) -> HwResult:
    text = "k:\n" + "\n".join("  " + ln.strip() for ln in body.strip().splitlines()) + "\n  s_endpgm\n"
    mod = parse(text, "k.s")
    assert not [d for d in mod.diagnostics if d.severity == "error"], mod.diagnostics
    return check_function(mod.functions[0], Options(arch=arch), **kw)


def only(res: HwResult) -> HwViolation:
    assert len(res.violations) == 1, format_result(res, "k.s")
    return res.violations[0]


def ok(res: HwResult) -> None:
    assert res.ok, format_result(res, "k.s")


def where(v: HwViolation) -> tuple:
    """(rule, consumer line, producer line, needs) -- line 1 is the label, 2 the first body line."""
    return v.rule, v.consumer.line, v.producer.line, v.needs


# ------------------------------------------------------------------ counters

FOUR_DS = """
ds_load_b64 v[20:21], v0
ds_load_b64 v[22:23], v0
ds_load_b64 v[24:25], v0
ds_load_b64 v[26:27], v0
s_wait_dscnt {n}
v_add_f32 v40, v22, v22
"""


def test_in_order_wait_exactly_enough():
    ok(check(FOUR_DS.format(n=2)))


def test_in_order_next_weaker_wait():
    v = only(check(FOUR_DS.format(n=3)))
    assert where(v) == ("raw", 7, 3, {"dscnt": 2})
    assert v.present == {"dscnt": 3} and v.path == ("k",)


def test_out_of_order_smem_needs_zero():
    body = "s_load_b32 s4, s[0:1], 0x0\ns_load_b32 s5, s[0:1], 0x4\ns_wait_kmcnt {n}\ns_add_u32 s6, s4, 1"
    ok(check(body.format(n=0)))
    assert where(only(check(body.format(n=1)))) == ("raw", 5, 2, {"kmcnt": 0})


def test_other_kinds_on_the_counter_only_add():
    # gfx942 lgkmcnt: with an SMEM load in flight too, lgkmcnt(1) still retires the older of two
    # DS loads (while it is outstanding so is the younger one), never the younger
    body = ("ds_read_b32 v1, v0\nds_read_b32 v5, v0\ns_load_dword s4, s[0:1], 0x0\n"
            "s_waitcnt lgkmcnt({n})\nv_add_f32 v2, {r}, {r}")
    ok(check(body.format(n=1, r="v1"), "gfx942"))
    assert where(only(check(body.format(n=2, r="v1"), "gfx942"))) == ("raw", 6, 2, {"lgkmcnt": 1})
    assert where(only(check(body.format(n=1, r="v5"), "gfx942"))) == ("raw", 6, 3, {"lgkmcnt": 0})


def test_gfx9_stores_count_in_order_with_loads():
    body = """buffer_load_dword v1, v0, s[0:3], 0 offen
    buffer_store_dword v2, v0, s[0:3], 0 offen
    buffer_store_dword v3, v0, s[0:3], 0 offen
    s_waitcnt vmcnt({n})
    v_add_f32 v4, v1, v1"""
    ok(check(body.format(n=2), "gfx942"))
    assert where(only(check(body.format(n=3), "gfx942"))) == ("raw", 6, 2, {"vmcnt": 2})


def test_gfx11_legacy_waitcnt_and_vscnt():
    body = "buffer_load_b32 v1, v0, s[0:3], 0 offen\n{w}\nv_add_f32 v4, v1, v1"
    ok(check(body.format(w="s_waitcnt vmcnt(0)"), "gfx1100"))
    # a store wait retires nothing on vmcnt
    assert only(check(body.format(w="s_waitcnt_vscnt null, 0x0"), "gfx1100")).needs == {"vmcnt": 0}


def test_flat_needs_both_counters_on_gfx12():
    body = "flat_load_b32 v2, v[0:1]\n{w}\nv_add_f32 v3, v2, v2"
    ok(check(body.format(w="s_wait_loadcnt_dscnt 0x0"), "gfx1200"))
    assert only(check(body.format(w="s_wait_loadcnt 0"), "gfx1200")).needs == {"dscnt": 0}


# ------------------------------------------------------------------ WAW, WAR

def test_waw_same_type_vmem_in_order_only_before_gfx12():
    body = "global_load_b32 v1, v[2:3], off\nglobal_load_b32 v1, v[4:5], off\ns_wait_loadcnt 0\nv_add_f32 v7, v1, v1"
    assert where(only(check(body))) == ("waw", 3, 2, {"loadcnt": 0})
    ok(check(body.replace("_b32", "_dword").replace("s_wait_loadcnt 0", "s_waitcnt vmcnt(0)"), "gfx942"))


def test_waw_lds_returns_in_order():
    ok(check("ds_load_b128 v[8:11], v0\nds_load_b128 v[8:11], v1\ns_wait_dscnt 0\nv_add_f32 v7, v8, v8"))


def test_waw_valu_over_pending_load():
    v = only(check("ds_load_b32 v8, v0\nv_mov_b32 v8, 1\nv_add_f32 v7, v8, v8"))
    assert where(v) == ("waw", 3, 2, {"dscnt": 0})


def test_xcnt_store_data_and_vmem_exemption():
    assert where(only(check("global_store_b32 v[4:5], v8, off\nv_mov_b32 v8, 1"))) == ("war", 3, 2, {"xcnt": 0})
    # a VMEM load overwriting an older VMEM op's source: translations complete in order
    ok(check("global_store_b32 v[4:5], v8, off\nglobal_load_b32 v8, v[6:7], off"))
    # issuing an SMEM op completes the pending VMEM translations
    ok(check("global_store_b32 v[4:5], v8, off\ns_load_b32 s4, s[0:1], 0x0\nv_mov_b32 v8, 1"))


def test_xcnt_in_order_partial_wait():
    body = "global_store_b32 v[4:5], v8, off\nglobal_store_b32 v[4:5], v9, off\ns_wait_xcnt 1\nv_mov_b32 {r}, 1"
    ok(check(body.format(r="v8")))
    assert where(only(check(body.format(r="v9")))) == ("war", 5, 3, {"xcnt": 0})


def test_result_retired_means_translated():
    ok(check("global_load_b32 v1, v[2:3], off\ns_wait_loadcnt 0\nv_mov_b32 v2, 0"))
    assert only(check("global_load_b32 v1, v[2:3], off\nv_mov_b32 v2, 0")).rule == "war"


def test_smem_base_reuse():
    v = only(check("s_load_b32 s4, s[0:1], 0x0\ns_mov_b32 s0, 0"))
    assert where(v) == ("war", 3, 2, {"xcnt": 0})
    ok(check("s_load_b32 s4, s[0:1], 0x0\ns_wait_kmcnt 0\ns_mov_b32 s0, 0"))
    ok(check("s_load_b32 s4, s[0:1], 0x0\ns_mov_b32 s0, 0", "gfx1200"))  # no xcnt before gfx1250


def test_export_source_lock_on_expcnt():
    body = "exp mrt0 v0, v1, v2, v3\n{w}\nv_mov_b32 v1, 0"
    assert where(only(check(body.format(w=""), "gfx1100"))) == ("war", 4, 2, {"expcnt": 0})
    ok(check(body.format(w="s_waitcnt expcnt(0)"), "gfx1100"))


# ------------------------------------------------------------------ LDS and barriers

def test_lds_between_engines_and_tokens():
    body = """tensor_load_to_lds s[0:3], s[4:11] // st.token:{t}
    ds_store_b32 v1, v2 // st.token:2"""
    v = only(check(body.format(t=2)))
    assert where(v) == ("lds-waw", 3, 2, {"tensorcnt": 0}) and v.proven
    ok(check(body.format(t=1)))
    # untagged: may overlap, not proven
    v = only(check("tensor_load_to_lds s[0:3], s[4:11]\nds_store_b32 v1, v2"))
    assert v.rule == "lds-waw" and not v.proven


def test_one_engine_is_in_order():
    ok(check("ds_store_b32 v1, v2\nds_load_b32 v3, v1\ns_wait_dscnt 0\nv_add_f32 v4, v3, v3"))


def test_tensor_fill_read_follows_numwaves_policy():
    """After a barrier that published the fill, the NumWaves policy decides; with no barrier
    between, the wave reads its own fill: required whatever NumWaves is (issue 19 item 4)."""
    def rules(body, **kw):
        text = "k:\n" + "\n".join("  " + ln.strip() for ln in body.splitlines()) + "\n  s_endpgm\n"
        return [(v.rule, v.consumer.mnemonic) for v in check_function(parse(text, "k.s").functions[0], **kw).violations]

    fenced = ("tensor_load_to_lds s[0:3], s[4:11] // st.token:0\ns_barrier_signal -1 // st.token:1\n"
              "s_barrier_wait -1 // st.token:1\nds_load_b32 v3, v1 // st.token:0")
    assert rules(fenced, options=Options(num_waves=4)) == []
    assert rules(fenced, options=Options(num_waves=1)) == [("lds-raw", "ds_load_b32")]
    assert rules(fenced, options=Options(num_waves=4), tensor_raw="always") == [("lds-raw", "ds_load_b32")]
    own = "tensor_load_to_lds s[0:3], s[4:11]\nds_load_b32 v250, v251"
    for waves in (0, 1, 4):
        assert rules(own, options=Options(num_waves=waves)) == [("lds-raw", "ds_load_b32")]


def test_barrier_publishes_own_lds():
    body = "ds_store_b32 v1, v2 // st.token:0\n{bar}"
    assert where(only(check(body.format(bar="s_barrier_signal -1 // st.token:0")))) == \
        ("barrier", 3, 2, {"dscnt": 0})
    ok(check(body.format(bar="s_barrier_signal -3 // st.token:0")))  # cluster handshake
    ok(check(body.format(bar="s_barrier_signal -1 // st.token:1")))


def test_address_ranges_plug_in():
    text = "k:\n  tensor_load_to_lds s[0:3], s[4:11]\n  ds_store_b32 v1, v2\n  s_endpgm\n"
    func = parse(text, "k.s").functions[0]
    tl, st = [i for i in func.instructions() if not i.is_label][:2]
    disjoint = RangeRegions({tl: ((0, 1024),), st: ((1024, 1028),)})
    assert check_function(func, Options(), regions=disjoint).ok
    v = check_function(func, Options(), regions=RangeRegions({tl: ((0, 1024),), st: ((512, 516),)})).violations
    assert [(x.rule, x.proven) for x in v] == [("lds-waw", True)]


# ------------------------------------------------------------------ ISA drains, control

def test_atomic_needs_xcnt_drained():
    body = "global_load_b32 v1, v[2:3], off\n{w}\nglobal_atomic_add_u32 v[4:5], v6, off"
    assert where(only(check(body.format(w="")))) == ("isa-drain", 4, 2, {"xcnt": 0})
    ok(check(body.format(w="s_wait_xcnt 0")))


def test_cache_invalidate_drains_loads_gfx942():
    body = "buffer_load_dword v1, v0, s[0:3], 0 offen\n{w}\nbuffer_wbinvl1_vol"
    assert only(check(body.format(w=""), "gfx942")).rule == "isa-drain"
    ok(check(body.format(w="s_waitcnt vmcnt(0)"), "gfx942"))


def test_gds_source_lock_and_gws_drain_after():
    v = only(check("ds_add_u32 v0, v1 gds\nv_mov_b32 v1, 0", "gfx1030"))
    assert where(v) == ("war", 3, 2, {"expcnt": 0})
    ok(check("ds_add_u32 v0, v1 gds\ns_waitcnt expcnt(0)\nv_mov_b32 v1, 0", "gfx1030"))
    res = check("ds_gws_init v0 gds\nv_mov_b32 v1, 0", "gfx1030")
    assert where(only(res)) == ("isa-drain", 3, 2, {"lgkmcnt": 0})
    assert "v_mov_b32 follows ds_gws_init (line 2), which needs lgkmcnt drained right after it" in \
        format_result(res, "k.s")
    ok(check("ds_gws_init v0 gds\ns_waitcnt lgkmcnt(0)\nv_mov_b32 v1, 0", "gfx1030"))


def test_return_drains_all_but_stores():
    assert where(only(check("ds_load_b32 v1, v0\ns_set_pc_i64 s[30:31]"))) == ("return", 3, 2, {"dscnt": 0})
    ok(check("global_store_b32 v[4:5], v8, off\ns_set_pc_i64 s[30:31]"))
    assert only(check("global_load_dword v1, v[2:3], off\ns_setpc_b64 s[30:31]", "gfx942")).rule == "return"
    # a FLAT store may write LDS: owed on dscnt at the return, never on storecnt (LLVM 22's
    # return wait, llc-22 on memintrinsic-unroll.ll's memcpy_p0_p0_sz2048 for gfx1250)
    flat = "flat_store_b128 v[4:5], v[8:11]\n{}s_set_pc_i64 s[30:31]"
    assert where(only(check(flat.format("")))) == ("return", 3, 2, {"dscnt": 0})
    ok(check(flat.format("s_wait_dscnt 0\n")))


def test_code_after_a_return_is_not_reached():
    ok(check("s_set_pc_i64 s[30:31]\nds_load_b32 v1, v0\nv_add_f32 v2, v1, v1"))


def test_call_retires_everything_but_stores():
    ok(check("global_load_b32 v1, v[2:3], off\ns_swap_pc_i64 s[30:31], s[0:1]\nv_add_f32 v2, v1, v1"))
    # the stores' source locks too (LLVM: xcnt counts as drained after a call)
    ok(check("global_store_b32 v[4:5], v8, off\ns_swap_pc_i64 s[30:31], s[0:1]\nv_mov_b32 v8, 1"))


# ------------------------------------------------------------------ paths and loops

LOOP = """k:
  s_mov_b32 s2, 0
.Lloop:
  {wait}
  ds_load_b32 v3, v1 // st.token:0
  s_wait_dscnt 0
  v_add_f32 v4, v3, v3
  tensor_load_to_lds s[8:11], s[4:11] // st.token:0
  s_cmp_eq_u32 s2, 1
  s_cbranch_scc1 .Lloop
  s_wait_tensorcnt 0
  s_endpgm
"""


@pytest.mark.parametrize("wait, bad", [("s_nop 0", True), ("s_wait_tensorcnt 0", False)])
def test_loop_carried_tensor_fill(wait: str, bad: bool):
    func = parse(LOOP.format(wait=wait), "k.s").functions[0]
    res = check_function(func, Options(num_waves=1))
    rules = [(v.rule, v.consumer.line, v.producer.line) for v in res.violations]
    assert rules == ([("lds-raw", 5, 8)] if bad else []), format_result(res, "k.s")
    if bad:
        path = res.violations[0].path
        assert path.count(".Lloop") == 2  # found on the second trip, through the back edge
    else:
        assert res.complete  # the header state repeats: a proof for every trip count


def test_growing_loop_state_is_cut_at_the_trip_bound():
    text = "k:\n.Ll:\n  s_load_b32 s4, s[0:1], 0x0\n  s_cbranch_scc1 .Ll\n  s_endpgm\n"
    func = parse(text, "k.s").functions[0]
    res = check_function(func, Options(), max_trips=3)
    assert res.trip_cut and not res.complete and "3 trips" in res.notice
    assert [v.rule for v in res.violations] == ["waw"]  # the next trip's s_load over a pending one


@pytest.mark.parametrize("seed", range(25))
def test_memoisation_loses_nothing(seed: int):
    spec = random_program(seed, GenParams(max_depth=2, max_regions=2, max_ops=4))
    func = spec.to_function()
    opts = spec.options()
    a = check_function(func, opts, max_trips=2)
    b = check_function(func, opts, max_trips=2, memoize=False, max_paths=200000)
    if b.bounded:
        pytest.skip("too many literal paths")
    key = lambda r: sorted((v.rule, v.consumer.line, v.producer.line, tuple(sorted(v.needs.items())))
                           for v in r.violations)
    assert key(a) == key(b)


def test_report_is_located_with_producer_and_path():
    res = check("global_load_b32 v1, v[2:3], off\nv_mov_b32 v1, 0")
    text = format_result(res, "k.s").splitlines()
    assert text[0].startswith("k.s:3:3: error: v_mov_b32 writes v1, which global_load_b32 (line 2)")
    assert "needs s_wait_loadcnt 0 before it, found no loadcnt wait [hw-waw]" in text[0]
    assert text[1] == "k.s:2:3: note: producer global_load_b32 issued here"
    assert text[2] == "k.s:3:3: note: path: ^k"


def test_checker_is_independent_of_the_pass():
    """validate/hw* and lds_overlap import nothing from waitcnt/ (the brief's independence)."""
    for path in (ROOT / "stinkywait_core" / "validate").glob("*.py"):
        if not (path.name.startswith("hw") or path.name == "lds_overlap.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "waitcnt" not in (node.module or ""), (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not any("waitcnt" in a.name for a in node.names), path.name


def test_input_is_not_modified():
    text = "k:\n  global_load_b32 v1, v[2:3], off\n  v_mov_b32 v1, 0\n  s_endpgm\n"
    func = parse(text, "k.s").functions[0]
    before = [(i.mnemonic, list(i.dsts), list(i.srcs)) for i in func.instructions()]
    check_function(func, Options())
    assert before == [(i.mnemonic, list(i.dsts), list(i.srcs)) for i in func.instructions()]
    assert all(isinstance(i, Instruction) for i in func.instructions())
