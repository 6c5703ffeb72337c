#!/usr/bin/env python3
"""Regenerate ``stinkywait_core/targets/data/mnemonics/<cpu>.txt.gz``: every mnemonic llvm-mc-22
accepts on each CPU, with what LLVM 22 itself says the instruction does.

Why this is complete.  llvm-mc's AMDGPU assembler turns a statement into an MCInst in exactly
one way: ``parseInstruction`` strips a forced-encoding suffix (``_e32``, ``_e64``, ``_dpp``,
``_sdwa``, ``_e64_dpp``), applies the target's mnemonic aliases (``applyMnemonicAliases``) and
then ``MatchInstructionImpl`` looks the mnemonic up in the matcher's ``MnemonicTable``; a
mnemonic outside that table can never become an instruction.  We read that table (and the
match rows behind it) straight out of LLVM 22's own ``libLLVMAMDGPUAsmParser.a``
(`llvm_libtables`), so the candidate list is the assembler's, not a guess.  Each candidate is
then fed *bare* to ``llvm-mc-22 -mcpu=CPU`` (default wave size, and the other wave size on
gfx10+): the matcher answers "instruction not supported on this GPU" exactly when no row of
that mnemonic has its required assembler predicates on this CPU (``checkUnsupportedInstruction``
runs before any operand diagnostic), "instruction requires wavesize=N" when only the other
wave size has one, and an operand error ("too few operands", ...) or success otherwise.  So the
accepted set per CPU is exact for every table mnemonic.

What this cannot see: an alias *source* that is not itself in ``MnemonicTable`` (aliases are
compiled into code, not data).  AMDGPU's aliases rename instructions across generations
(``buffer_load_dword`` -> ``buffer_load_b32``, ``s_setpc_b64`` -> ``s_set_pc_i64``), so their
sources are the older generation's real names, which are in the table: they are probed like
every other name and show up as accepted with a different canonical (printed) name.  The
forced-encoding suffixes are not separate mnemonics and are not listed.

Per-mnemonic facts.  For every accepted mnemonic a valid operand form is searched for (a beam
search over a small operand vocabulary, guided by llvm-mc's own "too few operands" answer; then
all-one-token forms; then operands borrowed from a sibling's form, one register replaced) and
assembled with ``-show-inst``: that gives the canonical printed mnemonic and the MCInst opcode
this CPU uses.  The opcode's ``MCInstrDesc`` (flags and AMDGPU TSFlags, read from
``libLLVMAMDGPUDesc.a``) says which encoding family it is, which counters LLVM marks it as
using, whether it may load/store and whether it is a branch/call/return/terminator.  The other
forms of the mnemonic on this CPU (``lds`` DMA variants, ``_SADDR``, returning atomics...) are
the match rows whose required predicates are all available on the CPU; the available set is
learnt from the forms that assembled (a row that matched had all its predicates), which is a
safe under-approximation, and checked: no rejected mnemonic may have an available row.

"Touches memory, a counter or message queue, or control flow" (column ``kind``) is decided from
those LLVM signals alone (see `classify`), not from stinkywait's tables.

    python3 scripts/llvm_inventory.py [--out DIR] [--cpus gfx942,gfx1250] [--jobs 2]
                                      [--probe-cache FILE]

Deterministic: the output depends only on the installed LLVM 22 (no randomness, sorted; two
independent runs give the same bytes).  All eleven CPUs take 5-9 minutes on two cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llvm_libtables  # noqa: E402  (a sibling script module)
from llvm_libtables import MatchEntry, Opcode, Tables  # noqa: E402

CPUS = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100",
        "gfx1200", "gfx1201", "gfx1250")
LLVM_MC = "llvm-mc-22"
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "stinkywait_core/targets/data/mnemonics"

#: operand tokens tried, most common first (the beam keeps the first viable ones)
VOCAB = ("v0", "v[0:1]", "s[0:3]", "s0", "s[0:1]", "off", "0", "v[0:3]", "s[0:7]", "v[0:2]",
         "v[0:7]", "v[0:15]", "a[0:3]", "a0", "a[0:15]", "a[0:1]", "v[0:4]", "v[0:5]",
         "v[0:10]", "v[0:11]", "v[0:31]", "a[0:31]", "s[0:15]", "vcc", "vcc_lo", "exec", "m0",
         "null", "-1", "lbl", "attr0.x", "mrt0", "sendmsg(MSG_INTERRUPT)",
         "sendmsg(MSG_RTN_GET_REALTIME)", "hwreg(HW_REG_MODE)", "0x1", "1", "[v0, v1]",
         "[v0, v1, v2]", "[v0, v1, v2, v3]", "[v0, v1, v2, v3, v4]",
         "[v0, v1, v[2:4], v[5:7], v[8:10]]", "[v[0:1], v2, v[3:5], v[6:8], v[9:11]]")
#: endings tried after a viable prefix (modifiers a form may need to be complete)
ENDINGS = ("", " dmask:0x1 dim:SQ_RSRC_IMG_1D", " dim:SQ_RSRC_IMG_1D", " dmask:0x1",
           " dmask:0x1 unorm", " dmask:0x1 dim:SQ_RSRC_IMG_1D unorm", " dmask:0x3 unorm",
           " dmask:0x3 dim:SQ_RSRC_IMG_1D unorm", " dmask:0x3 dim:SQ_RSRC_IMG_1D",
           " dmask:0x1 dim:SQ_RSRC_IMG_2D_MSAA", " lds", " gds", " offen",
           " :: v_dual_mov_b32 v1, v1")
#: beam width of the first pass, and of the retry for the few mnemonics it leaves without a form
BEAM = 3
WIDE_BEAM = 12
DEPTH = 7

_ERR = re.compile(r"^.*?:(\d+):(\d+): error: (.*)$")
_INST = re.compile(r"^\t(\S.*?)\s*; <MCInst #(\d+) ([A-Za-z0-9_]+)")


@dataclass
class Outcome:
    """llvm-mc's answer to one input line."""

    ok: bool
    message: str = ""
    column: int = 0
    text: str = ""
    opcode: int = -1


