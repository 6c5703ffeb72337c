"""Everything the editor shows speaks the file's target: vmcnt / lgkmcnt / expcnt on gfx9 (a
counter several kinds of op share is one queue, each op's kind marked), dscnt / loadcnt /
kmcnt / xcnt on gfx1250; blocks are named as the source names them (never the front end's
`<label>_<k>` ids or a `^`)."""

from __future__ import annotations

import asyncio
import re

from .conftest import DATA, TIMEOUT, core, label_text

GFX12_WORDS = re.compile(r"\b(?:dscnt|loadcnt|kmcnt|storecnt|tensorcnt|xcnt|s_wait_\w+)\b")
GFX9_WORDS = re.compile(r"\b(?:vmcnt|lgkmcnt|expcnt|vscnt|s_waitcnt)\b")


async def _plan(session, uri: str):
    return await asyncio.wait_for(session.client.protocol.send_request_async(
        "stinkywait/plan", {"textDocument": {"uri": uri}}), TIMEOUT)


def _get(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n"), 1) if needle in ln)


async def test_gfx942_hover_is_one_lgkmcnt_queue_with_each_ops_kind(nvim):
    uri, text = nvim.open_file(DATA / "shared942.s")
    use = _line_of(text, "v_add_f32 v30, v0, v1")
    smem, ds1, ds2 = (_line_of(text, s) for s in ("s_load_dwordx4", "ds_read_b128 v[0:3]", "ds_read_b128 v[4:7]"))
    value = (await nvim.hover(uri, use - 1)).contents.value
    assert not GFX12_WORDS.search(value), value
    assert "**s_waitcnt lgkmcnt(1)** — RAW" in value
    queues = [ln.split("`")[1] for ln in value.split("\n") if ln.startswith("- `")]
    assert queues == ["lgkmcnt", "vmcnt"], value  # LDS and SMEM: one queue, the counter they share
    # lgkmcnt(1) retires the older ds_read (LDS completes in order) but not the scalar load
    # (SMEM completes out of order: only lgkmcnt(0) retires it)
    assert f"✓ drained by `s_waitcnt lgkmcnt(1)`: **L{ds1} `ds_read_b128` (LDS, countFrom 2)**" in value
    assert (f"still in flight after it: L{ds2} `ds_read_b128` (LDS, countFrom 1), "
            f"L{smem} `s_load_dwordx4` (SMEM, out of order, countFrom 1)") in value
    # a queue of one kind needs no mark
    assert "`buffer_load_dword` (countFrom 1)" in value


async def test_gfx942_hints_tooltips_and_plan_view_speak_gfx9(nvim):
    uri, text = nvim.open_file(DATA / "shared942.s")
    hints = await nvim.hints(uri)
    labels = [label_text(h) for h in hints]
    assert labels and all(label.startswith("s_waitcnt ") for label in labels), labels
    for hint in hints:
        assert not GFX12_WORDS.search(label_text(hint) + await nvim.tooltip(hint))
    plan = await _plan(nvim, uri)
    assert _get(plan, "target") == "gfx942"
    waits = [w for f in _get(plan, "functions") for w in _get(f, "waits")]
    assert sorted(_get(w, "counter") for w in waits) == ["lgkmcnt", "vmcnt"]
    for w in waits:
        shown = " ".join([_get(w, "instruction"), _get(w, "label"), *_get(w, "summary"), *_get(w, "others")])
        assert not GFX12_WORDS.search(shown) and "^" not in shown, shown


async def test_gfx1250_words_and_source_block_names(nvim, tmp_path):
    """gemm_loop.s (gfx1250): gfx12 names only; every block as written or "the block after
    line N", never the front end's ids."""
    example = (DATA.parent.parent.parent / "examples" / "gemm_loop.s").read_text()
    # a load issued after the loop: its wait stays in the block split off there (the bias
    # load's wait is folded into the loop's wait by default)
    branch = "\ts_cbranch_scc1 .LBB0_1\n"
    assert branch in example
    path = tmp_path / "gemm_loop.s"
    path.write_text(example.replace(branch, branch + "\tglobal_load_b32 v60, v[44:45], off\n"
                                    "\tv_add_f32_e32 v61, v60, v60\n"))
    uri, text = nvim.open_file(path)
    a = core(text, path)
    ids = {b.name for f in a.module.functions for b in f.blocks}
    written = {ln.split(":")[0] for ln in text.split("\n") if re.match(r"^[.\w]+:", ln)}
    internal = ids - written
    assert internal, "the kernel must have a block without a label for this test to mean anything"
    shown = []
    for w in a.waits():
        shown.append((await nvim.hover(uri, w.line - 1)).contents.value)
    for hint in await nvim.hints(uri):
        shown.append(label_text(hint) + "\n" + await nvim.tooltip(hint))
    plan = await _plan(nvim, uri)
    for f in _get(plan, "functions"):
        for w in _get(f, "waits"):
            shown.append(" ".join([_get(w, "block"), *_get(w, "summary"), *_get(w, "others")]))
    text_shown = "\n".join(shown)
    assert not GFX9_WORDS.search(text_shown)
    assert "^" not in text_shown
    for name in internal:
        assert not re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text_shown), name
    assert "the block after line" in text_shown and "`.LBB0_1`" in text_shown
    smem = next(w for w in a.waits() if w.instruction == "s_wait_kmcnt 0")
    hover = (await nvim.hover(uri, smem.line - 1)).contents.value
    assert "(countFrom 4: SMEM completes out of order, so only a wait of 0 retires it)" in hover
