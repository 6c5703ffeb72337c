"""A digest of everything the front ends produce, to show that a speed-up changed nothing.

Usage: ``.venv/bin/python benchmarks/parse_digest.py [--out FILE] [--check FILE] [PATH ...]``

For every input (by default: the corpus kernels and LLVM 22 pairs in ``../shared/corpus/asm``,
``examples/``, ``tests/data/aiter_gfx1250/*.s.gz`` and the upstream conformance inputs in
``../shared/conformance/upstream``), a fresh interpreter parses the text cold (empty line and
operand caches, as `stinkywait plan` does), then parses it again (warm caches) and after that
re-parses a version with one instruction line edited and then the original again through
``previous=`` (the incremental path).  Each parse is serialised: every function, block (label,
span, successor and predecessor labels), instruction (every field the front end sets: mnemonic,
dsts, srcs with their spellings, i.e. the physical VGPRs under ``s_set_vgpr_msb``, mods,
span, text, comment, suffix, flags), the line table (every `AsmLine` field) and every
diagnostic, plus the target record.  The cold, warm and incremental serialisations must be
equal (else the script says so and exits 1); the printed line per file is the SHA-256 of the
cold one.  ``--check FILE`` compares with a saved ``--out``: it lists the files whose digest
changed and exits 1 if any did.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")


def default_inputs() -> list[str]:
    """The inputs named in the module docstring that exist on this machine, sorted."""
    found: list[str] = []
    for folder, exts in ((os.path.join(SHARED, "corpus", "asm"), (".s",)),
                         (os.path.join(SHARED, "corpus", "asm", "llvm22-pairs"), (".s",)),
                         (os.path.join(ROOT, "examples"), (".s", ".stir")),
                         (os.path.join(ROOT, "tests", "data", "aiter_gfx1250"), (".s.gz",)),
                         (os.path.join(SHARED, "conformance", "upstream"), (".stir",)),
                         (os.path.join(SHARED, "conformance", "upstream", "experimental"), (".stir",))):
        if os.path.isdir(folder):
            found += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(exts)]
    return found


def read_text(path: str) -> str:
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
            return f.read()
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def serialise(module: object) -> str:
    """Every observable result of one parse as text (see the module docstring)."""
    out: list[str] = [f"target {module.target_info!r}"]  # type: ignore[attr-defined]
    index: dict[int, int] = {}
    for fn in module.functions:  # type: ignore[attr-defined]
        out.append(f"function {fn.name!r} {fn.span!r} {fn.name_span!r}")
        for b in fn.blocks:
            out.append(f" block {b.label!r} {b.index} {b.span!r} succ_labels={b.succ_labels!r} "
                       f"succs={[s.label for s in b.succs]!r} preds={[p.label for p in b.preds]!r}")
            for inst in b.instrs:
                index[id(inst)] = len(index)
                mods = sorted((k, repr(v)) for k, v in inst.mods.items())
                out.append(f"  {inst.mnemonic!r} dsts={inst.dsts!r} srcs={inst.srcs!r} mods={mods!r} "
                           f"span={inst.span!r} text={inst.text!r} comment={inst.comment!r} suffix={inst.suffix!r} "
                           f"cycles={inst.cycles!r} label={inst.is_label} phi={inst.is_phi} "
                           f"inserted={inst.inserted} block={inst.block.label if inst.block else None!r}")
    if module.kind == "asm":  # type: ignore[attr-defined]
        for ln in module.lines:  # type: ignore[attr-defined]
            inst = ln.instruction
            out.append(f"line {ln.kind} {ln.span!r} {ln.text!r} inst={index.get(id(inst)) if inst else None} "
                       f"label={ln.label!r} directive={ln.directive!r} indent={ln.indent!r} "
                       f"comment={ln.comment!r} label_span={ln.label_span!r}")
    for d in module.diagnostics:  # type: ignore[attr-defined]
        out.append(f"diag {d!r}")
    return "\n".join(out) + "\n"


def _edited(text: str) -> str:
    """`text` with its middle instruction-looking line changed (for the incremental parse)."""
    lines = text.split("\n")
    candidates = [i for i, ln in enumerate(lines) if ln.strip()[:2] in ("s_", "v_")]
    if not candidates:
        return text + "\n"
    i = candidates[len(candidates) // 2]
    lines[i] = lines[i] + " // edited"
    return "\n".join(lines)


def worker(path: str) -> int:
    """Digest of one file (fresh interpreter: the caches start empty)."""
    sys.path.insert(0, ROOT)
    from stinkywait_core.syntax import parse
    text = read_text(path)
    name = path[:-3] if path.endswith(".gz") else path
    cold = serialise(parse(text, name))
    warm_module = parse(text, name)
    warm = serialise(warm_module)
    edited = parse(_edited(text), name, previous=warm_module)
    again = serialise(parse(text, name, previous=edited))
    if not (cold == warm == again):
        which = "warm" if cold != warm else "incremental"
        print(f"MISMATCH {which} {path}")
        return 1
    print(hashlib.sha256(cold.encode()).hexdigest())
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--out", help="write the digests here")
    ap.add_argument("--check", help="compare with digests written by --out")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    paths = args.paths or default_inputs()

    def one(path: str) -> tuple[str, str]:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path], capture_output=True,
                           text=True, cwd=ROOT)
        if p.returncode != 0:
            return path, p.stdout.strip() or "FAILED " + (p.stderr.strip().splitlines() or [""])[-1]
        return path, p.stdout.strip()

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(one, paths))
    lines = [f"{digest}  {os.path.relpath(path, ROOT)}" for path, digest in results]
    bad = [ln for ln in lines if not ln[:64].isalnum() or len(ln.split()[0]) != 64]
    total = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    print("\n".join(lines))
    print(f"{len(lines)} files, total {total}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    status = 1 if bad else 0
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            saved = dict((ln.split("  ", 1)[1], ln.split("  ", 1)[0]) for ln in f.read().splitlines() if ln)
        now = dict((ln.split("  ", 1)[1], ln.split("  ", 1)[0]) for ln in lines)
        changed = sorted(p for p in set(saved) | set(now) if saved.get(p) != now.get(p))
        for p in changed:
            print(f"CHANGED {p}")
        print("digests identical" if not changed else f"{len(changed)} digests changed")
        status = status or (1 if changed else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
