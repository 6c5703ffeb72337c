"""The custom requests behind the client's status item (`stinkywait/status`) and plan view
(`stinkywait/plan`)."""

from __future__ import annotations

import asyncio
from collections import Counter

from .conftest import DATA, TIMEOUT, core, expected_findings, label_text


async def _request(session, method: str, uri: str):
    return await asyncio.wait_for(session.client.protocol.send_request_async(
        method, {"textDocument": {"uri": uri}}), TIMEOUT)


def _get(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


async def test_status_counts_waits_and_findings_and_names_the_target(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    a = core(text, DATA / "checked.s")
    await nvim.diagnostics(uri, 1)  # the review is in
    status = await _request(nvim, "stinkywait/status", uri)
    assert _get(status, "waits") == len(a.waits())
    assert _get(status, "target") == a.options.arch
    kinds = {"missing-wait": "missing", "unproven-wait": "unproven", "redundant-wait": "redundant",
             "stricter-wait": "stricter"}
    want = Counter(kinds[code] for code, _, _ in expected_findings(a) if code in kinds)
    findings = _get(status, "findings")
    assert {k: _get(findings, k) for k in kinds.values()} == {k: want.get(k, 0) for k in kinds.values()}


async def test_status_of_an_unknown_document_is_null(nvim):
    assert await _request(nvim, "stinkywait/status", (DATA / "never-opened.s").as_uri()) is None


async def test_plan_matches_the_hints_and_shows_only_user_settings(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    hints = await nvim.hints(uri)
    plan = await _request(nvim, "stinkywait/plan", uri)
    waits = [w for f in _get(plan, "functions") for w in _get(f, "waits")]
    assert len(waits) == len(a.waits()) == len(hints)
    assert sorted(_get(w, "label") for w in waits) == sorted(label_text(h) for h in hints)
    assert _get(plan, "target") == "gfx1250"
    settings = _get(plan, "settings")
    keys = set(settings) if isinstance(settings, dict) else set(settings._fields)
    assert keys and not keys & {"bounded", "countFromInstance", "representEmptyPaths", "replaceWaits"}
    for w in waits:
        assert _get(w, "summary") and all("`" not in s or s.count("`") % 2 == 0 for s in _get(w, "summary"))


async def test_status_names_the_files_own_target_not_the_setting(nvim, tmp_path):
    """The real gfx942 kernel declares its target only at line 1362 (`.amdhsa_kernel`, with
    `amdhsa.target` in its metadata); the setting's default is gfx1250: the status item must
    say gfx942, and the plan must be spelled for it."""
    from .conftest import SHARED
    import pytest
    src = SHARED / "corpus" / "asm" / "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s"
    if not src.exists():
        pytest.skip("../shared absent")
    path = tmp_path / src.name
    # its hand-written waits removed, so that the plan has waits to spell
    path.write_text("".join(ln for ln in src.read_text().splitlines(keepends=True)
                            if not ln.lstrip().startswith("s_waitcnt")))
    uri, text = nvim.open_file(path)
    await nvim.diagnostics(uri, 1)
    status = await _request(nvim, "stinkywait/status", uri)
    a = core(text, path)
    assert a.options.arch == "gfx942"
    assert _get(status, "target") == "gfx942"
    assert _get(status, "waits") == len(a.waits())
    plan = await _request(nvim, "stinkywait/plan", uri)
    assert _get(plan, "target") == "gfx942"
    # spelled for gfx9: `s_waitcnt vmcnt(N) ...`, never a gfx12 `s_wait_*`
    waits = [w for f in _get(plan, "functions") for w in _get(f, "waits")]
    assert waits and all(_get(w, "label").startswith("s_waitcnt ") for w in waits)
