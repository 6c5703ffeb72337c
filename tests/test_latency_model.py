"""The latency model (targets/latency.py, docs/latency-model.md): its numbers come from the
family's tables, overrides change them (and so the predictions), a bad file is a located error."""

from __future__ import annotations

import json

import pytest

from stinkywait_core.cli.main import main
from stinkywait_core.results import Options
from stinkywait_core.targets import get_target
from stinkywait_core.targets.latency import (ISSUE_CLASSES, MEMORY_KINDS, LatencyModelError, load_overrides,
                                             parse_overrides)
from stinkywait_core.targets.model import CK_DS, CK_KM, CK_LOAD, CK_TENSOR


@pytest.mark.parametrize("cpu", ["gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1201", "gfx1250"])
def test_every_family_has_a_whole_model(cpu):
    m = get_target(cpu).latency
    assert m is not None and m.family == get_target(cpu).family
    assert set(ISSUE_CLASSES) <= set(m.issue) and set(MEMORY_KINDS) <= set(m.latency)
    assert all(v >= 0 for v in list(m.issue.values()) + list(m.latency.values()))


def test_mfma_passes_follow_llvms_scheduling_models():
    gfx942, gfx90a = get_target("gfx942").latency, get_target("gfx90a").latency
    # SIDPGFX942FullSpeedModel: 16x16x16 f16 is 4 passes, 32x32x8 f16 8, 4x4 2
    assert gfx942.passes("v_mfma_f32_16x16x16_f16") == 4
    assert gfx942.passes("v_mfma_f32_32x32x8_f16") == 8
    assert gfx942.passes("v_mfma_f32_4x4x4_16b_f16") == 2
    # SIDPFullSpeedModel (gfx90a): 32x32 16 passes
    assert gfx90a.passes("v_mfma_f32_32x32x8f16") == 16
    # GFX1250: f16/bf16 WMMA 2 passes (8 cycles), iu8 4
    g1250 = get_target("gfx1250").latency
    assert g1250.passes("v_wmma_f32_16x16x32_bf16") == 2
    assert g1250.passes("v_wmma_i32_16x16x64_iu8") == 4
    assert gfx942.passes("v_add_f32") == 0


def test_memory_kinds_per_timeline():
    t = get_target("gfx1250")
    m = t.latency
    assert m.op_latency(t.sem_for("ds_load_b32"), CK_DS) == m.latency["lds"] == 72
    assert m.op_latency(t.sem_for("s_load_b32"), CK_KM) == m.latency["smem"]
    assert m.op_latency(t.sem_for("global_load_b32"), CK_LOAD) == m.latency["vmem_load"]
    assert m.op_latency(t.sem_for("tensor_load_to_lds"), CK_TENSOR) == m.latency["tensor"]


def test_overrides_replace_entries():
    m = get_target("gfx942").latency
    o = m.with_overrides((("latency.lds", 200), ("issue.valu", 8), ("loop_trips", 3),
                          ("matrix_passes.^v_mfma_f32_16x16x16", 16)))
    assert (o.latency["lds"], o.issue["valu"], o.loop_trips) == (200, 8, 3)
    assert o.passes("v_mfma_f32_16x16x16_f16") == 16
    assert m.latency["lds"] == 64 and o != m and m.with_overrides(()) is m
    opts = Options(arch="gfx942", latency_overrides=(("latency.lds", 200),))
    assert opts.latency_model.latency["lds"] == 200 and opts != Options(arch="gfx942")


def test_json_and_toml_files(tmp_path):
    j = tmp_path / "m.json"
    j.write_text(json.dumps({"latency": {"lds": 100}, "loop_trips": 2}))
    t = tmp_path / "m.toml"
    t.write_text("loop_trips = 2\n[latency]\nlds = 100\n")
    assert sorted(load_overrides(str(j))) == sorted(load_overrides(str(t))) == [("latency.lds", 100), ("loop_trips", 2)]


@pytest.mark.parametrize("text, name, where, words", [
    ('{"latency": {\n  "ldss": 4}}', "m.json", (2, 3), "unknown latency entry 'ldss'"),
    ('{"latency": {"lds": -1}}', "m.json", (1, 14), "non-negative integer"),
    ('{"latency": ', "m.json", (1, 13), "not valid JSON"),
    ("loop_trips = 2\nwarp = 3\n", "m.toml", (2, 1), "unknown latency-model key 'warp'"),
    ("[issue]\nvalu = \"fast\"\n", "m.toml", (2, 1), "non-negative integer"),
    ("[issue\n", "m.toml", (1, 7), "not valid TOML"),
    ('{"matrix_passes": {"v_mfma_(": 4}}', "m.json", (1, 20), "bad mnemonic pattern"),
])
def test_bad_files_are_located_errors(text, name, where, words):
    with pytest.raises(LatencyModelError) as e:
        parse_overrides(text, name)
    assert (e.value.line, e.value.column) == where
    assert words in str(e.value) and str(e.value).startswith(f"{name}:{where[0]}:{where[1]}: error: ")


def test_cli_reports_a_bad_file_and_exits_2(tmp_path, capsys):
    src = tmp_path / "k.s"
    src.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.text\nk:\n\ts_endpgm\n')
    bad = tmp_path / "bad.toml"
    bad.write_text("[latency]\nlsd = 3\n")
    assert main(["plan", str(src), "--latency-model", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:1: error: unknown latency entry 'lsd'" in err and "Traceback" not in err
    assert main(["plan", str(src), "--latency-model", str(tmp_path / "none.toml")]) == 2
    assert "cannot read latency model" in capsys.readouterr().err
