"""Plan speed: cold `stinkywait plan` vs `llvm-mc-22` on the same kernel, and linear scaling.

Usage: .venv/bin/python benchmarks/bench_plan.py [--repeat N] [--base DIR] [--quick] [--json] [KERNEL.s]

Prints, side by side in one run:
* the median wall and CPU (user+system) time of a whole `stinkywait plan KERNEL` process
  (interpreter start-up and imports included) and of `llvm-mc-22 -triple=amdgcn-amd-amdhsa
  -mcpu=CPU -filetype=obj` (the kernel's own target), the runs of the two interleaved so that both see the same load;
* where a cold plan's CPU goes: interpreter start-up, imports, parse, the pass and printing
  (medians over fresh processes);
* in-process `analyze` time (CPU) for the kernel and for a synthetic kernel 10x its size (the
  main loop body repeated ten times), and their ratio;
* the same for `--replace-waits` (all rebuildable waits stripped: the pass places every wait).

`--base DIR`: a checkout of an earlier version (its `stinkywait_core` is imported with
PYTHONPATH=DIR, compiled first); its cold plan is run interleaved with this tree's and
llvm-mc's, so that the before/after pair sees the same load.  `--quick`: the side-by-side
figures only (no breakdown, no scaling).  `--json`: `plan --json` (the issue's figure: it
prints the predicted stall, so the stall walk runs) instead of `plan`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
DEFAULT = os.path.join(ROOT, "..", "shared", "corpus", "asm", "aiter_gfx1250_mxscale_gemm1_final_isa.s")


def run_once(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one process; CPU is the child's user+system time.  A command
    may start with {"PYTHONPATH": DIR} (the environment it runs with)."""
    env = None
    if cmd and isinstance(cmd[0], dict):
        env = {**os.environ, **cmd[0]}
        cmd = cmd[1:]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(p.pid, 0)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def side_by_side(cmds: list[list[str]], repeat: int) -> list[tuple[float, float]]:
    """Median (wall, CPU) of each command, the commands' runs interleaved."""
    runs: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            runs[i].append(run_once(cmd))
    return [(statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for r in runs]


def wall(cmd: list[str], repeat: int) -> float:
    return side_by_side([cmd], repeat)[0][0]


_BREAKDOWN = """
import sys, time, io, contextlib
c0 = time.process_time()
import gc
gc.disable()  # as the `stinkywait` command (cli.main.console_main) runs, before the analysis imports
from stinkywait_core.cli.main import main
import stinkywait_core.api as api
c1 = time.process_time()
parse, spent = api.parse, []
def timed(*a, **k):
    t = time.process_time(); m = parse(*a, **k); spent.append(time.process_time() - t); return m
api.parse = timed
with contextlib.redirect_stdout(io.StringIO()):
    main(["plan", sys.argv[1]])
c2 = time.process_time()
print(c0, c1 - c0, spent[0], c2 - c1 - spent[0])
"""


def breakdown(kernel: str, repeat: int) -> dict[str, float]:
    """Median CPU ms of a cold plan's parts, each process measuring itself (`process_time`
    at its first statement is the interpreter's start-up)."""
    rows = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _BREAKDOWN, kernel], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.split()
        rows.append([float(x) * 1e3 for x in out])
    names = ("interpreter start-up", "imports", "parse", "pass + printing")
    return {n: statistics.median(r[i] for r in rows) for i, n in enumerate(names)}


def scaled(text: str, times: int) -> str:
    """A kernel `times` as long: the body of its main loop (between the loop label and the
    back-edge branch) is repeated until the file has `times` x the lines; the rest is kept."""
    lines = text.splitlines(keepends=True)
    branch = re.compile(r"\s*s_(?:cbranch_\w+|branch)\s+([A-Za-z_.$][\w.$]*)")
    back = next(i for i, ln in enumerate(lines) if branch.match(ln)
                and any(lines[j].startswith(branch.match(ln).group(1) + ":") for j in range(i)))
    label = branch.match(lines[back]).group(1)
    head = next(j for j in range(back) if lines[j].startswith(label + ":"))
    body = lines[head + 1:back]
    rest = len(lines) - len(body)
    factor = max(1, round((times * len(lines) - rest) / max(1, len(body))))
    return "".join(lines[:head + 1] + body * factor + lines[back:])


def replicated(text: str, times: int) -> str:
    """`times` renamed copies of the whole file in one file (kernel symbol and `.L` labels get a
    per-copy suffix): the same code `times` over, as `times` kernels."""
    from stinkywait_core.syntax import parse
    names = [f.name for f in parse(text, "k.s").functions]
    out = []
    for i in range(times):
        t = re.sub(r"\.L(\w+)", lambda m: f".L{m.group(1)}_c{i}", text)
        for n in names:
            t = re.sub(rf"\b{re.escape(n)}\b", f"{n}_c{i}", t)
        out.append(t)
    return "".join(out)


