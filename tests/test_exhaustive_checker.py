"""Hand-written cases for the exact checker (validate.exhaustive).

Every case is a small STIR function whose safety is decided by hand from the hardware model
in the checker's docstring; most come in pairs (a placement that is exactly enough, and the
next weaker one) so a checker that is too lax or too strict fails one of them.
"""

from __future__ import annotations

import re


from stinkywait_core.analysis.classify import CK_ASYNC, CK_DS, CK_KM, CK_LOAD, CK_TENSOR
from stinkywait_core.results import Options
from stinkywait_core.syntax.stir_parser import parse_stir
from stinkywait_core.validate.exhaustive import (
    CheckResult, check_function, format_result, format_violation, wait_effects,
)


def _func(body: str):
    """Parse one `st.func` written with `|`-free indentation-insensitive blocks."""
    text = "st.func @t() {\n" + "\n".join(line.strip() for line in body.strip().splitlines()) + "\n}\n"
    mod = parse_stir(text, "t.stir")
    assert len(mod.functions) == 1, mod.diagnostics
    return mod.functions[0]


def check(body: str, num_waves: int = 0, **kw) -> CheckResult:
    return check_function(_func(body), Options(num_waves=num_waves), **kw)


def only(res: CheckResult):
    assert len(res.violations) == 1, [format_violation(v, "t") for v in res.violations]
    return res.violations[0]


# ------------------------------------------------------------------ register RAW, in order

FOUR_DS = """
^entry:
v[20:21] = "st.ds_load_b64"(v0)
v[22:23] = "st.ds_load_b64"(v0)
v[24:25] = "st.ds_load_b64"(v0)
v[26:27] = "st.ds_load_b64"(v0)
{wait}
v[40:47] = "st.v_wmma_f32_16x16x32_bf16"(v[20:23], v[40:47])
"""


def test_exact_wait_is_enough():
    res = check(FOUR_DS.format(wait='"st.s_wait_dscnt"(2)'))
    assert res.ok and res.complete


def test_next_weaker_wait_is_a_violation():
    v = only(check(FOUR_DS.format(wait='"st.s_wait_dscnt"(3)')))
    assert (v.rule, v.counter, v.required, v.present) == ("raw", CK_DS, 2, 3)
    assert v.producer.line == 4 and v.consumer.line == 8
    assert v.path == ("entry",)


def test_two_producers_are_two_violations():
    res = check(FOUR_DS.format(wait=""))
    # loads at lines 3 and 4 (v[20:21], v[22:23]) feed the WMMA
    assert sorted((x.producer.line, x.required) for x in res.violations) == [(3, 3), (4, 2)]


def test_plain_redefinition_ends_the_dependency():
    res = check("""
    ^entry:
    v0 = "st.ds_load_b32"(v9)
    v0 = "st.v_mov_b32"(v5)
    v1 = "st.v_add_f32"(v0, v0)
    """)
    assert res.ok


def test_ds_store_reading_ds_load_result_needs_wait():
    v = only(check("""
    ^entry:
    v0 = "st.ds_load_b32"(v9)
    "st.ds_store_b32"(v8, v0)
    """))
    assert (v.rule, v.counter, v.required) == ("raw", CK_DS, 0)


def test_partial_unit_overlap():
    """A 64-bit load writes two units; reading only the high one still depends on it."""
    v = only(check("""
    ^entry:
    v[4:5] = "st.global_load_b64"(v[30:31])
    v[6:7] = "st.global_load_b64"(v[30:31])
    v1 = "st.v_add_f32"(v5, v9)
    """))
    assert (v.counter, v.required, v.detail) == (CK_LOAD, 1, "v5")


# ------------------------------------------------------------------ KM out of order

KM = """
^entry:
s[8:9] = "st.s_load_b64"(s[0:1])
s[10:11] = "st.s_load_b64"(s[0:1])
{wait}
s20 = "st.s_add_u32"(s8, s9)
"""


