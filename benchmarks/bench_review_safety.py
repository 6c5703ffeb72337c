"""Are the review's hints safe to follow?  Offered changes, unsafe ones, and the review's cost.

    .venv/bin/python benchmarks/bench_review_safety.py [FILE.s|FILE.s.gz ...] [--json]

Default files: the aiter gfx1250 kernels of tests/data/aiter_gfx1250 and the kernels of
../shared/corpus/asm.  Per file: the review's wall time (`analyze` + `check_diagnostics`),
its offered deletes and relaxations ("redundant" / "stricter than needed"), and how many of
them are unsafe: each change is applied alone to the file as written and the hardware
checker (validate/hwcheck.py, `check --exhaustive`'s engine, with the LDS address analysis)
runs on the edited file; a change is unsafe when that run finds a violation, proven or not,
the file as written does not have (or has with a laxer need), or does not finish (while the
file as written's run does).

Runs under any tree on PYTHONPATH (the figures before a change are taken with the old tree).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.validate.hwcheck import check_module

ROOT = Path(__file__).resolve().parents[1]
OFFERED = ("redundant-wait", "stricter-wait")


def default_files() -> list[Path]:
    out = sorted((ROOT / "tests" / "data" / "aiter_gfx1250").glob("*.s.gz"))
    corpus = ROOT.parent / "shared" / "corpus" / "asm"
    if corpus.is_dir():
        out += sorted(corpus.glob("*.s"))
    return out


def read(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", errors="replace")


def apply_alone(text: str, line: int, new: str) -> str:
    """`text` with 1-based `line` replaced by `new` (indent kept; "" empties the line)."""
    lines = text.splitlines(keepends=True)
    old = lines[line - 1]
    body = old.rstrip("\r\n")
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    lines[line - 1] = indent + new + old[len(body):]
    return "".join(lines)


def hw_findings(text: str, path: str, options: Options) -> tuple[dict, bool]:
    """(violation key -> (needs, proven), every function's search finished) of `text`."""
    module = parse(text, path, "asm")
    found: dict = {}
    finished = True
    for res in check_module(module, options, lds_addresses=True):
        finished = finished and not res.bounded and not res.trip_cut
        for v in res.violations:
            key = (res.function, v.consumer.span.line if v.consumer.span else None,
                   v.producer.span.line if v.producer.span else None, v.rule)
            found[key] = (dict(v.needs), v.proven)
    return found, finished


def unsafe(base: dict, edited: dict, finished: bool, base_finished: bool = True) -> list:
    """The edited file's violations the file as written does not have (as keys).  A search
    that does not finish proves nothing, unless the file as written's did not finish either
    (the review proves a wait its block shows idle without a search, validate/hwidle.py: the
    edited file's search is then the same search, cut where it was cut)."""
    if not finished and base_finished:
        return ["(the checker did not finish)"]
    out = []
    for key, (needs, proven) in edited.items():
        had = base.get(key)
        if had is None or (proven and not had[1]) or any(cn not in had[0] or had[0][cn] > n
                                                        for cn, n in needs.items()):
            out.append(key)
    return out


def offered_changes(text: str, path: str) -> tuple[list, float, Options]:
    t0 = time.perf_counter()
    an = analyze(text, path, Options())
    diags = an.check_diagnostics()
    ms = 1e3 * (time.perf_counter() - t0)
    out = []
    for d in diags:
        if d.code in OFFERED:
            new = d.data.get("instruction", "") if "replace_line" in d.data else ""
            out.append((d.line, new, d.code, d.message))
    return out, ms, an.options


def measure(path: Path) -> dict:
    text = read(path)
    changes, review_ms, options = offered_changes(text, str(path))
    base, base_finished = hw_findings(text, str(path), options)
    bad = []
    for line, new, code, message in changes:
        found, finished = hw_findings(apply_alone(text, line, new), str(path), options)
        u = unsafe(base, found, finished, base_finished)
        if u:
            bad.append({"line": line, "code": code, "message": message, "new_violations": len(u)})
    return {"file": path.name, "lines": text.count("\n"), "review_ms": round(review_ms),
            "offered": len(changes), "removals": sum(c[2] == "redundant-wait" for c in changes),
            "relaxations": sum(c[2] == "stricter-wait" for c in changes), "unsafe": len(bad), "unsafe_changes": bad}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    files = args.files or default_files()
    if args.json:
        json.dump([measure(p) for p in files], sys.stdout, indent=1)
        print()
        return 0
    print(f"{'file':58} {'lines':>6} {'review':>8} {'offered':>7} {'del':>4} {'relax':>5} {'unsafe':>6}", flush=True)
    for p in files:
        r = measure(p)
        print(f"{r['file']:58} {r['lines']:>6} {r['review_ms']:>6}ms {r['offered']:>7} {r['removals']:>4}"
              f" {r['relaxations']:>5} {r['unsafe']:>6}", flush=True)
        for b in r["unsafe_changes"]:
            print(f"    line {b['line']}: {b['message']} -> {b['new_violations']} new violation(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
