"""Printers for STIR IR: upstream's `--print-output` form and its `--emit-asm` form.

Both are byte-compatible with `stinkytofu-opt` where the conformance corpus can tell
(formats.md sections 5, 5.1, 6.2 and 8): CHECK lines compare modifier text character for
character, so field orders, defaults and spacing here are fixed tables, not free choices.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterable

from ..ir import FloatImm, Function, Imm, Instruction, Modifier, Module, Operand, Reg, Special, Str

#: `mod.<kind>` names upstream's deserializer knows.  Any other kind (the corpus has
#: `mod.waitcnt`) is dropped on input by upstream, so it is kept in our IR but never printed.
KNOWN_MOD_KINDS = frozenset({
    "ds", "mubuf", "flat", "global", "smem", "mfma", "memtoken", "swaitcnt", "swaittensorcnt",
    "swaitasynccnt", "swaitstorecnt", "wait_provenance", "lds_ring", "loopcarriedwar",
    "loopcarriedraw", "label", "vop3", "vop3p", "dpp", "true16", "exec", "vcc", "cache_scope",
    "delayalu", "waitalu", "matrix_fmt", "call_targets", "wmma_pool", "loop_wait",
})

#: the five fields of `mod.swaitcnt`, always printed, -1 meaning "not waited on"
SWAITCNT_FIELDS = ("vlcnt", "vscnt", "dlcnt", "dscnt", "kmcnt")

#: (wait mnemonic) -> (modifier kind, field) holding its count when it has no literal source
WAIT_COUNT_FIELD = {
    "s_wait_dscnt": ("swaitcnt", "dlcnt"),
    "s_wait_loadcnt": ("swaitcnt", "vlcnt"),
    "s_wait_kmcnt": ("swaitcnt", "kmcnt"),
    "s_wait_tensorcnt": ("swaittensorcnt", "tlcnt"),
    "s_wait_asynccnt": ("swaitasynccnt", "asynccnt"),
    "s_wait_storecnt": ("swaitstorecnt", "storecnt"),
}

#: SOPP-format scalar instructions (cost 1/1); every other `s_*` that is not SMEM is SALU (1/2)
_SOPP_PREFIXES = ("s_nop", "s_endpgm", "s_branch", "s_cbranch", "s_barrier", "s_wait", "s_sleep",
                  "s_setprio", "s_sendmsg", "s_trap", "s_icache_inv", "s_delay_alu", "s_clause",
                  "s_ttracedata", "s_set_inst_prefetch", "s_code_end", "s_sethalt", "s_setkill",
                  "s_round_mode", "s_denorm_mode", "s_singleuse_vdst", "s_version", "s_prefetch",
                  "s_monitor_sleep", "s_cluster_barrier")
_SMEM_PREFIXES = ("s_load", "s_buffer_load", "s_dcache", "s_scratch", "s_store", "s_buffer_store",
                  "s_atc_probe", "s_prefetch_data", "s_prefetch_inst")
#: buffer load latency by data width (formats.md s.11 gives "12, ~108-120"; widths inferred)
_BUFFER_LOAD_LATENCY = (("b128", 120), ("b96", 116), ("b64", 112))


@lru_cache(maxsize=4096)
def default_cycles(mnemonic: str) -> tuple[int, int]:
    """gfx1250 default (issueCycles, latencyCycles) for an instruction given without costs.

    Upstream reads these from its per-opcode scheduling table (formats.md section 11); we
    reproduce it by instruction class, which is all the corpus can observe.
    """
    mn = mnemonic
    if mn.startswith("ds_"):
        return (1, 56) if mn.startswith("ds_load") and mn.endswith("b128") else (1, 52)
    if mn.startswith(("v_wmma", "v_swmmac")):
        return (1, 8)
    if mn.startswith("v_"):
        return (1, 5)
    if mn.startswith(("buffer_load", "tbuffer_load")):
        for suffix, latency in _BUFFER_LOAD_LATENCY:
            if mn.endswith(suffix):
                return (12, latency)
        return (12, 108)
    if mn.startswith("s_"):
        if mn.startswith(_SOPP_PREFIXES) or mn.startswith(_SMEM_PREFIXES):
            return (1, 1)
        return (1, 2)
    return (1, 1)


# --- STIR value formatting ---------------------------------------------------------------------

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_scalar(v)}" for k, v in value.items()) + " }"
    if isinstance(value, str):
        return '"' + value + '"'
    return str(value)


def _fields(mod: Modifier, spec: Iterable[tuple[str, Any]], optional: Iterable[str] = ()) -> list[str]:
    """`key = value` for each fixed field (default when absent), then optional present ones."""
    out = [f"{k} = {_scalar(mod.fields.get(k, d))}" for k, d in spec]
    out.extend(f"{k} = {_scalar(mod.fields[k])}" for k in optional if k in mod.fields)
    return out


def _fmt_ds(m: Modifier) -> list[str]:
    out = _fields(m, (("na", 1), ("offset", 0)))
    if m.fields.get("na", 1) == 2:
        out += _fields(m, (("offset0", 0), ("offset1", 0)))
    return out + _fields(m, (("gds", False),))


def _fmt_swaitcnt(m: Modifier) -> list[str]:
    return _fields(m, ((k, -1) for k in SWAITCNT_FIELDS))


def _fmt_text(m: Modifier) -> list[str]:
    return [f"text = {_quote(str(m.fields.get('text', '')))}"]


def _fmt_label(m: Modifier) -> list[str]:
    return [f"label = {_quote(str(m.fields.get('label', '')))}",
            f"alignment = {_scalar(m.fields.get('alignment', 1))}"]


def _fmt_generic(m: Modifier) -> list[str]:
    return [f"{k} = {_scalar(v)}" for k, v in m.fields.items()]


def _fixed(*spec: tuple[str, Any], optional: tuple[str, ...] = ()) -> Callable[[Modifier], list[str]]:
    return lambda m: _fields(m, spec, optional)


#: per-kind field printers (formats.md section 5.1); kinds not listed print input order
_MOD_FORMAT: dict[str, Callable[[Modifier], list[str]]] = {
    "ds": _fmt_ds,
    "mubuf": _fixed(("offen", False), ("offset12", 0), ("glc", False), ("slc", False), ("nt", False),
                    ("lds", False), optional=("scope", "th", "nv")),
    "flat": _fixed(("offset12", 0), ("glc", False), ("slc", False), ("lds", False)),
    "global": _fixed(("offset", 0), optional=("th", "scope")),
    "smem": _fixed(("offset", 0), ("glc", False), ("nv", False)),
    "mfma": _fixed(("reuseA", False), ("reuseB", False), optional=("negLo", "negHi", "numNegSrcs")),
    "memtoken": _fixed(("tokens", [])),
    "swaitcnt": _fmt_swaitcnt,
    "swaittensorcnt": _fixed(("tlcnt", -1)),
    "swaitasynccnt": _fixed(("asynccnt", -1)),
    "swaitstorecnt": _fixed(("storecnt", -1)),
    "wait_provenance": _fmt_text,
    "lds_ring": _fixed(("accesses", []), ("advances", [])),
    "loopcarriedwar": _fixed(("tokens", []), ("distance", 1)),
    "loopcarriedraw": _fixed(("tokens", []), ("distance", 1)),
    "label": _fmt_label,
}


def format_modifier(mod: Modifier) -> str | None:
    """`mod.<kind> = { ... }` as upstream prints it, or None for a kind upstream drops."""
    if mod.kind not in KNOWN_MOD_KINDS:
        return None
    parts = _MOD_FORMAT.get(mod.kind, _fmt_generic)(mod)
    return f"mod.{mod.kind} = {{ {', '.join(parts)} }}" if parts else f"mod.{mod.kind} = {{ }}"


def stir_operand(op: Operand) -> str:
    """An operand in upstream's printed form (strings unquoted, floats `%.6f`, hex kept)."""
    if isinstance(op, Reg):
        if op.kind == "a" and op.spelling is not None and op.spelling.lstrip("-").startswith("acc"):
            body = f"acc{op.lo}" if op.lo == op.hi else f"acc[{op.lo}:{op.hi}]"
            return ("-" if op.neg else "") + body
        return op.stir()
    return op.stir()


