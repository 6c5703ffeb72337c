"""The cases of issues 11 and 12, on the pass's own plans: the hardware checker passes the pass's
full output, and finds each case's hazard, with its path, once the wait the case needs is
removed from the plan (programmatically: tests/hwplan.py drops the waits the pass inserted
before the consumer on the case's counter).

A case the pass gets wrong is a strict xfail naming the rule and the layer that owns the fix
(the checker's tests do not fix the pass); the last one, the loop self-WAW, is fixed.
"""

from __future__ import annotations

import pytest

from hwplan import Planned, planned
from stinkywait_core.results import Options
from stinkywait_core.targets import get_target
from stinkywait_core.validate.hwcheck import check_function
from stinkywait_core.validate.hwfacts import decode_wait
from stinkywait_core.validate.hwreport import format_result

MARK = "// <-"


def _text(body: str, arch: str) -> str:
    lines = [f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}"', ".text", "k:"]
    lines += ["  " + ln.strip() for ln in body.strip().splitlines()]
    lines.append("  s_endpgm")
    return "\n".join(lines) + "\n"


def _consumer_line(text: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if MARK in ln)


def _case(p: Planned, arch: str, counter: str, line: int) -> list:
    t = get_target(arch)
    return [w for w in p.waits_before(line) if counter in decode_wait(t, w)]


def run_case(body: str, arch: str, rule: str, counter: str, opts: Options | None = None,
             path: tuple[str, ...] = ("k",), producer: str | None = None) -> None:
    opts = (opts or Options()).replace(arch=arch)
    text = _text(body, arch)
    line = _consumer_line(text)
    p = planned(text, opts, "case.s")
    full = check_function(p.func, opts)
    assert full.ok and full.complete, format_result(full, "case.s")
    needed = _case(p, arch, counter, line)
    assert needed, f"the pass plans no {counter} wait before line {line}"
    for w in needed:
        p.drop(w)
    weak = check_function(p.func, opts)
    hits = [v for v in weak.violations if v.consumer.line == line and v.rule == rule and counter in v.needs]
    assert hits, format_result(weak, "case.s")
    assert hits[0].path == path
    if producer is not None:
        assert hits[0].producer.mnemonic == producer
    p.restore()
    assert check_function(p.func, opts).ok


# ------------------------------------------------------------------ issue 12, "What was measured"

WAW = {
    "vmem": ({"gfx1250": "global_load_b32 v1, v[2:3], off", "gfx1200": "global_load_b32 v1, v[2:3], off",
              "gfx942": "global_load_dword v1, v[2:3], off"},
             "v_mov_b32_e32 v1, 0 // <-\nv_add_f32_e32 v7, v1, v1", {"gfx942": "vmcnt"}, "loadcnt"),
    "smem": ({"gfx1250": "s_load_b32 s4, s[0:1], 0x0", "gfx1200": "s_load_b32 s4, s[0:1], 0x0",
              "gfx942": "s_load_dword s4, s[0:1], 0x0"},
             "s_mov_b32 s4, 0 // <-\ns_add_u32 s5, s4, 1", {"gfx942": "lgkmcnt"}, "kmcnt"),
    "ds": ({"gfx1250": "ds_load_b32 v8, v0", "gfx1200": "ds_load_b32 v8, v0", "gfx942": "ds_read_b32 v8, v0"},
           "v_mov_b32_e32 v8, 1 // <-\nv_add_f32_e32 v7, v8, v8", {"gfx942": "lgkmcnt"}, "dscnt"),
}


@pytest.mark.parametrize("arch", ["gfx1250", "gfx1200", "gfx942"])
@pytest.mark.parametrize("kind", sorted(WAW))
def test_register_waw(kind: str, arch: str):
    loads, rest, counters, default = WAW[kind]
    run_case(loads[arch] + "\n" + rest, arch, "waw", counters.get(arch, default))


