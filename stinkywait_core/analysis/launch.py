"""What a kernel's directives and metadata say about how it is launched.

The LDS address analysis needs the range of the work-item id in v0 (lanes differ by it), the
wave size (how many lanes an LDS DMA spreads over), how the work-item ids are laid out in v0,
and the largest LDS address that names a distinct byte.  The workgroup size is bounded by the
metadata and by how many waves of the kernel's VGPR allocation fit on one WGP.  They come from the ``.amdhsa_*``
directives of the kernel descriptor and the ``amdhsa.kernels`` code-object metadata; anything
absent falls back to the hardware maximum (1024 work-items per workgroup).

Only lines that can hold these facts are looked at (one regular-expression scan of the
text), so the cost is a small fraction of a parse.
"""

from __future__ import annotations

import re

from ..ir.records import FrozenRecord, _set
from ..lazy_regex import LazyPattern

#: largest LDS allocation per workgroup, in bytes, by target (addresses at or above it are
#: out of range; below it every address is a distinct byte)
_LDS_BYTES = (("gfx1250", 320 * 1024), ("gfx950", 160 * 1024), ("gfx12", 64 * 1024), ("gfx11", 64 * 1024),
              ("gfx10", 64 * 1024), ("gfx9", 64 * 1024))

#: targets whose work-item ids are packed into v0 (x in bits 0-9, y 10-19, z 20-29) when
#: more than the x id is enabled: gfx90a and gfx94x/gfx95x, and every gfx10+ target
_PACKED = ("gfx90a", "gfx94", "gfx95", "gfx10", "gfx11", "gfx12")

_LINE = re.compile(
    r'^(?P<ind>[ \t]*)(?:\.amdhsa_kernel[ \t]+(?P<kernel>[\w.$]+)'
    r'|\.amdhsa_(?P<dir>system_vgpr_workitem_id|wavefront_size32|group_segment_fixed_size|next_free_vgpr)'
    r'[ \t]+(?P<dval>\d+)'
    r'|(?P<dash>-[ \t]+)?\.(?P<key>name|symbol|max_flat_workgroup_size|reqd_workgroup_size|wavefront_size'
    r'|(?<=-[ \t]\.)[\w.]+)[ \t]*:[ \t]*(?P<mval>[^\n;#]*))',
    re.M)
_INT = re.compile(r'\d+')

#: VGPRs (per lane) one SIMD holds for the waves resident on it, by target and wave size, as
#: LLVM 22 models them (`llc-22 -mcpu=<target>` reports "; Occupancy: 4" for a kernel using
#: 256 VGPRs on gfx1250 wave32, 2 on gfx90a/gfx942/gfx950 wave64, where the AGPRs count in
#: `.amdhsa_next_free_vgpr`).  Only the targets probed are listed.
_VGPRS_PER_SIMD = (("gfx1250", 32, 1024), ("gfx90a", 64, 512), ("gfx942", 64, 512), ("gfx950", 64, 512))
#: SIMDs of the unit a workgroup's waves must share (a gfx10+ WGP, or a gfx9 CU): at most
#: four (a gfx10+ workgroup in CU mode gets two; four is the bound either way)
_SIMDS_PER_GROUP = 4
_TARGET = LazyPattern(r'(?:\.amdgcn_target[ \t]+|amdhsa\.target:[ \t]*)"?([\w.:+-]*--gfx\w+[\w:+-]*)')


