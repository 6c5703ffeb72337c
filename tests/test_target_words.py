"""The target model's words for what is in flight (`Target.timeline_counter`, `op_kind`,
`shares_counter`): what the editors and the CLI show comes from here, per target family."""

from __future__ import annotations

import pytest

from stinkywait_core.targets import get_target


@pytest.mark.parametrize("cpu,ds,load,km", [("gfx900", "lgkmcnt", "vmcnt", "lgkmcnt"),
                                            ("gfx942", "lgkmcnt", "vmcnt", "lgkmcnt"),
                                            ("gfx1030", "lgkmcnt", "vmcnt", "lgkmcnt"),
                                            ("gfx1100", "lgkmcnt", "vmcnt", "lgkmcnt"),
                                            ("gfx1200", "dscnt", "loadcnt", "kmcnt"),
                                            ("gfx1250", "dscnt", "loadcnt", "kmcnt")])
def test_each_family_names_its_own_counters(cpu, ds, load, km):
    t = get_target(cpu, "hw")
    assert (t.timeline_counter("ds"), t.timeline_counter("load"), t.timeline_counter("km")) == (ds, load, km)
    # LDS and SMEM share one counter on gfx9-11 only
    assert t.shares_counter("ds") == (ds == "lgkmcnt")


def test_kinds_say_what_completes_out_of_order():
    gfx9, gfx12 = get_target("gfx942", "hw"), get_target("gfx1250", "hw")
    assert gfx9.op_kind("ds", "ds_read_b128") == "LDS"
    assert gfx9.op_kind("km", "s_load_dwordx4") == "SMEM, out of order"
    assert gfx9.op_kind("km", "s_sendmsg_rtn_b32") == "message, out of order"
    # gfx9 counts stores with the loads on vmcnt, in issue order
    assert gfx9.op_kind("load", "buffer_store_dword") == "VMEM"
    assert gfx12.op_kind("load", "global_load_b128") == "VMEM load"
    assert gfx12.timeline_in_order("ds") and not gfx12.timeline_in_order("km")
    # gfx1250's xcnt: VMEM and SMEM address translation on one counter
    assert gfx12.timeline_counter("xcnt-smem") == "xcnt" and gfx12.shares_counter("xcnt")
    assert gfx12.op_kind("xcnt-smem", "s_load_b64") == "SMEM, out of order"
