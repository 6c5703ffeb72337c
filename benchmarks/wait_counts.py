"""Authors' waits against ours after `--replace-waits`, per kernel (issue 14's 1.25x goal).

Usage: .venv/bin/python benchmarks/wait_counts.py [--coalesce N] KERNEL.s[.gz] ...

Counts the rebuildable wait instructions (targets.table.REBUILDABLE_WAITS) of the text as
written and of our output with those stripped and re-inserted (hardware model), and the rules
behind ours.  `--coalesce N`: the CoalesceWaits window (default: the core's, 128 on assembly).
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.targets.table import REBUILDABLE_WAITS

_WAIT = re.compile(r"^\s*(s_wait[a-z_]*)\b", re.M)


def waits(text: str) -> list[str]:
    return [m.group(1) for m in _WAIT.finditer(text) if m.group(1) in REBUILDABLE_WAITS]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--coalesce", type=int, default=-1)
    ap.add_argument("kernels", nargs="+")
    ns = ap.parse_args()
    for path in ns.kernels:
        p = Path(path)
        text = gzip.open(p, "rt").read() if p.suffix == ".gz" else p.read_text()
        an = analyze(text, p.name, Options(replace_waits=True, coalesce_window=ns.coalesce))
        a, o = waits(text), waits(an.inserted_text())
        rules: dict[str, int] = {}
        for w in an.waits():
            rules[w.rule] = rules.get(w.rule, 0) + 1
        errors = sum(d.severity == "error" for d in an.diagnostics)
        print(f"{p.name[:48]:48} authors {len(a):5} ours {len(o):5} ratio {len(o) / max(1, len(a)):.2f} "
              f"errors {errors} rules {dict(sorted(rules.items()))}")


if __name__ == "__main__":
    main()
