"""Read the AMDGPU instruction tables that LLVM 22 compiled into its static libraries.

Why read binaries.  llvm-mc-22 answers "is this line valid on this CPU", but not "which
mnemonics exist" nor "what does this opcode do".  Both answers are plain data inside LLVM's own
static archives (Debian's llvm-22-dev ships them), produced by TableGen from the same .td files
as llvm-mc and llc:

* ``libLLVMAMDGPUAsmParser.a`` / ``AMDGPUAsmParser.cpp.o``: ``MnemonicTable`` (every mnemonic
  the assembler's matcher knows, as length-prefixed strings) and ``MatchTable0..5`` (one per
  asm variant: default, VOP3, SDWA, SDWA9, DPP, VOP3_DPP), whose 60-byte rows are
  ``uint16 mnemonic-offset, uint16 opcode, uint16 convert-fn, uint16 feature-set index,
  uint16 operand-classes[26]``; ``FeatureBitsets`` (48-byte bit sets of assembler predicates).
* ``libLLVMAMDGPUDesc.a`` / ``AMDGPUMCTargetDesc.cpp.o``: ``AMDGPUInstrNameData`` /
  ``AMDGPUInstrNameIndices`` (opcode number -> name, the names ``llvm-mc -show-inst`` prints)
  and ``AMDGPUDescs`` (one 32-byte ``MCInstrDesc`` per opcode: ``Flags`` with the generic
  mayLoad/mayStore/isBranch/isCall/isReturn/... bits, ``TSFlags`` with AMDGPU's SIInstrFlags:
  encoding format DS/FLAT/MUBUF/SMRD/..., the counters it uses VM_CNT/LGKM_CNT/EXP_CNT/
  TENSOR_CNT/ASYNC_CNT, FlatGlobal/FlatScratch, atomic with or without return, GWS, ...).

The row layouts and bit positions are facts about LLVM 22 (``MCInstrDesc.h``, ``SIDefines.h``);
`load` checks them against the data (sizes divide, opcode numbers form a permutation, entries
sort by mnemonic, every ``DS_*`` opcode has the DS bit, ...) and raises `TableError` when a
different LLVM build breaks an assumption, rather than returning garbage.

Only the standard library is used: a few lines read the ar archive and ELF section headers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

#: MCInstrDesc::Flags bit positions (llvm/MC/MCInstrDesc.h, enum MCID::Flag), the ones we use
MCID_BITS = {"return": 5, "call": 7, "barrier": 8, "terminator": 9, "branch": 10,
             "indirect_branch": 11, "may_load": 19, "may_store": 20, "trap": 38}

#: SIInstrFlags bit positions (llvm/lib/Target/AMDGPU/SIDefines.h), the ones we use
TS_BITS = {"SALU": 0, "VALU": 1, "SOP1": 2, "SOP2": 3, "SOPC": 4, "SOPK": 5, "SOPP": 6,
           "VOP1": 7, "VOP2": 8, "VOPC": 9, "VOP3": 10, "VOP3P": 12, "VINTRP": 13,
           "MUBUF": 17, "MTBUF": 18, "SMRD": 19, "MIMG": 20, "VIMAGE": 21, "VSAMPLE": 22,
           "EXP": 23, "FLAT": 24, "DS": 25, "LDSDIR": 28, "VINTERP": 29,
           "VM_CNT": 32, "EXP_CNT": 33, "LGKM_CNT": 34, "Gather4": 37, "TENSOR_CNT": 38,
           "SCALAR_STORE": 39, "ASYNC_CNT": 41, "FlatGlobal": 51, "FlatScratch": 56,
           "IsAtomicNoRet": 57, "IsAtomicRet": 58, "GWS": 62}

_MATCH_ROW = 60
_DESC_ROW = 32
_FEATURE_SET = 48
_VARIANTS = 6
_ASMPARSER = ("libLLVMAMDGPUAsmParser.a", "AMDGPUAsmParser.cpp.o")
_DESC = ("libLLVMAMDGPUDesc.a", "AMDGPUMCTargetDesc.cpp.o")


class TableError(Exception):
    """The libraries are missing or do not have the layout this reader knows (another LLVM)."""


@dataclass(frozen=True)
class Opcode:
    """One MCInst opcode: its number, name, generic flags and AMDGPU TSFlags."""

    number: int
    name: str
    flags: int
    ts: int

    def mcid(self, what: str) -> bool:
        return bool(self.flags >> MCID_BITS[what] & 1)

    def has(self, what: str) -> bool:
        return bool(self.ts >> TS_BITS[what] & 1)


@dataclass(frozen=True)
class MatchEntry:
    """One row of the assembler's match table: a mnemonic, the opcode it may become, the asm
    variant table it sits in, and the assembler predicates it requires (a bit set)."""

    mnemonic: str
    opcode: int
    variant: int
    features: int


@dataclass(frozen=True)
class Tables:
    mnemonics: tuple[str, ...]
    entries: tuple[MatchEntry, ...]
    opcodes: dict[int, Opcode]

    def by_mnemonic(self) -> dict[str, list[MatchEntry]]:
        out: dict[str, list[MatchEntry]] = {m: [] for m in self.mnemonics}
        for e in self.entries:
            out[e.mnemonic].append(e)
        return out


def _ar_member(archive: Path, member: str) -> bytes:
    """The bytes of one member of a System V / GNU ar archive."""
    data = archive.read_bytes()
    if data[:8] != b"!<arch>\n":
        raise TableError(f"{archive}: not an ar archive")
    pos, longnames = 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58])
        body = data[pos + 60:pos + 60 + size]
        if name == "//":
            longnames = body
        else:
            if name.startswith("/") and name[1:].isdigit():
                start = int(name[1:])
                name = longnames[start:longnames.index(b"\n", start)].decode()
            if name.rstrip("/") == member:
                return body
        pos += 60 + size + (size & 1)
    raise TableError(f"{archive}: no member {member}")


def _sections(elf: bytes) -> dict[str, bytes]:
    """Section name -> contents of an ELF64 little-endian relocatable object."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise TableError("not an ELF64 little-endian object")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize) for k in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for h in headers:
        name = elf[names + h[0]:elf.index(b"\0", names + h[0])].decode()
        out[name] = elf[h[4]:h[4] + h[5]]
    return out


