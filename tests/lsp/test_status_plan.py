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