def test_km_nonzero_wait_proves_nothing():
    v = only(check(KM.format(wait='"st.s_wait_kmcnt"(1)')))
    assert (v.counter, v.required, v.present) == (CK_KM, 0, 1)


def test_km_nonzero_wait_even_for_newest():
    """kmcnt 1 with the *newest* load consumed: in order it would be fine, out of order not."""
    res = check(KM.format(wait='"st.s_wait_kmcnt"(1)').replace("(s8, s9)", "(s10, s11)"))
    assert only(res).counter == CK_KM


def test_km_zero_is_enough():
    assert check(KM.format(wait='"st.s_wait_kmcnt"(0)')).ok


# ------------------------------------------------------------------ saturation beyond 64

def _many_loads(n: int, wait: int, use: int) -> str:
    lines = ["^entry:"]
    for i in range(n):
        lines.append(f'v{i} = "st.ds_load_b32"(v200)')
    lines.append(f'"st.s_wait_dscnt"({wait})')
    lines.append(f'v210 = "st.v_add_f32"(v{use}, v201)')
    return "\n".join(lines)


def test_saturation_wait_63_retires_oldest_seven_of_seventy():
    assert check(_many_loads(70, 63, 6)).ok


def test_saturation_wait_63_does_not_retire_the_eighth():
    v = only(check(_many_loads(70, 63, 7)))
    assert (v.required, v.present) == (62, 63)


def test_required_is_clamped_to_63():
    v = only(check(_many_loads(70, 65, 5)))  # 64 newer loads remain after the wait
    assert v.required == 63


def test_hw_stall_model_is_opt_in():
    assert not check(_many_loads(70, 100, 3)).ok
    assert check(_many_loads(70, 100, 3), hw_max_outstanding=64).ok  # loads 0..5 retired by stalls
    assert not check(_many_loads(70, 100, 6), hw_max_outstanding=64).ok


# ------------------------------------------------------------------ diamonds

DIAMOND = """
^entry:
v0 = "st.buffer_load_b32"(v9, s[0:3])
SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
"st.s_cbranch_scc1"("left", SCC0)
Successors: ^left, ^right
^right:
v1 = "st.buffer_load_b32"(v9, s[0:3])
v2 = "st.buffer_load_b32"(v9, s[0:3])
{right_wait}
"st.s_branch"("merge")
Successors: ^merge
^left:
{left_wait}
"st.s_branch"("merge")
Successors: ^merge
^merge:
{merge_wait}
v3 = "st.v_add_f32"(v0, v0)
"""


def test_diamond_deep_path_wait_relaxed_with_shallow_tail_drain():
    res = check(DIAMOND.format(right_wait="", left_wait='"st.s_wait_loadcnt"(0)',
                               merge_wait='"st.s_wait_loadcnt"(2)'))
    assert res.ok and res.complete and res.paths == 2


def test_diamond_missing_shallow_drain_exposed_on_that_path():
    v = only(check(DIAMOND.format(right_wait="", left_wait="", merge_wait='"st.s_wait_loadcnt"(2)')))
    assert v.path == ("entry", "left", "merge")
    assert (v.required, v.present) == (0, 2)


def test_diamond_merge_wait_too_weak_on_deep_path():
    v = only(check(DIAMOND.format(right_wait="", left_wait='"st.s_wait_loadcnt"(0)',
                                  merge_wait='"st.s_wait_loadcnt"(3)')))
    assert v.path == ("entry", "right", "merge")
    assert (v.required, v.present) == (2, 3)