@pytest.mark.parametrize("body", [
    "global_store_b32 v[4:5], v8, off\nv_mov_b32_e32 v8, 1 // <-",          # store data
    "global_load_b32 v1, v[2:3], off\nv_mov_b32_e32 v2, 0 // <-",           # load address
    "s_load_b32 s4, s[0:1], 0x0\ns_mov_b32 s0, 0 // <-",                    # s_load base
], ids=["store-data", "load-address", "sload-base"])
def test_gfx1250_xcnt(body: str):
    run_case(body, "gfx1250", "war", "xcnt")


def test_lds_waw_behind_tensor_fill():
    body = """tensor_load_to_lds s[0:3], s[4:11] // st.token:2
    ds_store_b32 v1, v2 // st.token:2 // <-
    ds_load_b32 v3, v1 // st.token:2
    v_add_f32_e32 v4, v3, v3"""
    run_case(body, "gfx1250", "lds-waw", "tensorcnt", Options(num_waves=1))


@pytest.mark.parametrize("fill, counter", [("tensor_load_to_lds s[0:3], s[4:11]", "tensorcnt"),
                                           ("ds_store_b32 v1, v2", "dscnt")])
def test_barrier_publishes_in_flight_lds(fill: str, counter: str):
    body = f"""{fill} // st.token:2
    s_barrier_signal -1 // st.token:2 // <-
    s_barrier_wait -1 // st.token:2
    ds_load_b32 v3, v1 // st.token:2
    v_add_f32_e32 v4, v3, v3"""
    run_case(body, "gfx1250", "barrier", counter, Options(num_waves=4))


LOOP_FILL = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
k:
  s_mov_b32 s2, 0
.Lloop:
  ds_load_b32 v3, v1 // st.token:0
  v_add_f32_e32 v4, v3, v3
  tensor_load_to_lds s[8:11], s[4:11] // st.token:0
  s_add_u32 s2, s2, 1
  s_cmp_lt_u32 s2, 8
  s_cbranch_scc1 .Lloop
  s_wait_tensorcnt 0
  s_endpgm
"""


@pytest.mark.parametrize("freeze", [False, True])
def test_loop_carried_tensor_raw(freeze: bool):
    """With the tensor freeze (`enable_loop_carried_token_deps=False`) the pass plans no
    tensor wait for the previous trip's fill; the checker finds it through the back edge."""
    opts = Options(num_waves=1, enable_loop_carried_token_deps=not freeze)
    p = planned(LOOP_FILL, opts, "loop.s")
    res = check_function(p.func, opts)
    if not freeze:
        assert res.ok and res.complete, format_result(res, "loop.s")
        return
    v = [x for x in res.violations if x.rule == "lds-raw"]
    assert v and v[0].consumer.line == 6 and v[0].producer.line == 8 and v[0].needs == {"tensorcnt": 0}
    assert v[0].path == ("k", ".Lloop", ".Lloop")


# ------------------------------------------------------------------ issue 11, minimal cases 1-8

@pytest.mark.parametrize("arch", ["gfx1250", "gfx1200"])
def test_scratch_load(arch: str):
    run_case("scratch_load_b32 v1, v0, s0\nv_mov_b32_e32 v2, v1 // <-", arch, "raw", "loadcnt")


@pytest.mark.parametrize("arch", ["gfx1250", "gfx1200"])
@pytest.mark.parametrize("counter", ["loadcnt", "dscnt"])
def test_flat_load_needs_loadcnt_and_dscnt(arch: str, counter: str):
    run_case("flat_load_b32 v2, v[0:1]\nv_add_f32_e32 v3, v2, v2 // <-", arch, "raw", counter)


def test_cluster_load_asm():
    run_case("cluster_load_b32 v4, v[0:1], off\nv_add_f32_e32 v3, v4, v4 // <-", "gfx1250", "raw", "loadcnt")


