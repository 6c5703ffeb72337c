"""The spec's four worked examples are contract: exact waits, exact places."""

from __future__ import annotations

from stinkywait_core.api import analyze
from stinkywait_core.results import Options


def _plan(text: str, **kw) -> list[tuple[str, int, str]]:
    """(block, anchor line, instruction) for every planned wait, in text order."""
    an = analyze(text, "t.stir", Options(**kw))
    assert not an.has_errors(), [d.message for d in an.diagnostics]
    return [(w.block, w.line, w.instruction) for w in an.waits()]


# The spec's text addresses the loads with v8..v11, which the third load overwrites (v[8:11]);
# a real RAW on v11 would then need a wait before the fourth load.  The documented waits are
# for non-aliasing addresses, so the addresses here are v40..v43 (docs/decisions.md).
WMMA = """st.func @wmma() {
^label_LoopBeginL:
  v[0:3] = "st.ds_load_b128"(v40)
  v[4:7] = "st.ds_load_b128"(v41)
  v[8:11] = "st.ds_load_b128"(v42)
  v[12:15] = "st.ds_load_b128"(v43)
  v[16:23] = "st.v_wmma_f32_16x16x32_bf16"(v[0:3], v[4:7], v[16:23])
  v[24:31] = "st.v_wmma_f32_16x16x32_bf16"(v[8:11], v[12:15], v[24:31])
}
"""


def test_ds_reads_consumed_by_wmma():
    assert _plan(WMMA) == [("label_LoopBeginL", 7, "s_wait_dscnt 2"),
                           ("label_LoopBeginL", 8, "s_wait_dscnt 0")]


def test_ds_reads_wmma_count_from_provenance():
    an = analyze(WMMA, "t.stir")
    first, second = an.waits()
    assert sorted((d.line, d.count_from) for d in first.deps) == [(3, 4), (4, 3)]
    assert sorted((d.line, d.count_from) for d in second.deps) == [(5, 2), (6, 1)]
    assert first.rule == "RAW"


WAR = """st.func @war() {
^entry:
  v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [0] } }
  v[2:3] = "st.ds_load_b64"(v11) { mod.memtoken = { tokens = [0] } }
  "st.s_branch"("body")
  Successors: ^body
^body:
  "st.tensor_load_to_lds"(s[0:3], s[8:15]) { mod.memtoken = { tokens = [0] } }
}
"""


def test_war_on_lds_across_cfg_edge():
    assert _plan(WAR) == [("body", 8, "s_wait_dscnt 0")]
    w = analyze(WAR, "t.stir").waits()[0]
    assert w.rule == "WAR"
    assert {d.line for d in w.deps} == {4}


DIAMOND = """st.func @diamond() {
^entry:
  "st.tensor_load_to_lds"(s[0:3], s[8:15]) { mod.memtoken = { tokens = [11] } }
  SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
  "st.s_cbranch_scc1"("p_shallow", SCC0)
  Successors: ^p_shallow, ^p_deep
^p_shallow:
  "st.s_branch"("merge")
  Successors: ^merge
^p_deep:
  "st.tensor_load_to_lds"(s[0:3], s[16:23]) { mod.memtoken = { tokens = [12] } }
  "st.tensor_load_to_lds"(s[0:3], s[24:31]) { mod.memtoken = { tokens = [12] } }
  "st.s_branch"("merge")
  Successors: ^merge
^merge:
  "st.s_barrier"() { mod.memtoken = { tokens = [11] } }
  "st.s_barrier"() { mod.memtoken = { tokens = [12] } }
}
"""


def test_multi_anchor_diamond_with_promotion():
    assert _plan(DIAMOND, num_waves=4) == [
        ("p_shallow", 8, "s_wait_tensorcnt 0"),      # tail drain before the branch
        ("merge", 16, "s_wait_tensorcnt 2"),         # relaxed merge wait for token 11
        ("merge", 17, "s_wait_tensorcnt 0"),         # added by finalizePlan for token 12
    ]


def test_multi_anchor_diamond_without_optimizer():
    assert _plan(DIAMOND, num_waves=4, optimize=False) == [("merge", 16, "s_wait_tensorcnt 0")]


def test_multi_anchor_diamond_inserted_text_order():
    text = analyze(DIAMOND, "t.stir", Options(num_waves=4)).inserted_text()
    lines = [ln.strip() for ln in text.splitlines()]
    i = lines.index("^p_shallow:")
    assert lines[i + 1].startswith('"st.s_wait_tensorcnt"(0)')
    assert lines[i + 2] == '"st.s_branch"("merge")'
    j = lines.index("^merge:")
    assert lines[j + 1].startswith('"st.s_wait_tensorcnt"(2)')
    assert "tlcnt = 2" in lines[j + 1]
    assert lines[j + 3].startswith('"st.s_wait_tensorcnt"(0)')


TAIL = """st.func @tail() {
^entry:
  "st.tensor_load_to_lds"(s[0:3], s[8:15]) { mod.memtoken = { tokens = [0] } }
  SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
  "st.s_cbranch_scc1"("B", SCC0)
  Successors: ^B, ^A
^A:
  "st.tensor_load_to_lds"(s[0:3], s[16:23]) { mod.memtoken = { tokens = [1] } }
  "st.tensor_load_to_lds"(s[0:3], s[24:31]) { mod.memtoken = { tokens = [1] } }
  "st.s_branch"("merge")
  Successors: ^merge
^B:
  "st.s_branch"("merge")
  Successors: ^merge
^merge:
  v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [0] } }
}
"""


def test_per_path_tail_compensation_single_wave():
    # The tensor RAW drains at the ds_load itself only with NumWaves == 1 (newest upstream).
    assert _plan(TAIL, num_waves=1) == [("B", 13, "s_wait_tensorcnt 0"),
                                       ("merge", 16, "s_wait_tensorcnt 2")]


def test_per_path_tail_compensation_multi_wave_has_no_tensor_wait_at_ds_load():
    # upstream's NumWaves policy, as the spec writes it (the upstream model keeps it) ...
    assert _plan(TAIL, num_waves=4, model="upstream") == []
    # ... while the hardware model waits for a fill its own wave reads with no barrier between,
    # whatever NumWaves is (issue 19 item 4, docs/decisions.md 32): the single-wave plan
    assert _plan(TAIL, num_waves=4) == _plan(TAIL, num_waves=1)


def test_redundancy_elision_arithmetic():
    # after s_wait_dscnt 2 and two more DS issues, a requirement of 3 still needs a wait
    text = """st.func @e() {
^entry:
  v0 = "st.ds_load_b32"(v10)
  v1 = "st.ds_load_b32"(v10)
  v2 = "st.ds_load_b32"(v10)
  v3 = "st.ds_load_b32"(v10)
  v4 = "st.ds_load_b32"(v10)
  v20 = "st.v_add_f32"(v2, v2)
  v5 = "st.ds_load_b32"(v10)
  v6 = "st.ds_load_b32"(v10)
  v21 = "st.v_add_f32"(v3, v3)
}
"""
    assert _plan(text) == [("entry", 8, "s_wait_dscnt 2"), ("entry", 11, "s_wait_dscnt 3")]