def test_nested_diamond_paths_counted():
    res = check("""
    ^entry:
    v0 = "st.ds_load_b32"(v9)
    "st.s_cbranch_scc1"("a", SCC0)
    Successors: ^a, ^b
    ^a:
    "st.s_cbranch_scc1"("a2", SCC0)
    Successors: ^a1, ^a2
    ^a1:
    v5 = "st.ds_load_b32"(v9)
    Successors: ^aj
    ^a2:
    Successors: ^aj
    ^aj:
    Successors: ^j
    ^b:
    "st.s_wait_dscnt"(0)
    Successors: ^j
    ^j:
    "st.s_wait_dscnt"(1)
    v1 = "st.v_add_f32"(v0, v0)
    """)
    v = only(res)
    assert v.path == ("entry", "a", "a2", "aj", "j")
    assert res.paths == 3


# ------------------------------------------------------------------ loops

LOOP = """
^entry:
v0 = "st.ds_load_b32"(v9)
"st.s_wait_dscnt"(0)
Successors: ^loop
^loop:
{top_wait}
v1 = "st.v_add_f32"(v0, v1)
v0 = "st.ds_load_b32"(v9)
v2 = "st.ds_load_b32"(v9)
"st.s_cbranch_scc1"("loop", SCC0)
Successors: ^loop, ^exit
^exit:
"""


def test_load_crossing_back_edge_needs_wait_at_top():
    v = only(check(LOOP.format(top_wait="")))
    assert v.path == ("entry", "loop", "loop")
    assert (v.required, v.present) == (1, None)


def test_loop_wait_at_top_is_proved_for_all_trips():
    """The header state repeats from the 3rd trip on, so memoisation closes the loop."""
    res = check(LOOP.format(top_wait='"st.s_wait_dscnt"(1)'), max_trips=3)
    assert res.ok
    assert res.complete, res.notice
    short = check(LOOP.format(top_wait='"st.s_wait_dscnt"(1)'), max_trips=2)
    assert short.ok and short.trip_cut and not short.complete


def test_loop_wait_too_weak():
    v = only(check(LOOP.format(top_wait='"st.s_wait_dscnt"(2)')))
    assert v.present == 2 and v.required == 1


def test_newest_dynamic_instance_is_the_dependency():
    """Two instances of one static load are in flight; the consumer needs the newer one."""
    res = check("""
    ^entry:
    Successors: ^loop
    ^loop:
    v0 = "st.ds_load_b32"(v9)
    "st.s_cbranch_scc1"("loop", SCC0)
    Successors: ^loop, ^exit
    ^exit:
    "st.s_wait_dscnt"(1)
    v1 = "st.v_add_f32"(v0, v0)
    """, max_trips=2)
    v = only(res)
    assert v.path == ("entry", "loop", "loop", "exit")
    assert v.required == 0
    assert res.trip_cut and not res.complete and "max_trips" in res.notice


def test_trip_bound_hides_back_edge_with_one_trip():
    res = check(LOOP.format(top_wait=""), max_trips=1)
    assert res.ok and res.trip_cut and not res.complete and "max_trips" in res.notice
    assert not check(LOOP.format(top_wait=""), max_trips=2).ok


NESTED = """
^entry:
Successors: ^outer
^outer:
v0 = "st.ds_load_b32"(v9)
Successors: ^inner
^inner:
{inner_wait}
v1 = "st.v_add_f32"(v0, v1)
v0 = "st.ds_load_b32"(v9)
"st.s_cbranch_scc1"("inner", SCC0)
Successors: ^inner, ^latch
^latch:
"st.s_wait_dscnt"(0)
"st.s_cbranch_scc1"("outer", SCC0)
Successors: ^outer, ^exit
^exit:
"""


def test_nested_loops_closed_by_memoisation():
    res = check(NESTED.format(inner_wait='"st.s_wait_dscnt"(0)'))
    assert res.ok and res.complete, res.notice


def test_nested_loops_inner_back_edge_violation():
    res = check(NESTED.format(inner_wait=""))
    got = {(v.producer.line, v.path, v.required) for v in res.violations}
    assert got == {(5, ("entry", "outer", "inner"), 0), (10, ("entry", "outer", "inner", "inner"), 0)}
    assert res.trip_cut  # the FIFO grows on every trip: the header state never repeats


# ------------------------------------------------------------------ tensor -> LDS RAW