def format_instruction(inst: Instruction) -> str:
    """One instruction line (without indentation) in `--print-output` form."""
    if inst.mnemonic == "asm_directive":
        args = [s.value if isinstance(s, Str) else s.stir() for s in inst.srcs]
        args = [a for a in args if a]
        return '"st.asm_directive"(' + ", ".join(_quote(a) for a in args) + ")"
    issue, latency = inst.cycles if inst.cycles is not None else default_cycles(inst.mnemonic)
    attrs = [f"issueCycles = {issue}", f"latencyCycles = {latency}"]
    for mod in inst.mods.values():
        text = format_modifier(mod)
        if text is not None:
            attrs.append(text)
    head = ", ".join(stir_operand(d) for d in inst.dsts)
    srcs = ", ".join(stir_operand(s) for s in inst.srcs)
    line = f'"st.{inst.mnemonic}"({srcs}) {{ {", ".join(attrs)} }}'
    return f"{head} = {line}" if head else line


def print_function_stir(func: Function) -> str:
    lines = [f"st.func @{func.name}() {{"]
    for block in func.blocks:
        lines.append(f"  ^{block.name}:")
        for inst in block.instrs:
            if inst.is_label or inst.is_phi:
                continue
            lines.append("    " + format_instruction(inst))
        if block.succs:
            lines.append("    Successors: " + ", ".join(f"^{s.name}" for s in block.succs))
    lines.append("}")
    return "\n".join(lines) + "\n"