def test_cluster_load_stir():
    text = """st.func @k() {
^entry:
  v4 = "st.cluster_load_b32"(v[0:1])
  v3 = "st.v_add_f32"(v4, v4)
}
"""
    opts = Options()
    p = planned(text, opts, "c.stir")
    assert check_function(p.func, opts).ok
    for w in _case(p, "gfx1250", "loadcnt", 4):
        p.drop(w)
    v = check_function(p.func, opts).violations
    assert [(x.rule, x.consumer.line, x.needs) for x in v] == [("raw", 4, {"loadcnt": 0})]


TENSOR_STORE = """ds_store_b128 v0, v[4:7]{m1}
tensor_store_from_lds s[0:3], s[4:11]{m2}
ds_store_b128 v0, v[8:11]{m3}"""


@pytest.mark.parametrize("at, rule, counter", [(2, "lds-raw", "dscnt"), (3, "lds-war", "tensorcnt")])
def test_tensor_store_between_ds_stores(at: int, rule: str, counter: str):
    marks = {f"m{i}": (" // <-" if i == at else "") for i in (1, 2, 3)}
    run_case(TENSOR_STORE.format(**marks), "gfx1250", rule, counter)


@pytest.mark.parametrize("body", [
    "s_get_barrier_state s2, -1\ns_add_u32 s3, s2, 1 // <-",
    "s_sendmsg_rtn_b32 s5, sendmsg(MSG_RTN_GET_DOORBELL)\ns_add_u32 s3, s5, 1 // <-",
    "s_barrier_signal_isfirst -1\ns_cselect_b32 s6, 1, 0 // <-",
], ids=["get-barrier-state", "sendmsg-rtn", "isfirst-scc"])
def test_km_results(body: str):
    run_case(body, "gfx1250", "raw", "kmcnt")


def test_barrier_leave_scc():
    run_case("s_barrier_leave\ns_cselect_b32 s6, 1, 0 // <-", "gfx1250", "raw", "kmcnt")


@pytest.mark.parametrize("load, counter", [
    ("image_load v[0:3], v[4:5], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D", "loadcnt"),
    ("image_sample v[0:3], v4, s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_1D", "samplecnt"),
    ("image_bvh_intersect_ray v[0:3], [v4, v5, v[6:8], v[9:11]], s[0:3]", "bvhcnt"),
], ids=["load", "sample", "bvh"])
def test_gfx1200_images(load: str, counter: str):
    run_case(f"{load}\nv_add_f32_e32 v20, v1, v1 // <-", "gfx1200", "raw", counter)


def test_async_load_then_ds_load():
    run_case("global_load_async_to_lds_b32 v1, v0, s[0:1]\nds_load_b32 v2, v1 // <-", "gfx1250", "lds-raw",
             "asynccnt")


@pytest.mark.parametrize("arch, ret", [("gfx1250", "s_set_pc_i64 s[30:31]"), ("gfx1200", "s_setpc_b64 s[30:31]")])
def test_return_with_load_in_flight(arch: str, ret: str):
    run_case(f"global_load_b32 v9, v[0:1], off\n{ret} // <-", arch, "return", "loadcnt")


def test_call_target_loaded_by_smem():
    run_case("s_load_b64 s[0:1], s[4:5], 0x0\ns_swap_pc_i64 s[30:31], s[0:1] // <-", "gfx1250", "raw", "kmcnt")


# ------------------------------------------------------------------ pass findings

SELF_WAW = """.amdgcn_target "amdgcn-amd-amdhsa--{arch}"
.text
k:
.Lloop:
  {load}
  s_cmp_eq_u32 s13, 1
  s_cbranch_scc1 .Lloop
  s_endpgm
"""


@pytest.mark.parametrize("arch, load", [("gfx1250", "s_load_b32 s20, s[0:1], 0x0"),
                                        ("gfx1200", "global_load_b32 v1, v[42:43], off")])
def test_loop_self_waw(arch: str, load: str):
    opts = Options(arch=arch)
    p = planned(SELF_WAW.format(arch=arch, load=load), opts, "self.s")
    res = check_function(p.func, opts)
    assert res.ok, format_result(res, "self.s")