TENSOR = """
^entry:
"st.tensor_load_to_lds"(s[0:3], s[10:17]) {{ mod.memtoken = {{ tokens = [0] }} }}
{mid}
v[0:1] = "st.ds_load_b64"(v10) {{ mod.memtoken = {{ tokens = [0] }} }}
"""


def test_tensor_multi_wave_ds_load_is_not_an_anchor():
    assert check(TENSOR.format(mid=""), num_waves=2).ok


def test_tensor_single_wave_ds_load_needs_drain():
    v = only(check(TENSOR.format(mid=""), num_waves=1))
    assert (v.rule, v.counter, v.required) == ("tensor-raw", CK_TENSOR, 0)


def test_tensor_multi_wave_barrier_needs_drain():
    v = only(check(TENSOR.format(mid='"st.s_barrier"() { mod.memtoken = { tokens = [0] } }'), num_waves=4))
    assert v.consumer.mnemonic == "s_barrier" and v.rule == "tensor-raw"


def test_tensor_drained_at_barrier_then_read():
    mid = '"st.s_wait_tensorcnt"(0)\n"st.s_barrier"() { mod.memtoken = { tokens = [0] } }'
    assert check(TENSOR.format(mid=mid), num_waves=4).ok
    assert check(TENSOR.format(mid=mid), num_waves=1).ok


def test_barrier_redefines_token_single_wave_reader_depends_on_barrier():
    """NumWaves=1 with an undrained barrier: the barrier is the violation, not the ds_load."""
    res = check(TENSOR.format(mid='"st.s_barrier"() { mod.memtoken = { tokens = [0] } }'), num_waves=1)
    assert only(res).consumer.mnemonic == "s_barrier"


def test_cluster_minus3_barrier_is_not_a_fence():
    res = check("""
    ^entry:
    "st.tensor_load_to_lds"(s[0:3], s[10:17]) { mod.memtoken = { tokens = [0] } }
    "st.s_barrier_signal"(-3)
    "st.s_barrier_wait"(-3)
    "st.s_barrier_signal"(-1) { mod.memtoken = { tokens = [0] } }
    "st.s_barrier_wait"(-1) { mod.memtoken = { tokens = [0] } }
    """, num_waves=2)
    v = only(res)
    assert v.consumer.mnemonic == "s_barrier_signal" and v.consumer.line == 6


def test_disjoint_token_barrier_does_not_need_tensor():
    assert check(TENSOR.format(mid='"st.s_barrier"() { mod.memtoken = { tokens = [1] } }'), num_waves=2).ok


def test_untagged_tensor_load_vs_tagged_anchor():
    v = only(check("""
    ^entry:
    "st.tensor_load_to_lds"(s[0:3], s[10:17])
    v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [0] } }
    """, num_waves=2))
    assert v.rule == "tensor-raw" and "untagged" in v.detail


def test_untagged_ds_anchor_vs_tagged_tensor_load():
    v = only(check("""
    ^entry:
    "st.tensor_load_to_lds"(s[0:3], s[10:17]) { mod.memtoken = { tokens = [3] } }
    v[0:1] = "st.ds_load_b64"(v10)
    """, num_waves=2))
    assert v.rule == "tensor-raw"


# ------------------------------------------------------------------ LDS WAR, barrier ordering

def test_lds_war_tensor_overwrites_pending_read():
    res = check("""
    ^entry:
    v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [0] } }
    v[2:3] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [1] } }
    "st.tensor_load_to_lds"(s[0:3], s[10:17]) { mod.memtoken = { tokens = [0] } }
    """)
    v = only(res)
    assert (v.rule, v.counter, v.required, v.producer.line) == ("lds-war", CK_DS, 1, 3)


def test_lds_war_ds_store_same_pipeline_is_exempt():
    assert check("""
    ^entry:
    v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [0] } }
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [0] } }
    """).ok


