"""Predicted stall in the editor: one short line in the hover's summary, the plan view's
records costliest first, the status item's total; the numbers are the core's
(`Analysis.wait_stall`, waitcnt/stall.py)."""

from __future__ import annotations

from .conftest import DATA, core
from .test_status_plan import _get, _request


async def test_hover_names_the_predicted_stall_in_its_summary(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    seen = 0
    for w in a.waits():
        if w.placement != "before":
            continue
        st = a.wait_stall(w)
        assert st is not None
        value = (await nvim.hover(uri, w.line - 1)).contents.value
        summary = value.partition("\n\n---\n\n")[0]
        line = next(ln for ln in summary.split("\n") if "cycles stall" in ln)
        assert line.strip().startswith(f"~{st.per_trip} cycles stall")
        assert ("per trip of" in line) == (st.loop is not None)
        seen += 1
    assert seen


async def test_plan_records_carry_the_stall_costliest_first(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    plan = await _request(nvim, "stinkywait/plan", uri)
    for f in _get(plan, "functions"):
        cycles = [_get(_get(w, "stall"), "cycles") for w in _get(f, "waits")]
        assert cycles == sorted(cycles, reverse=True)
        got = sorted((_get(w, "line"), _get(_get(w, "stall"), "cycles")) for w in _get(f, "waits"))
        want = sorted((w.line, a.wait_stall(w).per_trip) for w in a.waits() if w.function == _get(f, "name"))
        assert got == want
        assert _get(f, "stall") == a.stall()[_get(f, "name")].total


async def test_status_gives_the_kernels_total(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    await nvim.hints(uri)
    status = await _request(nvim, "stinkywait/status", uri)
    stall = _get(status, "stall")
    assert _get(stall, "cycles") == sum(r.total for r in a.stall().values())


def test_latency_model_setting_takes_a_file_or_an_object(tmp_path):
    from stinkywait_lsp.settings import Settings
    f = tmp_path / "m.toml"
    f.write_text("[latency]\nlds = 99\n")
    s, problems = Settings().merged({"latencyModel": str(f)})
    assert not problems and s.to_options().latency_model.latency["lds"] == 99
    s, problems = Settings().merged({"latencyModel": {"loop_trips": 2}})
    assert not problems and s.to_options().latency_overrides == (("loop_trips", 2),)
    bad = tmp_path / "bad.json"
    bad.write_text('{"latency": {"lds": "x"}}')
    s2, problems = s.merged({"latencyModel": str(bad)})
    assert s2 == s and len(problems) == 1 and f"{bad}:1:" in problems[0] and "error:" in problems[0]
    s3, problems = s.merged({"latencyModel": ""})
    assert not problems and s3.latency_overrides == ()