def run_mc(cpu: str, lines: list[str], mattr: str = "") -> list[Outcome]:
    """Assemble `lines` (one statement each) for `cpu` and return one outcome per line."""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        cmd = [LLVM_MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-show-inst", path]
        if mattr:
            cmd.insert(3, f"-mattr={mattr}")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    finally:
        Path(path).unlink()
    failed: dict[int, Outcome] = {}
    for line in proc.stderr.splitlines():
        m = _ERR.match(line)
        if m and int(m.group(1)) - 1 not in failed:
            failed[int(m.group(1)) - 1] = Outcome(False, m.group(3), int(m.group(2)))
    insts = [Outcome(True, text=m.group(1), opcode=int(m.group(2)))
             for m in map(_INST.match, proc.stdout.splitlines()) if m]
    out, it = [], iter(insts)
    for k in range(len(lines)):
        if k in failed:
            out.append(failed[k])
        else:
            got = next(it, None)
            if got is None:
                raise RuntimeError(f"{cpu}: llvm-mc printed fewer instructions than expected")
            out.append(got)
    if next(it, None) is not None:
        raise RuntimeError(f"{cpu}: llvm-mc printed more instructions than expected")
    return out


def other_wave(cpu: str) -> str:
    """The -mattr that selects the non-default wave size, '' where there is none."""
    return "+wavefrontsize64" if cpu.startswith("gfx1") and cpu != "gfx1250" else ""


@dataclass
class Probe:
    """What llvm-mc says about one mnemonic on one CPU."""

    accepted: bool = False
    wave: str = ""            # "", "wave32", "wave64": accepted only in that wave size
    form: str = ""
    printed: str = ""         # the canonical mnemonic llvm-mc prints for the form
    opcode: int = -1

    def record(self, form: str, res: "Outcome") -> None:
        """Keep `form`, which assembled as `res`."""
        self.form, self.printed, self.opcode = form, first(res.text), res.opcode


def probe_cpu(cpu: str, mnemonics: tuple[str, ...]) -> dict[str, Probe]:
    """Accepted mnemonics of `cpu` (bare probe) and a sample form for each (beam search)."""
    probes = {m: Probe() for m in mnemonics}
    modes = [""] + ([other_wave(cpu)] if other_wave(cpu) else [])
    accepted_in: dict[str, set[str]] = {}
    for mattr in modes:
        accepted_in[mattr] = set()
        for m, res in zip(mnemonics, run_mc(cpu, list(mnemonics), mattr)):
            if res.ok or not any(s in res.message for s in _UNKNOWN):
                accepted_in[mattr].add(m)
                p = probes[m]
                if res.ok and not p.form:
                    p.record(m, res)
    mode_of: dict[str, str] = {}
    for m, p in probes.items():
        inside = [mattr for mattr in modes if m in accepted_in[mattr]]
        if inside:
            p.accepted, mode_of[m] = True, inside[0]
            if len(modes) > 1 and len(inside) == 1:
                p.wave = "wave32" if inside[0] == "" else "wave64"
    for mattr in modes:
        todo = [m for m, p in probes.items() if p.accepted and not p.form and mode_of[m] == mattr]
        search_forms(cpu, mattr, todo, probes, BEAM)
        todo = [m for m in todo if not probes[m].form]
        uniform_forms(cpu, mattr, todo, probes)
        todo = [m for m in todo if not probes[m].form]
        borrowed_forms(cpu, mattr, todo, probes)
        todo = [m for m in todo if not probes[m].form]
        search_forms(cpu, mattr, todo, probes, WIDE_BEAM)
    return probes


#: llvm-mc's answers for a mnemonic that does not exist on the CPU (or in this wave size)
_UNKNOWN = ("not supported on this GPU", "requires wavesize", "invalid instruction")


def first(text: str) -> str:
    return text.split(None, 1)[0] if text else ""


def search_forms(cpu: str, mattr: str, todo: list[str], probes: dict[str, Probe],
                 beam: int) -> None:
    """Beam search for one valid operand form of each mnemonic in `todo`: a prefix is kept
    while llvm-mc answers "too few operands" for it (some match row accepts it so far)."""
    beams = {m: [""] for m in todo}
    for _depth in range(DEPTH):
        lines, owners = [], []
        for m, prefixes in beams.items():
            for prefix in prefixes:
                for ending in endings_for(m) if prefix else endings_for(m)[1:]:
                    lines.append(f"{m}{prefix}{ending}")
                    owners.append((m, prefix, None))
                for tok in VOCAB:
                    lines.append(f"{m}{prefix}{', ' if prefix else ' '}{tok}")
                    owners.append((m, prefix, tok))
        if not lines:
            return
        results = run_mc(cpu, lines, mattr)
        # viable extensions per mnemonic and parent prefix, in vocabulary order
        grown: dict[str, dict[str, list[str]]] = {}
        done: set[str] = set()
        for (m, prefix, tok), line, res in zip(owners, lines, results):
            if m in done:
                continue
            if res.ok:
                probes[m].record(line, res)
                done.add(m)
            elif tok is not None and viable(res):
                grown.setdefault(m, {}).setdefault(prefix, []).append(
                    f"{prefix}{', ' if prefix else ' '}{tok}")
        # keep `beam` of them, taken round-robin over the parents so that one early prefix
        # (``v0``) does not crowd out its siblings (``v[0:1]``)
        nxt: dict[str, list[str]] = {}
        for m, by_parent in grown.items():
            queues, keep = list(by_parent.values()), []
            while len(keep) < beam and any(queues):
                for q in queues:
                    if q and len(keep) < beam:
                        keep.append(q.pop(0))
            nxt[m] = keep
        beams = {m: v for m, v in nxt.items() if m not in done}


def endings_for(mnemonic: str) -> tuple[str, ...]:
    """The `ENDINGS` worth trying for a mnemonic (image modifiers only on images, ...)."""
    word = "v_dual" if mnemonic.startswith("v_dual_") else mnemonic.split("_")[0]
    keep = {"image": ("dmask", "dim"), "buffer": ("lds", "offen"), "global": ("lds",),
            "ds": ("gds",), "v_dual": ("::",)}.get(word, ())
    return ("",) + tuple(e for e in ENDINGS[1:] if any(k in e for k in keep))


def viable(res: Outcome) -> bool:
    """Some match row accepts the operands so far: more are needed ("too few operands"), or
    the statement matched and only the whole-instruction checks after matching complained
    (reported at the mnemonic: "missing dim operand", image dmask/size checks, ...)."""
    if res.message == "too few operands for instruction":
        return True
    return res.column == 1 and not any(s in res.message for s in _UNKNOWN + (_MISSING_FEATURE,))


_MISSING_FEATURE = "operands are not valid for this GPU or mode"


def uniform_forms(cpu: str, mattr: str, todo: list[str], probes: dict[str, Probe]) -> None:
    """Forms whose operands are all one token (``v_fma_f64 v[0:1], v[0:1], v[0:1], v[0:1]``):
    the "too few operands" answer is not monotone for VOP3 rows, where a shorter prefix is
    reported against the row with source modifiers, so the beam can miss these."""
    lines, owners = [], []
    for m in todo:
        for tok in VOCAB:
            for arity in range(1, DEPTH):
                for ending in endings_for(m):
                    lines.append(f"{m} " + ", ".join([tok] * arity) + ending)
                    owners.append(m)
    for m, line, res in zip(owners, lines, run_mc(cpu, lines, mattr) if lines else []):
        if res.ok and not probes[m].form:
            probes[m].record(line, res)


def borrowed_forms(cpu: str, mattr: str, todo: list[str], probes: dict[str, Probe]) -> None:
    """Operands of forms already found for a sibling (same first word: ``image_``,
    ``buffer_``...) on this CPU, as they are and with one operand replaced by another register
    tuple: ``image_sample_c_l`` takes ``image_sample``'s operands with a 3-address list."""
    pool: dict[str, set[str]] = {}
    for m, p in probes.items():
        if p.form and p.form != m:
            pool.setdefault(m.split("_")[0], set()).add(p.form[len(m):])
    lines, owners = [], []
    for m in todo:
        variants: set[str] = set()
        for operands in pool.get(m.split("_")[0], ()):
            variants.add(operands)
            items = _split_operands(operands.strip())
            for k, item in enumerate(items):
                tail = item.split(" ", 1)[1] if k == len(items) - 1 and " " in item else ""
                for tok in REGISTER_TOKENS:
                    repl = tok + (" " + tail if tail else "")
                    variants.add(" " + ", ".join(items[:k] + [repl] + items[k + 1:]))
        for operands in sorted(variants):
            lines.append(m + operands)
            owners.append(m)
    for m, line, res in zip(owners, lines, run_mc(cpu, lines, mattr) if lines else []):
        if res.ok and not probes[m].form:
            probes[m].record(line, res)


#: the register tuples `borrowed_forms` substitutes (VGPR tuples and NSA address lists)
REGISTER_TOKENS = tuple(t for t in VOCAB if t.startswith(("v", "[")))


def _split_operands(text: str) -> list[str]:
    """Top-level comma-separated items (commas inside ``[...]`` do not split)."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return items + [cur.strip()] if cur.strip() else items


# --- LLVM's own classification ----------------------------------------------------------------

#: TSFlags encoding formats that are memory / export / LDS-parameter instructions
MEM_FORMATS = ("DS", "LDSDIR", "MUBUF", "MTBUF", "FLAT", "SMRD", "MIMG", "VIMAGE", "VSAMPLE",
               "EXP")
COUNTERS = tuple((bit, bit) for bit in ("VM_CNT", "LGKM_CNT", "EXP_CNT", "TENSOR_CNT",
                                         "ASYNC_CNT"))
OTHER_BITS = (("FlatGlobal", "global"), ("FlatScratch", "scratch"), ("IsAtomicRet", "atomic-ret"),
              ("IsAtomicNoRet", "atomic-noret"), ("GWS", "GWS"), ("SCALAR_STORE", "scalar-store"),
              ("Gather4", "gather4"))
MCID_SIGNALS = (("may_load", "load"), ("may_store", "store"), ("branch", "branch"),
                ("indirect_branch", "indirect"), ("call", "call"), ("return", "return"),
                ("terminator", "terminator"), ("barrier", "no-fallthrough"), ("trap", "trap"))
#: opcode-name rules (LLVM's opcode names) for what TSFlags/MCID do not mark: waits, messages,
#: barriers, cache maintenance, PC writes
NAME_RULES = (("wait", re.compile(r"^S_WAIT")),
              ("msg", re.compile(r"^S_SENDMSG|^S_TTRACEDATA")),
              ("barrier", re.compile(r"BARRIER")),
              ("cache", re.compile(r"^S_(DCACHE|ICACHE|GL1_INV)|^GLOBAL_(INV|WB)"
                                   r"|^BUFFER_(WB|INV|GL)")),
              ("ctrl", re.compile(r"^S_(SETPC|SWAPPC|SET_PC|SWAP_PC|CALL|RFE|ENDPGM|TRAP|CBRANCH"
                                  r"|BRANCH|SETHALT)")))
SIGNAL_ORDER = (MEM_FORMATS + tuple(s for _, s in COUNTERS + OTHER_BITS + MCID_SIGNALS)
                + tuple(f"name:{k}" for k, _ in NAME_RULES))
KIND_ORDER = ("ctrl", "wait", "barrier", "msg", "cache", "mem")


def family_of(op: Opcode) -> str:
    """LLVM's encoding family of one opcode, from its TSFlags."""
    if op.has("FLAT"):
        return "global" if op.has("FlatGlobal") else "scratch" if op.has("FlatScratch") else "flat"
    for bit, name in (("DS", "ds"), ("LDSDIR", "ldsdir"), ("MUBUF", "buffer"), ("MTBUF", "tbuffer"),
                      ("SMRD", "smem"), ("MIMG", "image"), ("VIMAGE", "image"),
                      ("VSAMPLE", "image"), ("EXP", "export")):
        if op.has(bit):
            return name
    if op.has("TENSOR_CNT"):
        return "tensor"
    for bit, name in (("SOPP", "sopp"), ("SOPK", "sopk"), ("SOP1", "sop1"), ("SOP2", "sop2"),
                      ("SOPC", "sopc")):
        if op.has(bit):
            return name
    if op.has("VALU") or op.name.startswith("V_"):
        return "valu"
    return "salu" if op.has("SALU") else "other"


def signals(op: Opcode) -> list[str]:
    """The LLVM signals of one opcode that make it memory/counter/message/control relevant."""
    out = [b for b in MEM_FORMATS if op.has(b)]
    out += [short for bit, short in COUNTERS if op.has(bit)]
    out += [short for bit, short in OTHER_BITS if op.has(bit)]
    out += [short for bit, short in MCID_SIGNALS if op.mcid(bit)]
    out += [f"name:{kind}" for kind, rx in NAME_RULES if rx.search(op.name)]
    return out


def classify(ops: list[Opcode]) -> str:
    """One kind for a mnemonic: ctrl, wait, barrier, msg, cache, mem, or alu (none of those)."""
    kinds: set[str] = set()
    for op in ops:
        sig = signals(op)
        kinds |= {s[5:] for s in sig if s.startswith("name:")}
        if any(s in sig for s in ("branch", "call", "return", "terminator", "no-fallthrough",
                                  "trap")):
            kinds.add("ctrl")
        if any(s in sig for s in MEM_FORMATS + tuple(c for c, _ in COUNTERS) + ("load", "store")):
            kinds.add("mem")
    return next((k for k in KIND_ORDER if k in kinds), "alu")


# --- per-CPU assembly of the facts ----------------------------------------------------------

@dataclass
class Row:
    mnemonic: str
    kind: str
    family: str
    signals: list[str]
    extra: list[str]
    canonical: str
    opcode: str
    form: str
    wave: str
    variants: int = 0
    notes: list[str] = field(default_factory=list)


def learn_features(tables: Tables, probes: dict[str, Probe]) -> int:
    """Assembler predicates certainly available: every row that can produce an opcode that
    assembled shares the predicates of the row that did match."""
    rows_of_opcode: dict[int, list[MatchEntry]] = {}
    for e in tables.entries:
        rows_of_opcode.setdefault(e.opcode, []).append(e)
    have = 0
    for p in probes.values():
        if p.opcode >= 0:
            rows = rows_of_opcode.get(p.opcode, [])
            if rows:
                common = rows[0].features
                for r in rows[1:]:
                    common &= r.features
                have |= common
    return have


#: forced-encoding suffixes llvm-mc prints after a mnemonic (not part of its name)
ENCODING_SUFFIXES = ("_e64_dpp", "_e32", "_e64", "_sdwa", "_dpp")


def canonical_name(typed: str, printed: str, table: dict[str, list[MatchEntry]]) -> str:
    """The mnemonic an accepted name stands for: `typed` itself unless llvm-mc prints another
    name for it (an alias: ``buffer_load_dword`` -> ``buffer_load_b32``).  The printer's
    encoding suffix (``v_add_f32`` -> ``v_add_f32_e32``) does not make an alias."""
    if not printed or printed == typed:
        return typed
    for suffix in ENCODING_SUFFIXES:
        if printed.endswith(suffix) and printed[:-len(suffix)] in table:
            printed = printed[:-len(suffix)]
            break
    return printed


def build_rows(cpu: str, tables: Tables, probes: dict[str, Probe]) -> tuple[list[Row], list[str]]:
    by_m = tables.by_mnemonic()
    have = learn_features(tables, probes)
    problems: list[str] = []

    def available(m: str) -> list[MatchEntry]:
        return [e for e in by_m.get(m, []) if e.features & ~have == 0]

    for m, p in probes.items():
        if not p.accepted and available(m):
            problems.append(f"{cpu}: {m} rejected but a match row looks available")
    rows = []
    for m, p in sorted(probes.items()):
        if not p.accepted:
            continue
        canonical = canonical_name(m, p.printed, by_m)
        entries = available(m) + (available(canonical) if canonical != m else [])
        ops = sorted({e.opcode for e in entries})
        notes = []
        if p.opcode >= 0 and p.opcode not in ops:
            ops.append(p.opcode)
        if not ops:
            ops = sorted({e.opcode for e in by_m.get(m, [])})
            notes.append("rows-unresolved")
        sample = tables.opcodes[p.opcode] if p.opcode >= 0 else None
        all_ops = [tables.opcodes[o] for o in ops]
        per_op = [set(signals(o)) for o in all_ops]
        union = set().union(*per_op)
        common = set.intersection(*per_op)
        families = sorted({family_of(o) for o in ([sample] if sample else all_ops)})
        rows.append(Row(m, classify(all_ops), "|".join(families),
                        [s for s in SIGNAL_ORDER if s in common],
                        [s for s in SIGNAL_ORDER if s in union - common],
                        canonical if canonical != m else "=", sample.name if sample else "-",
                        p.form or "-", p.wave, len(ops), notes))
    return rows, problems


HEADER = """\
# LLVM 22 mnemonic inventory for {cpu}: every mnemonic llvm-mc-22 accepts
# (written by scripts/llvm_inventory.py)
# {version}
# columns (tab-separated): mnemonic, kind, family, signals, extra, canonical, opcode, variants, form
#   kind: ctrl|wait|barrier|msg|cache|mem (touches memory, a counter or message queue, or control
#         flow, by LLVM's own opcode flags and names) or alu
#   family: LLVM's encoding family of the sample form's opcode (TSFlags)
#   signals: the TSFlags/MCInstrDesc signals every form of the mnemonic on this CPU has; extra:
#            signals only some forms have (the lds DMA variant of a buffer load, the returning
#            form of an atomic); '-' for none
#   canonical: the mnemonic llvm-mc prints ('=' same); opcode: MCInst opcode of the sample form
#   variants: match-table opcodes of the mnemonic available on this CPU; form: a form that
#            assembles ('-' none found); a trailing "wave64"/"wave32" marks a wave-size-only name
"""


def render(cpu: str, rows: list[Row], version: str) -> str:
    out = [HEADER.format(cpu=cpu, version=version)]
    for r in rows:
        sig = ",".join(r.signals) or "-"
        extra = ",".join(r.extra) or "-"
        tail = "\t".join(x for x in (r.wave, *r.notes) if x)
        line = "\t".join((r.mnemonic, r.kind, r.family, sig, extra, r.canonical, r.opcode,
                          str(r.variants), r.form))
        out.append(line + ("\t" + tail if tail else "") + "\n")
    return "".join(out)


def _cache_key(version: str, tables: Tables) -> str:
    return f"{version} {len(tables.mnemonics)} mnemonics {len(tables.entries)} rows"


def load_cache(path: Path | None, version: str, tables: Tables) -> dict[str, dict[str, Probe]]:
    """Probe results of an earlier run with the same LLVM (empty if none or another LLVM)."""
    if path is None or not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if data.get("key") != _cache_key(version, tables):
        return {}
    return {cpu: {m: Probe(*v) for m, v in probes.items()} for cpu, probes in data["cpus"].items()}


def save_cache(path: Path, version: str, tables: Tables, results: dict[str, dict[str, Probe]]
               ) -> None:
    cpus = {cpu: {m: [p.accepted, p.wave, p.form, p.printed, p.opcode] for m, p in probes.items()}
            for cpu, probes in results.items()}
    path.write_text(json.dumps({"key": _cache_key(version, tables), "cpus": cpus}))


def llvm_version() -> str:
    text = subprocess.run([LLVM_MC, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"LLVM version (\S+)", text)
    return f"LLVM version {m.group(1) if m else 'unknown'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cpus", default=",".join(CPUS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--libdir", type=Path, default=Path("/usr/lib/llvm-22/lib"))
    ap.add_argument("--probe-cache", type=Path, default=None,
                    help="keep llvm-mc's answers in this JSON file and reuse them (the search "
                         "takes minutes per CPU; the classification is instant)")
    args = ap.parse_args(argv)
    if shutil.which(LLVM_MC) is None:
        print(f"llvm_inventory: error: {LLVM_MC} not found on PATH", file=sys.stderr)
        return 2
    try:
        tables = llvm_libtables.load(args.libdir)
    except llvm_libtables.TableError as exc:
        print(f"llvm_inventory: error: {exc}", file=sys.stderr)
        return 2
    cpus = [c for c in args.cpus.split(",") if c]
    version = llvm_version()
    args.out.mkdir(parents=True, exist_ok=True)
    cached = load_cache(args.probe_cache, version, tables)
    todo = [c for c in cpus if c not in cached]
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = dict(zip(todo, pool.map(lambda c: probe_cpu(c, tables.mnemonics), todo)))
    except RuntimeError as exc:          # llvm-mc's output could not be matched to its input
        print(f"llvm_inventory: error: {exc}", file=sys.stderr)
        return 2
    results.update({c: cached[c] for c in cpus if c in cached})
    if args.probe_cache:
        save_cache(args.probe_cache, version, tables, {**cached, **results})
    for cpu in cpus:
        rows, problems = build_rows(cpu, tables, results[cpu])
        for p in problems:
            print(f"llvm_inventory: warning: {p}", file=sys.stderr)
        text = render(cpu, rows, version)
        # mtime=0: the same table gives the same bytes
        (args.out / f"{cpu}.txt.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        nform = sum(r.form != "-" for r in rows)
        nsync = sum(r.kind != "alu" for r in rows)
        print(f"{cpu}: {len(rows)} mnemonics, {nsync} memory/sync/control, {nform} with a form")
    return 0


if __name__ == "__main__":
    sys.exit(main())