def test_async_war_and_raw():
    res = check("""
    ^entry:
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [0] } }
    "st.s_wait_dscnt"(0)
    "st.global_store_async_from_lds_b64"(v[0:1], v2, s[30:31]) { mod.memtoken = { tokens = [0] } }
    "st.global_store_async_from_lds_b64"(v[0:1], v2, s[30:31]) { mod.memtoken = { tokens = [1] } }
    "st.tensor_load_to_lds"(s[0:3], s[10:17]) { mod.memtoken = { tokens = [0] } }
    """)
    v = only(res)
    assert (v.rule, v.counter, v.required, v.producer.line) == ("lds-war", CK_ASYNC, 1, 5)


def test_async_store_reads_lds_written_by_ds_store():
    body = """
    ^entry:
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [0] } }
    "st.global_store_async_from_lds_b64"(v[0:1], v2, s[30:31]) { mod.memtoken = { tokens = [0] } }
    """
    assert only(check(body)).rule == "raw"
    assert check(body, async_store_reads_lds=False).ok


def test_barrier_orders_ds_ops_on_its_tokens():
    body = """
    ^entry:
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [0] } }
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [1] } }
    @WAIT@
    "st.s_barrier"() { mod.memtoken = { tokens = [0] } }
    """
    res = check(body.replace("@WAIT@", ""))
    v = only(res)
    assert (v.rule, v.counter, v.required) == ("barrier", CK_DS, 1)
    assert check(body.replace("@WAIT@", '"st.s_wait_dscnt"(1)')).ok


def test_untagged_barrier_orders_every_ds_op():
    v = only(check("""
    ^entry:
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [1] } }
    "st.s_barrier"()
    """))
    assert v.rule == "barrier"


# ------------------------------------------------------------------ existing wait forms

def test_combined_wait_decoding():
    f = _func("""
    ^entry:
    "st.s_wait_loadcnt_dscnt"(0x203)
    "st.s_wait_storecnt_dscnt"(0x105)
    "st.s_wait_tensorcnt"() { mod.swaittensorcnt = { tlcnt = 1 } }
    "st.s_wait_dscnt"() { mod.swaitcnt = { dlcnt = 4, dscnt = 2 } }
    "st.s_wait_xcnt"(0)
    "st.s_waitcnt"(0)
    """)
    effects = [wait_effects(i) for i in f.blocks[0].instrs]
    assert effects == [{CK_LOAD: 2, CK_DS: 3}, {CK_DS: 5}, {CK_TENSOR: 1}, {CK_DS: 2}, {}, {}]


def test_legacy_waitcnt_retires_nothing():
    v = only(check("""
    ^entry:
    v0 = "st.ds_load_b32"(v9)
    "st.s_waitcnt"(0)
    v1 = "st.v_add_f32"(v0, v0)
    """))
    assert v.present is None


# ------------------------------------------------------------------ bounds, reports

def _diamond_chain(n: int) -> str:
    lines = ["^entry:", 'v0 = "st.ds_load_b32"(v9)', "Successors: ^d0a, ^d0b"]
    for i in range(n):
        nxt = f"^d{i + 1}a, ^d{i + 1}b" if i + 1 < n else "^end"
        lines += [f"^d{i}a:", f'v{i + 10} = "st.ds_load_b32"(v9)', f"Successors: {nxt}",
                  f"^d{i}b:", f"Successors: {nxt}"]
    lines += ["^end:", '"st.s_wait_dscnt"(1)', 'v1 = "st.v_add_f32"(v0, v0)']
    return "\n".join(lines)


def test_path_bound_sets_bounded_notice():
    res = check(_diamond_chain(8), max_paths=10)
    assert res.bounded and not res.complete
    assert "bounded" in res.notice and "max_paths=10" in res.notice


def test_memoisation_keeps_all_violations():
    """Exhaustive run finds the one violating path (no extra load) among 2^8."""
    res = check(_diamond_chain(8))
    assert not res.bounded
    v = only(res)
    assert v.path[-1] == "end" and all(lab.endswith("b") for lab in v.path[1:-1])