class LaunchInfo(FrozenRecord):
    """Launch facts of one kernel.

    `arch`: target name (``gfx1250``); `wave_size`: 32 or 64; `workitem_id`: 0, 1 or 2 (which
    ids the hardware puts in VGPRs); `packed_ids`: ids share v0; `max_flat`: work-items per
    workgroup at most; `reqd`: the required workgroup size (x, y, z) when the metadata gives
    one; `lds_limit`: addresses below this are distinct LDS bytes.
    """

    __slots__ = ("arch", "wave_size", "workitem_id", "packed_ids", "max_flat", "reqd", "lds_limit")
    arch: str
    wave_size: int
    workitem_id: int
    packed_ids: bool
    max_flat: int
    reqd: tuple[int, int, int] | None
    lds_limit: int

    def __init__(self, arch: str = "gfx1250", wave_size: int | None = None, workitem_id: int = 2,
                 max_flat: int = 1024, reqd: tuple[int, int, int] | None = None,
                 lds_limit: int | None = None) -> None:
        _set(self, "arch", arch)
        _set(self, "wave_size", wave_size if wave_size else (64 if arch.startswith("gfx9") else 32))
        _set(self, "workitem_id", workitem_id)
        _set(self, "packed_ids", arch.startswith(_PACKED))
        _set(self, "max_flat", max(1, min(max_flat, 1024)))
        _set(self, "reqd", reqd)
        _set(self, "lds_limit", lds_limit if lds_limit is not None else lds_bytes(arch))

    @property
    def waves_per_group(self) -> int:
        return -(-self.max_flat // self.wave_size)

    def one_dimensional(self) -> bool:
        """The workgroup is known to be (X, 1, 1) with X a multiple of the wave size, so wave
        w holds work-items 32w..32w+31 (64w.. on wave64) in order."""
        r = self.reqd
        return r is not None and r[1] == 1 and r[2] == 1 and r[0] % self.wave_size == 0


def lds_bytes(arch: str) -> int:
    for prefix, n in _LDS_BYTES:
        if arch.startswith(prefix):
            return n
    return 64 * 1024


def _sections(text: str, begin: str, end: str) -> list[str]:
    """The text of every ``begin ... end`` block (the directive regions the facts live in)."""
    out = []
    pos = text.find(begin)
    while pos >= 0:
        stop = text.find(end, pos)
        stop = len(text) if stop < 0 else stop
        line_start = text.rfind("\n", 0, pos) + 1
        out.append(text[line_start:stop])
        pos = text.find(begin, stop)
    return out


def launch_infos(text: str, default_arch: str = "gfx1250") -> dict[str, LaunchInfo]:
    """Every kernel's LaunchInfo (by kernel name) from one file's text.

    The ``.amdhsa_kernel`` block of a kernel gives the work-item id setting and the wave
    size; the metadata entry whose ``.name`` is the kernel (the entry-level key, not an
    argument's) gives the workgroup sizes.  A kernel with neither gets the defaults.  Only
    those blocks are scanned.
    """
    target = target_of(text, default_arch)
    descr: dict[str, dict] = {}
    meta: dict[str, dict] = {}
    for block in _sections(text, ".amdhsa_kernel", ".end_amdhsa_kernel"):
        cur: dict | None = None
        for m in _LINE.finditer(block):
            if m.group("kernel"):
                cur = descr.setdefault(m.group("kernel"), {})
            elif m.group("dir") and cur is not None:
                cur[m.group("dir")] = int(m.group("dval"))
    for block in _sections(text, ".amdgpu_metadata", ".end_amdgpu_metadata"):
        entry: dict | None = None
        entry_indent = -1
        for m in _LINE.finditer(block):
            key = m.group("key")
            if key is None:
                continue
            val = m.group("mval").strip()
            indent = len(m.group("ind").expandtabs()) + (len(m.group("dash")) if m.group("dash") else 0)
            if m.group("dash") and (entry is None or indent <= entry_indent):
                entry = {}
                entry_indent = indent
            elif entry is None or indent != entry_indent:
                continue  # an argument's key (deeper), or outside the kernels list
            if key in ("name", "symbol"):
                name = val.strip("'\"")
                if key == "symbol" and name.endswith(".kd"):
                    name = name[:-3]
                meta[name] = entry
            elif key == "reqd_workgroup_size":
                entry[key] = _ints_after(block, m.end(), val)
            elif key in ("max_flat_workgroup_size", "wavefront_size"):
                nums = _INT.findall(val)
                if nums:
                    entry[key] = int(nums[0])
    out: dict[str, LaunchInfo] = {}
    for name in set(descr) | set(meta):
        d, md = descr.get(name, {}), meta.get(name, {})
        wave = 32 if d.get("wavefront_size32") == 1 else md.get("wavefront_size")
        if wave is None and "wavefront_size32" in d:
            wave = 64
        reqd = md.get("reqd_workgroup_size")
        max_flat = md.get("max_flat_workgroup_size", 1024)
        if reqd:
            max_flat = min(max_flat, reqd[0] * reqd[1] * reqd[2])
        ws = wave or (64 if target.startswith("gfx9") else 32)
        fits = resident_waves(target, ws, d.get("next_free_vgpr"), "s_alloc_vgpr" in text)
        if fits is not None:
            max_flat = min(max_flat, fits * ws)
        out[name] = LaunchInfo(target, wave, d.get("system_vgpr_workitem_id", 2), max_flat, reqd)
    return out


def resident_waves(arch: str, wave_size: int, vgprs: int | None, dynamic: bool) -> int | None:
    """The most waves one workgroup of a kernel can have, from its VGPR allocation (None:
    no bound known).

    All waves of a workgroup run on one WGP (one CU before gfx10) because they share its LDS,
    and a wave holds its VGPRs for its whole life: at most ``SIMDs * (VGPRs per SIMD //
    VGPRs per wave)`` waves fit, whatever `.max_flat_workgroup_size` says (hand-written
    kernels often leave it at 1024 while using 1024 VGPRs: then four waves at most).  The
    wave's allocation is at least `.amdhsa_next_free_vgpr` (rounding up to the allocation
    granule only lowers the bound further, so it is not needed).  Dynamic VGPR allocation
    (`s_alloc_vgpr`) changes a wave's share while it runs: no bound then.
    """
    if not vgprs or dynamic:
        return None
    for prefix, ws, total in _VGPRS_PER_SIMD:
        if arch == prefix and wave_size == ws:
            return _SIMDS_PER_GROUP * max(1, total // vgprs) if vgprs <= total else None
    return None


def _ints_after(text: str, pos: int, inline: str) -> tuple[int, int, int] | None:
    """A YAML ``[x, y, z]`` on the key's line, or the three ``- n`` items that follow it."""
    nums = [int(n) for n in _INT.findall(inline)]
    if not nums:
        for line in text[pos:pos + 200].split("\n")[1:4]:
            s = line.strip()
            if not s.startswith("-"):
                break
            got = _INT.findall(s)
            if got:
                nums.append(int(got[0]))
    if len(nums) == 3 and all(n > 0 for n in nums):
        return nums[0], nums[1], nums[2]
    return None


def target_of(text: str, default_arch: str = "gfx1250") -> str:
    """The target named by ``.amdgcn_target "..."`` or the metadata's ``amdhsa.target:``."""
    m = _TARGET.search(text)
    if m:
        t = m.group(1).split("--")[-1].split(":")[0]
        if t.startswith("gfx"):
            return t
    return default_arch
