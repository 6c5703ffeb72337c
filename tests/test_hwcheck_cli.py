"""`stinkywait check --exhaustive FILE`: the hardware checker (the old spec checker only with
`--upstream`), every violation located with its producer and path, exit 1 on violations."""

from __future__ import annotations

import pytest

from test_cli import run

CASES = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
k:
  global_load_b32 v1, v[2:3], off
  v_mov_b32_e32 v1, 0
  global_store_b32 v[4:5], v8, off
  v_mov_b32_e32 v8, 1
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lskip
  ds_load_b32 v9, v0
.Lskip:
  v_add_f32_e32 v7, v9, v9
  s_endpgm
"""


@pytest.fixture
def kernel(tmp_path):
    (tmp_path / "k.s").write_text(CASES)
    return tmp_path / "k.s"


def test_violations_are_located_with_producer_and_path(kernel):
    r = run("check", "--exhaustive", str(kernel))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout.splitlines()
    k = str(kernel)
    assert f"{k}:5:3: error: v_mov_b32_e32 writes v1, which global_load_b32 (line 4) will still write when it " \
           "completes: needs s_wait_loadcnt 0 before it, found no loadcnt wait [hw-waw]" in out
    assert f"{k}:4:3: note: producer global_load_b32 issued here" in out
    war = next(i for i, ln in enumerate(out) if "[hw-war]" in ln)
    assert out[war].startswith(f"{k}:7:3: error: v_mov_b32_e32 overwrites v8") and "s_wait_xcnt 0" in out[war]
    raw = next(i for i, ln in enumerate(out) if "[hw-raw]" in ln)
    assert out[raw].startswith(f"{k}:12:3: error: v_add_f32_e32 reads v9, which ds_load_b32 (line 10)")
    assert out[raw + 1] == f"{k}:10:3: note: producer ds_load_b32 issued here"
    # blocks as the source names them (the front end calls them k, k_1, .Lskip)
    assert out[raw + 2] == f"{k}:12:3: note: path: the entry -> the block after line 9 -> .Lskip"
    assert out[-1] == f"{k}: exhaustive check failed"
    assert "Traceback" not in r.stderr


def test_the_pass_output_passes(kernel, tmp_path):
    fixed = tmp_path / "fixed.s"
    r = run("insert", str(kernel), "-o", str(fixed))
    assert r.returncode == 0, r.stderr
    r = run("check", "--exhaustive", str(fixed))
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip().endswith("exhaustive check passed")


def test_upstream_keeps_the_spec_checker(kernel):
    # upstream's model has no WAW or xcnt: only the RAW of the diamond is its business
    r = run("check", "--exhaustive", "--upstream", str(kernel))
    assert "[hw-" not in r.stdout
    assert "[raw]" in r.stdout and "v9" in r.stdout


def test_stir_input(tmp_path):
    p = tmp_path / "k.stir"
    p.write_text('st.func @k() {\n^entry:\n  v1 = "st.global_load_b32"(v[2:3])\n  v1 = "st.v_mov_b32"(v5)\n}\n')
    r = run("check", "--exhaustive", str(p))
    assert r.returncode == 1 and f"{p}:4:3: error:" in r.stdout and "[hw-waw]" in r.stdout


def test_unsupported_target_is_an_error_not_a_traceback(tmp_path):
    p = tmp_path / "old.s"
    p.write_text('.amdgcn_target "amdgcn-amd-amdhsa--gfx803"\nk:\n  s_endpgm\n')
    r = run("check", "--exhaustive", str(p))
    assert r.returncode == 1
    assert "unsupported target 'gfx803'" in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_max_trips_reaches_the_checker(tmp_path):
    p = tmp_path / "loop.s"
    p.write_text('.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n.Ll:\n  s_load_b32 s4, s[0:1], 0x0\n'
                 "  s_cbranch_scc1 .Ll\n  s_endpgm\n")
    r = run("check", "--exhaustive", "--max-trips", "4", str(p))
    assert r.returncode == 1 and "loops checked up to 4 trips" in r.stdout