def test_format_violation_is_compiler_style():
    res = check(FOUR_DS.format(wait='"st.s_wait_dscnt"(3)'))
    text = format_violation(res.violations[0], "k.stir")
    first, note, route = text.splitlines()
    assert re.match(r"^k\.stir:8:1: error: v_wmma_f32_16x16x32_bf16 .* s_wait_dscnt 2 .*\[raw\]$", first)
    assert note.startswith("k.stir:4:1: note:")
    assert route == "  path: ^entry"
    assert format_result(res, "k.stir").startswith(first)


def test_function_is_not_modified():
    f = _func(FOUR_DS.format(wait=""))
    before = [(i.mnemonic, list(i.srcs), list(i.dsts)) for i in f.instructions()]
    check_function(f, Options())
    assert before == [(i.mnemonic, list(i.srcs), list(i.dsts)) for i in f.instructions()]


def test_unreachable_block_is_ignored():
    res = check("""
    ^entry:
    v0 = "st.ds_load_b32"(v9)
    ^dead:
    v1 = "st.v_add_f32"(v0, v0)
    """)
    assert res.ok and res.paths == 1


# ------------------------------------------------------------------ checker properties

from hypothesis import HealthCheck, given, note, settings  # noqa: E402

from proggen import GenParams, programs  # noqa: E402

SMALL = GenParams(max_depth=2, max_regions=2, max_ops=4, exotic_waits=True)
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _keys(res: CheckResult) -> set:
    """Violations as comparable facts (the exposing path may differ between equivalent runs:
    memoisation keeps whichever path reached a state first)."""
    return {(v.consumer.line, v.producer.line, v.rule, v.counter, v.required) for v in res.violations}


@PROPS
@given(programs(SMALL))
def test_memoisation_loses_nothing(spec):
    """Pruning repeated states finds exactly the violations of plain enumeration."""
    note(spec.to_stir())
    f = spec.to_function()
    fast = check_function(f, spec.options(), max_trips=2, max_paths=20000)
    slow = check_function(f, spec.options(), max_trips=2, max_paths=20000, memoize=False)
    if fast.bounded or slow.bounded:
        return
    assert _keys(fast) == _keys(slow)
    assert fast.states <= slow.states


@PROPS
@given(programs(SMALL))
def test_more_trips_never_hide_a_violation(spec):
    note(spec.to_stir())
    f = spec.to_function()
    two = check_function(f, spec.options(), max_trips=2)
    three = check_function(f, spec.options(), max_trips=3)
    if two.bounded or three.bounded:
        return
    pair = lambda r: {(v.consumer.line, v.producer.line, v.rule, v.counter) for v in r.violations}  # noqa: E731
    assert pair(two) <= pair(three)
    if two.complete:
        assert pair(two) == pair(three)


@PROPS
@given(programs(SMALL))
def test_lds_pseudo_registers_do_not_change_the_verdict(spec):
    """The checker reads tokens from mod.memtoken, so the implicit-dependency pass is neutral."""
    from stinkywait_core.analysis.implicit_deps import build_implicit_dependencies

    note(spec.to_stir())
    plain = spec.to_function()
    linked = spec.to_function()
    build_implicit_dependencies(linked)
    assert _keys(check_function(plain, spec.options())) == _keys(check_function(linked, spec.options()))


def test_ds_store_to_ds_load_token_raw_is_the_spec_model():
    """Upstream's model (section 18.5) drains DS store -> DS load on one token; we check it."""
    v = only(check("""
    ^entry:
    "st.ds_store_b64"(v11, v[4:5]) { mod.memtoken = { tokens = [2] } }
    v[0:1] = "st.ds_load_b64"(v10) { mod.memtoken = { tokens = [2] } }
    """))
    assert (v.rule, v.counter, v.detail) == ("raw", CK_DS, "LDS token 2")