def cpu_analyze(text: str, path: str, repeat: int, **kw) -> float:
    from stinkywait_core.api import analyze
    from stinkywait_core.results import Options
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        analyze(text, path, Options(**kw))
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel", nargs="?", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--base", help="an earlier checkout to run interleaved (before/after)")
    ap.add_argument("--quick", action="store_true", help="side-by-side figures only")
    ap.add_argument("--json", action="store_true", help="time `plan --json` (it prints the predicted stall: "
                    "the stall walk runs) instead of `plan`")
    ns = ap.parse_args()
    # (both trees' bytecode compiled first: with PYTHONDONTWRITEBYTECODE set, every run would
    # compile the modules again)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "stinkywait_core")], check=True)
    plan_args = ["plan", "--json"] if ns.json else ["plan"]
    text = open(ns.kernel, encoding="utf-8").read()
    exe = os.path.join(os.path.dirname(sys.executable), "stinkywait")
    mc = shutil.which("llvm-mc-22")
    print(f"kernel: {os.path.relpath(ns.kernel)} ({text.count(chr(10))} lines), repeat {ns.repeat}")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    cmds = [[exe, *plan_args, ns.kernel]]
    if mc:
        m = re.search(r'amdgcn-amd-amdhsa--(gfx[0-9a-f]+)', text)
        cpu = m.group(1) if m else "gfx1250"
        print(f"llvm-mc-22 -mcpu={cpu}")
        cmds.append([mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=obj", ns.kernel, "-o", os.devnull])
    if ns.base:
        base = os.path.abspath(ns.base)
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(base, "stinkywait_core")], check=True)
        cmds.append([{"PYTHONPATH": base}, exe, *plan_args, ns.kernel])
    timings = side_by_side(cmds, ns.repeat)
    plan, plan_cpu = timings[0]
    print(f"cold `stinkywait plan` (whole process):          {plan * 1e3:8.1f} ms wall {plan_cpu * 1e3:8.1f} ms CPU")
    if mc:
        mct, mct_cpu = timings[1]
        print(f"`llvm-mc-22 -filetype=obj` (whole process):      {mct * 1e3:8.1f} ms wall {mct_cpu * 1e3:8.1f} ms CPU")
        print(f"ratio plan / llvm-mc:                             {plan / mct:8.2f}x wall {plan_cpu / mct_cpu:8.2f}x CPU")
    else:
        print("llvm-mc-22 not installed: no side-by-side figure")
    if ns.base:
        bt, bt_cpu = timings[-1]
        print(f"the same, {os.path.relpath(ns.base)} (before):  {bt * 1e3:8.1f} ms wall {bt_cpu * 1e3:8.1f} ms CPU")
        if mc:
            print(f"ratio before / llvm-mc:                           {bt / mct:8.2f}x wall {bt_cpu / mct_cpu:8.2f}x CPU")
    if ns.quick:
        return 0
    parts = breakdown(ns.kernel, ns.repeat)
    print("cold plan CPU by part (medians): " + ", ".join(f"{k} {v:.1f} ms" for k, v in parts.items()))
    big = scaled(text, 10)
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as fh:
        fh.write(big)
    try:
        plan10 = wall([exe, "plan", fh.name], max(1, ns.repeat // 2))
        print(f"cold `stinkywait plan`, 10x kernel ({big.count(chr(10))} lines): {plan10 * 1e3:8.1f} ms "
              f"({plan10 / plan:.2f}x)")
    finally:
        os.unlink(fh.name)
    many = replicated(text, 10)
    for kw in ({}, {"replace_waits": True}):
        tag = " --replace-waits" if kw else ""
        one = cpu_analyze(text, ns.kernel, ns.repeat, **kw)
        ten = cpu_analyze(many, ns.kernel, max(1, ns.repeat // 2), **kw)
        print(f"analyze{tag:16} 1x: {one * 1e3:8.1f} ms CPU   10 kernels: {ten * 1e3:8.1f} ms CPU   "
              f"ratio {ten / one:5.2f}")
        ten = cpu_analyze(big, ns.kernel, max(1, ns.repeat // 2), **kw)
        print(f"analyze{tag:16} 1x: {one * 1e3:8.1f} ms CPU   10x loop body: {ten * 1e3:8.1f} ms CPU   "
              f"ratio {ten / one:5.2f} (the repeated body adds cross-copy dependencies)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
