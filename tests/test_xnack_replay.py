"""gfx1250 XNACK replay protection (docs/decisions.md 43): with XNACK on (`gfx1250:xnack+`), a
VMEM op's translation completes before an `s_set_vgpr_msb` that does not open the next VMEM op
and before a forever `s_sleep`; with XNACK off or unsaid, nothing.  The hardware checker finds
the drain missing; incremental re-planning follows an edit of the instruction after the switch."""

from __future__ import annotations

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--{target}"\n\t.text\nk:\n'
BODY = ("\tglobal_load_b32 v1, v[2:3], off\n"      # 4
        "\ts_set_vgpr_msb 0x41\n"                  # 5: opens the next VMEM op: no drain
        "\tglobal_load_b32 v2, v[4:5], off\n"      # 6
        "\ts_set_vgpr_msb 0\n"                     # 7: followed by a VALU: drain
        "\tv_add_f32 v4, v5, v6\n"                 # 8
        "\ts_sleep 10\n"                           # 9: a finite sleep
        "\tglobal_load_b32 v7, v[4:5], off\n"      # 10
        "\ts_sleep 0x8000\n"                       # 11: sleeps until woken: drain
        "\ts_endpgm\n")


def xcnt_waits(target: str, body: str = BODY, arch: str = "gfx1250") -> list[int]:
    an = api.analyze(HEAD.format(target=target) + body, "x.s", Options(arch=arch))
    assert not [d for d in an.diagnostics if d.severity == "error"]
    return [w.line for w in an.waits() if w.counter == "x"]


def test_xnack_on_drains_before_a_mode_switch_that_ends_the_group_and_a_forever_sleep():
    assert xcnt_waits("gfx1250:xnack+") == [7, 11]


@pytest.mark.parametrize("target", ["gfx1250:xnack-", "gfx1250"])
def test_xnack_off_or_unsaid_needs_no_drain(target):
    assert xcnt_waits(target) == []


def test_arch_option_turns_it_on_where_the_file_leaves_xnack_open():
    assert xcnt_waits("gfx1250", arch="gfx1250:xnack+") == [7, 11]
    assert xcnt_waits("gfx1250:xnack-", arch="gfx1250:xnack+") == []


def test_the_reason_names_the_rule():
    an = api.analyze(HEAD.format(target="gfx1250:xnack+") + BODY, "x.s", Options())
    w = next(w for w in an.waits() if w.line == 7)
    assert w.rule == "ISA" and "s_set_vgpr_msb" in w.reason and "XNACK" in w.reason


def test_the_hardware_checker_finds_the_drain_missing(tmp_path):
    from stinkywait_core.cli.main import main
    ok = tmp_path / "ok.s"
    ok.write_text(api.analyze(HEAD.format(target="gfx1250:xnack+") + BODY, "x.s", Options()).inserted_text())
    assert main(["check", "--exhaustive", str(ok)]) == 0
    bad = tmp_path / "bad.s"
    bad.write_text(HEAD.format(target="gfx1250:xnack+") + BODY)
    assert main(["check", "--exhaustive", str(bad)]) == 1


def test_an_edit_after_the_switch_replans_it():
    cache = api.AnalysisCache()
    opts = Options()
    text = HEAD.format(target="gfx1250:xnack+") + BODY
    first = api.analyze(text, "x.s", opts, cache=cache)
    assert [w.line for w in first.waits() if w.counter == "x"] == [7, 11]
    # the VMEM op after the first switch becomes a VALU: that switch now ends the group
    edited = text.replace("\tglobal_load_b32 v2, v[4:5], off\n", "\tv_mov_b32 v2, v4\n")
    warm = api.analyze(edited, "x.s", opts, cache=cache)
    cold = api.analyze(edited, "x.s", opts)
    assert [w.line for w in warm.waits()] == [w.line for w in cold.waits()]
    assert 5 in [w.line for w in cold.waits() if w.counter == "x"]
    # and back
    again = api.analyze(text, "x.s", opts, cache=cache)
    assert [w.line for w in again.waits() if w.counter == "x"] == [7, 11]
