"""Syntax layer: the STIR and AMDGPU-asm front ends and their printers.

`parse` picks the front end from the language id or the file extension.
"""

from __future__ import annotations

from ..ir import Module

STIR_EXTENSIONS = (".stir",)
ASM_EXTENSIONS = (".s", ".asm", ".amdgcn", ".S")


def language_for(path: str, language: str | None = None) -> str:
    """'stir' or 'asm' from an LSP language id or a path."""
    if language:
        lid = language.lower()
        if lid == "stir":
            return "stir"
        if lid in ("amdgpu-asm", "asm", "amdgcn", "gas"):
            return "asm"
    return "stir" if path.endswith(STIR_EXTENSIONS) else "asm"


def parse(text: str, path: str = "<input>", language: str | None = None, previous: Module | None = None) -> Module:
    """Parse a whole file; never raises on bad input (errors are Module.diagnostics).

    `previous`: the Module of the previous version of the same document.  The asm front end
    then re-parses incrementally: unchanged lines keep their `Instruction` objects (see
    `asm_parser.parse_asm` and `stir_parser.parse_stir`).
    """
    if language_for(path, language) == "stir":
        from .stir_parser import parse_stir
        return parse_stir(text, path, previous)
    from .asm_parser import parse_asm
    return parse_asm(text, path, previous)


_COMPARE_STEP = 256


def common_prefix(a: list[str], b: list[str]) -> int:
    """Length of the longest common prefix of two line lists (slices compared in C)."""
    n = min(len(a), len(b))
    k = 0
    while k + _COMPARE_STEP <= n and a[k:k + _COMPARE_STEP] == b[k:k + _COMPARE_STEP]:
        k += _COMPARE_STEP
    while k < n and a[k] == b[k]:
        k += 1
    return k


def common_suffix(a: list[str], b: list[str], limit: int) -> int:
    """Length of the longest common suffix, at most `limit`."""
    la, lb = len(a), len(b)
    k = 0
    while k + _COMPARE_STEP <= limit and a[la - k - _COMPARE_STEP:la - k] == b[lb - k - _COMPARE_STEP:lb - k]:
        k += _COMPARE_STEP
    while k < limit and a[la - k - 1] == b[lb - k - 1]:
        k += 1
    return k
