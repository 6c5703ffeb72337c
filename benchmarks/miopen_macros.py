"""MIOpen's macro-written kernels end to end (issue 19 item 1): prints figures, asserts nothing.

For each kernel (a ``.s`` of ROCm/MIOpen's ``src/kernels`` with its ``.inc`` files, read from
a git mirror with ``git show``):

1. the expansion (syntax/asm_preprocess.py) assembled by llvm-mc-22 gives the same
   instruction stream (``llvm-objdump-22 -d``) as the original;
2. ``stinkywait insert`` on the source as written (``-I`` its folder), assembled and
   disassembled, is checked by the hardware checker (``check --exhaustive`` on the
   disassembly): its violations are counted;
3. ``check`` as written and ``check`` on the expansion report the same findings (kind,
   wait, line in the open file).

    python benchmarks/miopen_macros.py [--mirror /work/.mirror/ROCm+MIOpen/repo] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from stinkywait_core.api import analyze  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_core.syntax.asm_preprocess import expand  # noqa: E402

#: (folder or file prefix under src/kernels, processor, llvm-mc -mattr)
SETS = [
    ("dynamic_igemm/igemm_gtc_nchwc_gfx1030/fwd_fp16x8/", "gfx1030", ""),
    ("dynamic_igemm/igemm_gtc_nchwc_gfx1030/fwd_fp16x4/", "gfx1030", ""),
    ("dynamic_igemm/igemm_gtc_xdlops_nhwc_gfx90a/fwd_fp16/", "gfx90a", "-xnack"),
    ("dynamic_igemm/igemm_gtc_xdlops_nhwc/fwd_fp16/", "gfx908", "-xnack"),
    ("dynamic_igemm/igemm_gtc_fwd/", "gfx908", "-xnack"),
    ("dynamic_igemm/igemm_gtc_bwd_fp16/", "gfx908", "-xnack"),
    ("conv1x1u.s", "gfx906", "-xnack"),
    ("conv1x1u_bias_activ.s", "gfx1030", "+wavefrontsize64"),
    ("conv3x3wrw.s", "gfx906", "-xnack"),
    ("conv1x1wrw.s", "gfx908", "-xnack"),
    ("Conv_Winograd_v30_3_1_fp32_f2x3_stride1.s", "gfx1030", "+wavefrontsize64"),
    ("Conv_Winograd_v30_3_1_fp16_dot2_f3x2_stride1.s", "gfx1100", "+wavefrontsize64"),
    ("Conv_Winograd_v30_3_1_fp32_f3x2_stride2.s", "gfx906", "-xnack"),
]


def git_show(mirror: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", mirror, "show", f"HEAD:{path}"], capture_output=True, check=True).stdout


def tree(mirror: str) -> list[str]:
    out = subprocess.run(["git", "-C", mirror, "ls-tree", "-r", "--name-only", "HEAD", "src/kernels"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def kernels(files: list[str], per_set: int) -> list[tuple[str, str, str]]:
    out = []
    for prefix, cpu, mattr in SETS:
        full = "src/kernels/" + prefix
        chosen = [f for f in files if f.startswith(full) and f.endswith(".s")][:per_set]
        out.extend((f, cpu, mattr) for f in chosen)
    return out


def stage(mirror: str, files: list[str], kernel: str, work: str) -> str:
    """The kernel and every .inc of its folder and of src/kernels, in `work`."""
    folder = os.path.dirname(kernel)
    for f in files:
        if os.path.dirname(f) in (folder, "src/kernels") and f.endswith(".inc") or f == kernel:
            dst = os.path.join(work, os.path.basename(f))
            if not os.path.exists(dst):
                with open(dst, "wb") as fh:
                    fh.write(git_show(mirror, f))
    return os.path.join(work, os.path.basename(kernel))


def assemble(src: str, cpu: str, mattr: str, inc: str, obj: str) -> str | None:
    cmd = ["llvm-mc-22", "-triple", "amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=obj", "-I", inc, "-o", obj, src]
    if mattr:
        cmd.insert(4, f"-mattr={mattr}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    return None if r.returncode == 0 else r.stderr.strip().splitlines()[0] if r.stderr.strip() else "failed"


def disassemble(obj: str) -> str:
    out = subprocess.run(["llvm-objdump-22", "-d", obj], capture_output=True, text=True, check=True).stdout
    return out


def stream(dis: str) -> list[str]:
    body = dis.split("Disassembly of section", 1)[-1]
    return [re.sub(r"\s*//.*", "", ln).strip() for ln in body.splitlines() if ln.startswith("\t")]


def findings(an) -> list[tuple]:
    """(kind, line, wait) of every finding of `check`; a wait only the macro body can hold
    (``wait-inside-macro``) is the missing wait it stands for."""
    out = [(d.code, d.line, d.data.get("instruction") or d.message.split(" (")[0]) for d in an.check_diagnostics()]
    out += [("missing-wait", d.line, d.data["instruction"]) for d in an.diagnostics if d.code == "wait-inside-macro"]
    return sorted(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror/ROCm+MIOpen/repo")
    ap.add_argument("--per-set", type=int, default=2)
    ns = ap.parse_args()
    if shutil.which("llvm-mc-22") is None or not os.path.isdir(ns.mirror):
        print("needs llvm-mc-22 and the MIOpen mirror")
        return 0
    files = tree(ns.mirror)
    totals = dict(kernels=0, same_stream=0, waits=0, violations=0, refused=0, equal_findings=0, instructions=0)
    for kernel, cpu, mattr in kernels(files, ns.per_set):
        with tempfile.TemporaryDirectory() as work:
            src = stage(ns.mirror, files, kernel, work)
            text = open(src, encoding="utf-8", errors="replace").read()
            opts = Options(arch=cpu, include_paths=(work,))
            ex = expand(text, src, (work,), cpu)
            exp_path = os.path.join(work, "expanded.s")
            with open(exp_path, "w") as fh:
                fh.write(ex.text)
            err_o = assemble(src, cpu, mattr, work, os.path.join(work, "o.o"))
            err_e = assemble(exp_path, cpu, mattr, work, os.path.join(work, "e.o"))
            if err_o:
                print(f"{os.path.basename(kernel)[:60]} ({cpu}): the original does not assemble: {err_o}")
                continue
            totals["kernels"] += 1
            so = stream(disassemble(os.path.join(work, "o.o")))
            se = stream(disassemble(os.path.join(work, "e.o"))) if not err_e else []
            same = so == se
            totals["same_stream"] += same
            totals["instructions"] += len(so)
            an = analyze(text, src, opts)
            waits = len({(w.insert_line, w.insert_text) for w in an.waits()})
            out = an.inserted_text()
            ins_path = os.path.join(work, "inserted.s")
            with open(ins_path, "w") as fh:
                fh.write(out)
            refused = bool(an.incomplete)
            totals["refused"] += refused
            err_i = assemble(ins_path, cpu, mattr, work, os.path.join(work, "i.o"))
            violations = -1
            if not err_i:
                dis_path = os.path.join(work, "inserted.dis.s")
                with open(dis_path, "w") as fh:
                    fh.write(disassemble(os.path.join(work, "i.o")))
                r = subprocess.run([sys.executable, "-m", "stinkywait_core.cli", "check", "--exhaustive", "--arch",
                                    cpu, dis_path], capture_output=True, text=True, cwd=ROOT)
                violations = len(re.findall(r": error: ", r.stdout + r.stderr))
            totals["waits"] += waits
            totals["violations"] += max(0, violations)
            as_written = findings(an)
            expanded = findings(analyze(ex.text, exp_path, opts))
            # the expansion's findings, moved to the open file's lines
            moved = sorted((c, ex.source_map.user_line(line), m) for c, line, m in expanded)
            equal = sorted(as_written) == moved
            totals["equal_findings"] += equal
            print(f"{os.path.basename(kernel)[:70]} ({cpu}): {len(so)} instructions, expansion stream "
                  f"{'identical' if same else 'DIFFERS' if not err_e else 'does not assemble: ' + err_e}; "
                  f"{waits} waits inserted{' (incomplete: ' + str(len(an.incomplete)) + ')' if refused else ''}; "
                  f"hwcheck on the assembled output: {violations if violations >= 0 else 'not assembled: ' + str(err_i)}"
                  f" violations; findings as written {len(as_written)} vs expansion {len(moved)}: "
                  f"{'equal' if equal else 'DIFFER'}")
    print("totals:", ", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