def print_module_stir(module: Module) -> str:
    """Every function in `--print-output` form, back to back (formats.md section 5)."""
    return "".join(print_function_stir(f) for f in module.functions)


# --- --emit-asm ----------------------------------------------------------------------------------

#: column (1-based) where a preserved comment's `//` starts
COMMENT_COLUMN = 51


def wait_count(inst: Instruction) -> int | None:
    """The count of an `s_wait_*` instruction: its literal, else its wait modifier's field."""
    lit = inst.first_literal()
    if lit is not None:
        return lit
    where = WAIT_COUNT_FIELD.get(inst.mnemonic)
    if where is None:
        return None
    mod = inst.mods.get(where[0])
    value = mod.fields.get(where[1]) if mod is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _asm_operand(op: Operand) -> str | None:
    if isinstance(op, Reg):
        return None if op.is_pseudo else stir_operand(op)
    if isinstance(op, Str):
        return op.value
    if isinstance(op, FloatImm):
        return op.spelling if op.spelling is not None else op.stir()
    if isinstance(op, (Imm, Special)):
        return op.stir()
    return None


def _flag(mod: Modifier, key: str) -> bool:
    return mod.fields.get(key) is True


def _asm_modifiers(inst: Instruction) -> str:
    """Textual asm modifiers (` offset:16`, ` gds`, ` matrix_a_reuse`, ...) from the mods."""
    out: list[str] = []
    ds = inst.mods.get("ds")
    if ds is not None:
        if ds.fields.get("na", 1) == 2:
            out.append(f"offset0:{ds.fields.get('offset0', 0)} offset1:{ds.fields.get('offset1', 0)}")
        elif ds.fields.get("offset", 0):
            out.append(f"offset:{ds.fields['offset']}")
        if _flag(ds, "gds"):
            out.append("gds")
    for kind, offset_key in (("mubuf", "offset12"), ("flat", "offset12"), ("global", "offset")):
        mod = inst.mods.get(kind)
        if mod is None:
            continue
        if _flag(mod, "offen"):
            out.append("offen")
        if mod.fields.get(offset_key, 0):
            out.append(f"offset:{mod.fields[offset_key]}")
        out.extend(k for k in ("glc", "slc", "nt", "lds") if _flag(mod, k))
        out.extend(f"{k}:{mod.fields[k]}" for k in ("th", "scope") if isinstance(mod.fields.get(k), str))
    smem = inst.mods.get("smem")
    if smem is not None and _flag(smem, "glc"):
        out.append("glc")
    mfma = inst.mods.get("mfma")
    if mfma is not None:
        out.extend(name for key, name in (("reuseA", "matrix_a_reuse"), ("reuseB", "matrix_b_reuse"))
                   if _flag(mfma, key))
    return "".join(" " + o for o in out)


def format_asm_instruction(inst: Instruction) -> str:
    """One instruction as assembly (no comment): mnemonic, encoded operands, modifiers."""
    if inst.is_label:
        return f"{inst.mnemonic}:"
    if inst.mnemonic == "asm_directive":
        return " ".join(s.value if isinstance(s, Str) else s.stir() for s in inst.srcs)
    if inst.mnemonic.startswith("s_wait") and inst.mnemonic in WAIT_COUNT_FIELD:
        count = wait_count(inst)
        ops = [str(count)] if count is not None else []
    else:
        ops = [t for t in (_asm_operand(o) for o in [*inst.dsts, *inst.srcs]) if t is not None]
    text = inst.mnemonic + (" " + ", ".join(ops) if ops else "")
    return text + _asm_modifiers(inst) + inst.suffix


def with_comment(line: str, comment: str) -> str:
    """Append `// comment` at COMMENT_COLUMN (one space when the line is already longer)."""
    pad = COMMENT_COLUMN - 1 - len(line)
    return line + (" " * pad if pad > 0 else " ") + "// " + comment


def print_module_asm(module: Module, preserve_comments: bool = False) -> str:
    """`--emit-asm` for STIR input: every function's instructions in block order (section 8)."""
    lines: list[str] = []
    for func in module.functions:
        for block in func.blocks:
            for inst in block.instrs:
                if inst.is_phi:
                    continue
                line = format_asm_instruction(inst)
                if preserve_comments and inst.comment:
                    line = with_comment(line, inst.comment)
                lines.append(line)
                label = inst.mods.get("label")
                if inst.is_label and label is not None:
                    align = label.fields.get("alignment", 1)
                    if isinstance(align, int) and align > 1:
                        lines.append(f".align {align}")
    return "".join(line + "\n" for line in lines)
