"""The minimal cases of issues 11 and 12, each as the wait the hardware needs.

Each case is a few lines of assembly with the wait (counter, value, place) the GPU needs and,
where LLVM 22 models the hazard, the wait LLVM's SIInsertWaitcnts puts there
(`tests/test_target_oracle.py` and `tests/test_llvm_peer.py` hold the table and whole
kernels against llc-22 itself).  The expectations are the hardware facts of
../shared/research/targets.md; the planner must reach them from the instruction table.
"""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options


def _kernel(body: str, cpu: str = "gfx1250") -> str:
    lines = "\n".join(f"  {ln.strip()}" for ln in body.strip().splitlines())
    return f'.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\nk:\n{lines}\n  s_endpgm\n'


def waits(body: str, cpu: str = "gfx1250", **opts) -> list[tuple[str, int, str]]:
    """[(wait text, anchor line, anchor mnemonic)] planned for a kernel body (line 3 = first)."""
    text = _kernel(body, cpu)
    an = analyze(text, "k.s", Options(**opts))
    assert not an.has_errors(), [d.message for d in an.diagnostics]
    lines = text.splitlines()
    out = []
    for w in an.waits():
        anchor = lines[w.line - 1].split()[0] if w.placement == "before" else "(end)"
        out.append((w.instruction, w.line, anchor))
    return out


def inserted(body: str, cpu: str = "gfx1250", **opts) -> str:
    an = analyze(_kernel(body, cpu), "k.s", Options(**opts))
    return an.inserted_text()


# --- issue 11: every instruction classified -------------------------------------------------

def test_scratch_load_is_counted_on_loadcnt():
    assert waits("scratch_load_b32 v1, v0, s0\nv_mov_b32 v2, v1") == [("s_wait_loadcnt 0", 4, "v_mov_b32")]


def test_flat_load_waits_for_loads_and_lds():
    # a generic address may be LDS: counted on both (LLVM: s_wait_loadcnt_dscnt 0x0)
    assert "s_wait_loadcnt_dscnt 0x0\n  v_mov_b32 v3, v2" in inserted("flat_load_b32 v2, v[0:1]\nv_mov_b32 v3, v2")


def test_cluster_load_is_tracked():
    assert waits("cluster_load_b32 v1, v[2:3], off\nv_add_f32 v4, v1, v1") == [
        ("s_wait_loadcnt 0", 4, "v_add_f32")]


def test_tensor_store_from_lds_between_ds_stores():
    got = waits("""ds_store_b128 v0, v[4:7]
                   tensor_store_from_lds s[0:3], s[4:11]
                   ds_store_b128 v0, v[8:11]""")
    assert ("s_wait_dscnt 0", 4, "tensor_store_from_lds") in got
    assert ("s_wait_tensorcnt 0", 5, "ds_store_b128") in got


@pytest.mark.parametrize("producer, reader", [
    ("s_get_barrier_state s2, -1", "s_add_u32 s3, s2, 1"),
    ("s_sendmsg_rtn_b32 s2, sendmsg(MSG_RTN_GET_DOORBELL)", "s_add_u32 s3, s2, 1"),
    ("s_barrier_signal_isfirst -1", "s_cselect_b32 s3, 1, 0"),
])
def test_kmcnt_results_other_than_scalar_loads(producer: str, reader: str):
    assert waits(f"{producer}\n{reader}") == [("s_wait_kmcnt 0", 4, reader.split()[0])]


def test_gfx1200_image_counters():
    got = waits("""image_load v[0:3], v[4:5], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D
                   image_sample v[8:11], v[4:5], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D
                   image_bvh_intersect_ray v[12:15], [v16, v17, v[18:20], v[21:23], v[24:26]], s[0:3]
                   v_add_f32 v30, v0, v8
                   v_add_f32 v31, v12, v12""", cpu="gfx1200")
    assert [w[0] for w in got] == ["s_wait_loadcnt 0", "s_wait_samplecnt 0", "s_wait_bvhcnt 0"]


def test_async_load_to_lds_then_ds_load():
    assert waits("global_load_async_to_lds_b32 v1, v0, s[0:1]\nds_load_b32 v2, v1") == [
        ("s_wait_asynccnt 0", 4, "ds_load_b32")]


def test_return_drains_outstanding_loads_not_stores():
    # LLVM: all-zero but storecnt at a return; the store's source registers are still being
    # translated (the caller may overwrite them): xcnt 0
    assert waits("""global_load_b32 v1, v[2:3], off
                    global_store_b32 v[4:5], v6, off
                    s_set_pc_i64 s[30:31]""") == [("s_wait_loadcnt 0", 5, "s_set_pc_i64"),
                                                   ("s_wait_xcnt 0", 5, "s_set_pc_i64")]
    # a load retired by loadcnt 0 has been translated: no xcnt wait with it
    assert waits("global_load_b32 v1, v[2:3], off\ns_set_pc_i64 s[30:31]") == [("s_wait_loadcnt 0", 4, "s_set_pc_i64")]


def test_retired_load_needs_no_xcnt_for_its_address():
    assert waits("""global_load_b32 v1, v[4:5], off
                    v_add_f32 v2, v1, v1
                    v_mov_b32_e32 v4, 1""") == [("s_wait_loadcnt 0", 4, "v_add_f32")]