def _section(sections: dict[str, bytes], symbol: str) -> bytes:
    """The contents of the section that holds one symbol (built with -fdata-sections)."""
    for prefix in (".rodata.", ".data.rel.ro."):
        if prefix + symbol in sections:
            return sections[prefix + symbol]
    raise TableError(f"no section for {symbol}")


def _mnemonic_table(blob: bytes) -> dict[int, str]:
    """Offset -> mnemonic of the matcher's length-prefixed string table."""
    out, pos = {}, 0
    while pos < len(blob):
        n = blob[pos]
        if n == 0:
            if pos != len(blob) - 1:
                raise TableError("MnemonicTable: empty string before the end")
            break
        out[pos] = blob[pos + 1:pos + 1 + n].decode("ascii")
        pos += 1 + n
    return out


def load(libdir: Path = Path("/usr/lib/llvm-22/lib")) -> Tables:
    """Parse and check LLVM's AMDGPU matcher and instruction-description tables."""
    for archive, _ in (_ASMPARSER, _DESC):
        if not (libdir / archive).is_file():
            raise TableError(f"{libdir / archive} not found (Debian/Ubuntu: llvm-22-dev)")
    parser = _sections(_ar_member(libdir / _ASMPARSER[0], _ASMPARSER[1]))
    desc = _sections(_ar_member(libdir / _DESC[0], _DESC[1]))

    indices = _section(desc, "_ZN4llvm22AMDGPUInstrNameIndicesE")
    namedata = _section(desc, "_ZN4llvm19AMDGPUInstrNameDataE")
    descs = _section(desc, "_ZN4llvm11AMDGPUDescsE")
    count = len(indices) // 4
    if len(indices) % 4 or count * _DESC_ROW > len(descs):
        raise TableError("AMDGPUInstrNameIndices / AMDGPUDescs sizes do not agree")
    opcodes: dict[int, Opcode] = {}
    for k in range(count):
        number, = struct.unpack_from("<H", descs, k * _DESC_ROW)
        flags, ts = struct.unpack_from("<QQ", descs, k * _DESC_ROW + 16)
        start, = struct.unpack_from("<I", indices, 4 * number)
        name = namedata[start:namedata.index(b"\0", start)].decode("ascii")
        opcodes[number] = Opcode(number, name, flags, ts)
    if sorted(opcodes) != list(range(count)):
        raise TableError("AMDGPUDescs opcode numbers are not a permutation")

    names = _mnemonic_table(_section(parser, "_ZL13MnemonicTable"))
    fsets = _section(parser, "_ZL14FeatureBitsets")
    if len(fsets) % _FEATURE_SET:
        raise TableError("FeatureBitsets: size is not a multiple of 48")
    features = [int.from_bytes(fsets[k:k + _FEATURE_SET], "little")
                for k in range(0, len(fsets), _FEATURE_SET)]
    entries: list[MatchEntry] = []
    for variant in range(_VARIANTS):
        rows = _section(parser, f"_ZL11MatchTable{variant}")
        if len(rows) % _MATCH_ROW:
            raise TableError(f"MatchTable{variant}: size is not a multiple of {_MATCH_ROW}")
        previous = ""
        for pos in range(0, len(rows), _MATCH_ROW):
            moff, opcode, _convert, fidx = struct.unpack_from("<HHHH", rows, pos)
            if moff not in names or opcode not in opcodes or fidx >= len(features):
                raise TableError(f"MatchTable{variant}: row {pos // _MATCH_ROW} out of range")
            mnemonic = names[moff]
            if mnemonic < previous:
                raise TableError(f"MatchTable{variant}: rows are not sorted by mnemonic")
            previous = mnemonic
            entries.append(MatchEntry(mnemonic, opcode, variant, features[fidx]))
    tables = Tables(tuple(sorted(names.values())), tuple(entries), opcodes)
    _check_bits(tables)
    return tables


