"""LLVM IR -> the assembly pairs the peer comparison reads, cached by content hash.

For one IR file and CPU, llc-22 runs up to the wait pass once (``-stop-before=si-insert-waitcnts``,
MIR), and three assembly files are printed from that one MIR, so they are the same instruction
stream and differ only in waits:

* ``nowait.s``: ``-start-after=si-insert-waitcnts``, the pass skipped (hard waits from
  intrinsics and inline asm stay; the memory legalizer's soft waits are dropped), the input of
  ``stinkywait insert --replace-waits``;
* ``keepfence.s``: the same, with the legalizer's soft waits made hard first (they stay at their
  conservative value): tells which LLVM waits come from fences and atomic orderings;
* ``llvm.s``: ``-start-before=si-insert-waitcnts``, LLVM's own waits (the same output as a plain
  ``llc -O3``).

LLVM 22's MIR parser rejects the wave32 ``implicit $vcc_lo`` operands it prints itself; they are
rewritten to ``$vcc`` first (the workaround of ../shared/tools/llvm/diffbench/make_pair.sh).
Shader calling conventions are refused with the HSA triple, so a file that fails with it is
retried with the plain ``amdgcn`` triple (and is assembled with the triple it was compiled for).
A file that does not compile as a whole (an intrinsic the CPU lacks in one function) is split
with llvm-extract-22 and each function is compiled alone; the ones that fail are reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

LLC = shutil.which("llc-22")
MC = shutil.which("llvm-mc-22")
EXTRACT = shutil.which("llvm-extract-22")

#: bump when the recipe changes: every cached compile is then redone
RECIPE = "peer-compile-2"
HSA, PLAIN = "amdgcn-amd-amdhsa", "amdgcn"
_TIMEOUT = 300

_VCC_LO = re.compile(r"(implicit(?:-def)?(?: (?:dead|killed|undef|renamable))* )\$vcc_lo\b")
_SOFT = re.compile(r"\b(S_WAIT[A-Z_]*)_soft\b")
_DEFINE = re.compile(r"^define\b[^@]*@(\"[^\"]+\"|[\w.$-]+)\s*\(", re.M)


def tools_available() -> bool:
    return LLC is not None and MC is not None


def cache_root() -> Path:
    """$STINKYWAIT_PEER_CACHE, else a folder in the system temp dir."""
    env = os.environ.get("STINKYWAIT_PEER_CACHE")
    root = Path(env) if env else Path(tempfile.gettempdir()) / "stinkywait-peer-cache"
    root.mkdir(parents=True, exist_ok=True)
    return root


@lru_cache(maxsize=None)
def llc_version() -> str:
    if LLC is None:
        return "none"
    out = subprocess.run([LLC, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class Compiled:
    """One compiled unit: a whole file, or one function of it (``unit`` = ``file::func``)."""

    source: str
    unit: str
    cpu: str
    triple: str
    nowait: str
    keepfence: str
    llvm: str


@dataclass(frozen=True)
class CompileFailure:
    source: str
    unit: str
    cpu: str
    message: str


def _run(args: list[str], cwd: Path) -> tuple[bool, str]:
    try:
        p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, f"timeout after {_TIMEOUT}s: {' '.join(args[:3])} ..."
    return p.returncode == 0, p.stderr


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    return (stderr.strip().splitlines() or ["failed"])[0][:300]


def _compile_text(ir: str, cpu: str, triple: str) -> tuple[dict[str, str] | None, str]:
    """The three assembly texts of one IR text, or (None, error)."""
    assert LLC is not None
    with tempfile.TemporaryDirectory(prefix="swpeer-") as d:
        tmp = Path(d)
        (tmp / "in.ll").write_text(ir)
        base = [LLC, f"-mtriple={triple}", f"-mcpu={cpu}"]
        ok, err = _run(base + ["-O3", "-stop-before=si-insert-waitcnts", "in.ll", "-o", "raw.mir"], tmp)
        if not ok:
            return None, err
        mir = _VCC_LO.sub(r"\1$vcc", (tmp / "raw.mir").read_text())
        (tmp / "before.mir").write_text(mir)
        (tmp / "hard.mir").write_text(_SOFT.sub(r"\1", mir))
        steps = (("nowait", "-start-after=si-insert-waitcnts", "before.mir"),
                 ("keepfence", "-start-after=si-insert-waitcnts", "hard.mir"),
                 ("llvm", "-start-before=si-insert-waitcnts", "before.mir"))
        out: dict[str, str] = {}
        for name, flag, src in steps:
            ok, err = _run(base + [flag, src, "-o", f"{name}.s"], tmp)
            if not ok:
                return None, f"{name}: {err}"
            out[name] = (tmp / f"{name}.s").read_text()
        return out, ""


def _cached_compile(ir: str, cpu: str, cache: Path) -> tuple[dict[str, str] | None, str, str]:
    """(texts, triple, error) for one IR text, through the cache."""
    key = digest(RECIPE, llc_version(), cpu, ir)
    slot = cache / "compile" / key[:2] / key
    meta = slot / "meta.json"
    if meta.exists():
        m = json.loads(meta.read_text())
        if not m["ok"]:
            return None, m["triple"], m["error"]
        return {n: (slot / f"{n}.s").read_text() for n in ("nowait", "keepfence", "llvm")}, m["triple"], ""
    texts, err = _compile_text(ir, cpu, HSA)
    triple = HSA
    if texts is None and "non-compute shaders with HSA" in err:
        triple = PLAIN
        texts, err = _compile_text(ir, cpu, PLAIN)
    slot.mkdir(parents=True, exist_ok=True)
    if texts is not None:
        for n, t in texts.items():
            (slot / f"{n}.s").write_text(t)
    tmp_meta = slot / "meta.json.tmp"
    tmp_meta.write_text(json.dumps({"ok": texts is not None, "triple": triple,
                                    "error": "" if texts is not None else _first_error(err)}))
    tmp_meta.replace(meta)
    return texts, triple, ("" if texts is not None else _first_error(err))


def defined_functions(ir: str) -> list[str]:
    return [m.group(1).strip('"') for m in _DEFINE.finditer(ir)]


def _extract(ir: str, func: str) -> str | None:
    if EXTRACT is None:
        return None
    with tempfile.TemporaryDirectory(prefix="swpeer-x-") as d:
        (Path(d) / "in.ll").write_text(ir)
        ok, _ = _run([EXTRACT, f"--func={func}", "-S", "in.ll", "-o", "f.ll"], Path(d))
        return (Path(d) / "f.ll").read_text() if ok else None


def compile_ir(path: Path, cpu: str, cache: Path | None = None) -> tuple[list[Compiled], list[CompileFailure]]:
    """Compile one IR file for `cpu`: the whole module, or function by function when the
    module as a whole does not compile."""
    cache = cache or cache_root()
    ir = path.read_text()
    name = path.name
    texts, triple, err = _cached_compile(ir, cpu, cache)
    if texts is not None:
        return [Compiled(name, name, cpu, triple, texts["nowait"], texts["keepfence"], texts["llvm"])], []
    funcs = defined_functions(ir)
    if len(funcs) <= 1:
        return [], [CompileFailure(name, name, cpu, err)]
    done: list[Compiled] = []
    failed: list[CompileFailure] = []
    for fn in funcs:
        unit = f"{name}::{fn}"
        sub = _extract(ir, fn)
        if sub is None:
            failed.append(CompileFailure(name, unit, cpu, "llvm-extract-22 failed"))
            continue
        t, tr, e = _cached_compile(sub, cpu, cache)
        if t is None:
            failed.append(CompileFailure(name, unit, cpu, e))
        else:
            done.append(Compiled(name, unit, cpu, tr, t["nowait"], t["keepfence"], t["llvm"]))
    return done, failed


def assemble(text: str, cpu: str, triple: str, cache: Path | None = None) -> tuple[bool, str]:
    """Does `text` assemble with llvm-mc-22 for `cpu`?  (ok, first error line), cached."""
    assert MC is not None
    cache = cache or cache_root()
    key = digest("mc-1", llc_version(), cpu, triple, text)
    slot = cache / "mc" / key[:2]
    slot.mkdir(parents=True, exist_ok=True)
    res = slot / f"{key}.json"
    if res.exists():
        r = json.loads(res.read_text())
        return r["ok"], r["error"]
    with tempfile.TemporaryDirectory(prefix="swpeer-mc-") as d:
        (Path(d) / "a.s").write_text(text)
        ok, err = _run([MC, f"-triple={triple}", f"-mcpu={cpu}", "-filetype=obj", "a.s", "-o", "a.o"], Path(d))
    out = {"ok": ok, "error": "" if ok else _first_error(err)}
    tmp = slot / f"{key}.tmp"
    tmp.write_text(json.dumps(out))
    tmp.replace(res)
    return ok, out["error"]