def test_function_falling_off_its_end_drains_like_a_return():
    an = analyze(".text\nf:\n  global_load_b32 v1, v[2:3], off\n", "f.s", Options())
    (w,) = an.waits()
    assert (w.instruction, w.placement, w.rule) == ("s_wait_loadcnt 0", "after", "return")


def test_wait_goes_before_the_clause():
    text = inserted("""global_load_b32 v1, v[2:3], off
                       s_clause 0x1
                       global_load_b32 v4, v[6:7], off
                       global_store_b32 v[8:9], v1, off""")
    # the store depends on a load from before the clause: wait before s_clause, never inside
    assert "s_wait_loadcnt 0\n  s_clause 0x1" in text


def test_unsupported_target_is_a_located_error():
    an = analyze('.amdgcn_target "amdgcn-amd-amdhsa--gfx803"\nk:\n  s_endpgm\n', "k.s", Options())
    (d,) = [d for d in an.diagnostics if d.code == "unsupported-target"]
    assert d.severity == "error" and d.line == 1 and "gfx942" in d.message
    assert not an.waits()


# --- issue 12: safe on the GPU, not only by the spec --------------------------------------

@pytest.mark.parametrize("cpu", ["gfx1250", "gfx1200", "gfx942"])
def test_register_waw_behind_a_vmem_load(cpu: str):
    got = waits("""global_load_b32 v1, v[2:3], off
                   v_mov_b32_e32 v1, 0
                   v_add_f32_e32 v7, v1, v1""", cpu=cpu)
    assert len(got) == 1 and got[0][1:] == (4, "v_mov_b32_e32")
    assert got[0][0] in ("s_wait_loadcnt 0", "s_waitcnt vmcnt(0)")


def test_register_waw_behind_smem_and_ds():
    assert waits("s_load_b32 s4, s[0:1], 0x0\ns_mov_b32 s4, 0") == [("s_wait_kmcnt 0", 4, "s_mov_b32")]
    assert waits("ds_load_b32 v8, v0\nv_mov_b32 v8, 1") == [("s_wait_dscnt 0", 4, "v_mov_b32")]


def test_lds_returns_in_order_so_two_ds_loads_into_one_register_need_no_wait():
    assert waits("ds_load_b128 v[8:11], v0\nds_load_b128 v[8:11], v1") == []


def test_two_vmem_loads_into_one_vgpr():
    # gfx12+: results may return out of order (AMDGPUUsage GFX125x); gfx9-11 write in order
    assert [w[0] for w in waits("global_load_b32 v1, v[2:3], off\nglobal_load_b32 v1, v[4:5], off")] == [
        "s_wait_loadcnt 0"]
    assert waits("global_load_dword v1, v[2:3], off\nglobal_load_dword v1, v[4:5], off", cpu="gfx942") == []


@pytest.mark.parametrize("body, line", [
    ("global_store_b32 v[4:5], v8, off\nv_mov_b32_e32 v8, 1", 4),          # store data
    ("global_load_b32 v1, v[4:5], off\nv_mov_b32_e32 v4, 1", 4),            # load address
    ("s_load_b32 s4, s[6:7], 0x0\ns_mov_b32 s6, 0", 4),                     # s_load base
])
def test_gfx1250_xcnt_war_on_sources_of_in_flight_ops(body: str, line: int):
    got = waits(body)
    assert ("s_wait_xcnt 0", line, body.splitlines()[1].split()[0]) in got


def test_no_xcnt_when_the_overwriter_is_vmem_itself():
    # VMEM translations complete in order: a later VMEM op writing the address is safe
    got = waits("global_load_b32 v10, v[4:5], off\nglobal_load_b32 v4, v[6:7], off")
    assert not [w for w in got if "xcnt" in w[0]]


def test_no_xcnt_on_gfx1200():
    assert waits("global_store_b32 v[4:5], v8, off\nv_mov_b32_e32 v8, 1", cpu="gfx1200") == []


def test_lds_waw_behind_an_in_flight_tensor_fill():
    got = waits("""tensor_load_to_lds s[0:3], s[8:15] // st.token:2
                   ds_store_b32 v0, v1 // st.token:2
                   ds_load_b32 v2, v0 // st.token:2""", num_waves=1)
    assert ("s_wait_tensorcnt 0", 4, "ds_store_b32") in got


def test_disjoint_tokens_need_no_lds_wait():
    assert waits("""tensor_load_to_lds s[0:3], s[8:15] // st.token:2
                    ds_store_b32 v0, v1 // st.token:3""", num_waves=1) == []


def test_loop_carried_tensor_fill_is_waited_for_by_default():
    body = """s_mov_b32 s20, 4
              loop:
              ds_load_b32 v2, v0 // st.token:1
              v_add_f32 v3, v2, v2
              tensor_load_to_lds s[0:3], s[8:15] // st.token:1
              s_sub_u32 s20, s20, 1
              s_cbranch_scc1 loop"""
    got = waits(body, num_waves=1)
    assert any(w[0] == "s_wait_tensorcnt 0" and w[2] == "ds_load_b32" for w in got)
    # upstream's tensor freeze (an option) misses the previous trip's fill
    frozen = waits(body, num_waves=1, enable_loop_carried_token_deps=False)
    assert not any("tensorcnt" in w[0] for w in frozen)