#: opcode-name prefix -> TSFlags bits every such opcode must carry (a layout self-check)
_NAME_CHECKS = (("DS_READ_", ("DS", "LGKM_CNT")), ("DS_WRITE_", ("DS",)),
                ("BUFFER_LOAD_", ("MUBUF", "VM_CNT")),
                ("TBUFFER_", ("MTBUF",)), ("GLOBAL_LOAD_", ("FLAT", "FlatGlobal")),
                ("SCRATCH_", ("FLAT", "FlatScratch")), ("S_LOAD_", ("SMRD", "LGKM_CNT")),
                ("V_ADD_F32_e32", ("VALU", "VOP2")), ("S_ADD_U32", ("SALU", "SOP2")))


def _check_bits(tables: Tables) -> None:
    used = {e.opcode for e in tables.entries}
    for prefix, bits in _NAME_CHECKS:
        hits = [tables.opcodes[o] for o in used if tables.opcodes[o].name.startswith(prefix)]
        if not hits:
            raise TableError(f"self-check: no matchable opcode named {prefix}*")
        bad = [op.name for op in hits if not all(op.has(b) for b in bits)]
        if bad:
            raise TableError(f"self-check: {bad[0]} lacks {bits} (TSFlags layout changed?)")
    branches = [tables.opcodes[o] for o in used if tables.opcodes[o].name.startswith("S_BRANCH_")]
    if not branches or not all(op.mcid("branch") and op.mcid("terminator") for op in branches):
        raise TableError("self-check: S_BRANCH is not a branch (MCInstrDesc layout changed?)")
