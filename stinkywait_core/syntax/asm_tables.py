"""Per-encoding operand layouts of AMDGPU mnemonics for the assembly front end.

The wait-count pass only needs to know which explicit operands an instruction *writes* and
which registers it reads or writes implicitly (SCC, VCC, EXEC).  Upstream gets this from the
per-opcode `.def` tables; a text front end cannot ship those tables for every architecture, so
this module derives the layout from the mnemonic's encoding family (DS, MUBUF/GLOBAL/FLAT,
SMEM, TDM, VALU, SALU, SOPP/SOPC), with the exceptions that matter for correctness listed
explicitly.  Everything here is a pure function of the mnemonic and is cached.
"""

from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

from ..ir import Reg

SCC = Reg("SCC", 0, 0)
VCC = Reg("vcc", 0, 1)
EXEC = Reg("exec", 0, 1)

#: Register-file prefixes accepted in ``v0`` / ``v[0:3]`` form, mapped to the IR kind.
REG_PREFIXES: dict[str, str] = {"v": "v", "s": "s", "a": "a", "acc": "a", "ttmp": "ttmp"}

#: Highest register index we accept (gfx1250 addresses 1024 VGPRs through s_set_vgpr_msb).
MAX_REG_INDEX = 1023
#: Widest register tuple of any AMDGPU operand (1024-bit MFMA accumulators).
MAX_REG_WIDTH = 32

#: Named registers that are not tracked for dependencies (kept as Special operands).
UNTRACKED_NAMED_REGS = frozenset({
    "xnack_mask", "xnack_mask_lo", "xnack_mask_hi", "tba", "tba_lo", "tba_hi", "tma", "tma_lo",
    "tma_hi", "src_vccz", "src_execz", "src_scc", "src_lds_direct", "lds_direct",
    "src_pops_exiting_wave_id", "pops_exiting_wave_id", "shared_base", "shared_limit",
    "private_base", "private_limit", "src_shared_limit", "src_private_limit",
    "src_flat_scratch_base_lo", "src_flat_scratch_base_hi",
})

#: Bare (valueless) trailing modifiers.  Anything spelled ``name:value`` is a modifier too.
BARE_MODIFIERS = frozenset({
    "offen", "idxen", "addr64", "glc", "slc", "dlc", "nt", "nv", "sc0", "sc1", "lds",
    "tfe", "lwe", "unorm", "da", "a16", "d16", "r128", "r64", "gds", "clamp", "high", "done",
    "compr", "vm", "row_mirror", "row_half_mirror", "noncoherent",
})

#: Mnemonics whose operand syntax is not a comma-separated operand list; the whole operand
#: text is kept as one Special so the line is never misread.
VERBATIM_OPERAND_MNEMONICS = frozenset({"s_delay_alu", "s_waitcnt_depctr"})


# a named tuple, not a dataclass: generating a dataclass costs every process start-up ~0.5 ms
class Layout(namedtuple("Layout", ("n_dst", "implicit_defs", "implicit_uses", "returning", "tied", "carry_out",
                                   "family"), defaults=((), (), False, False, False, "other"))):
    """How the explicit operands of a mnemonic split into destinations and sources.

    `n_dst` leading operands are destinations.  `returning` marks atomics whose destination
    exists only when the instruction returns the pre-op value (`glc`, `sc0`,
    `th:TH_ATOMIC_RETURN`, or `_rtn` in the name).  `tied` means the destination is also read
    (``s_addk_i32``, ``v_fmac_f32``, ``v_writelane_b32``): waiting on a pending write of it is
    a true dependency.  `carry_out` means a second destination exists when the second operand
    is a scalar register (``v_add_co_u32 v0, vcc_lo, ...``).  Fields, in order: n_dst,
    implicit_defs, implicit_uses, returning, tied, carry_out, family.
    """

    __slots__ = ()


_DS_ONE_DST = ("ds_bpermute", "ds_permute", "ds_swizzle", "ds_append", "ds_consume",
               "ds_read_addtid", "ds_load_addtid", "ds_bvh_stack", "ds_ordered_count", "ds_param_load",
               "ds_direct_load")
#: gfx11 LDS parameter / direct loads (renamed ds_param_load / ds_direct_load on gfx12)
_LDS_LOADS = ("lds_param_load", "lds_direct_load")
#: returning atomics whose data register is also the destination (MUBUF, MIMG, SMEM); FLAT and
#: global atomics name a separate destination
_TIED_ATOMICS = ("buffer_atomic", "image_atomic", "s_atomic_", "s_buffer_atomic_")

_VMEM_ATOMIC = ("buffer_atomic", "global_atomic", "flat_atomic", "image_atomic", "scratch_atomic")
_VMEM_LOAD = ("buffer_load", "global_load", "flat_load", "scratch_load", "tbuffer_load",
              "image_load", "image_sample", "image_gather", "image_get", "image_msaa",
              "image_bvh", "global_block_load", "buffer_block_load", "cluster_load")
_ASYNC_LDS = ("global_load_async_to_lds", "global_store_async_from_lds",
              "cluster_load_async_to_lds", "global_load_lds", "buffer_load_lds",
              "tensor_load_to_lds", "tensor_store_from_lds", "tensor_save", "tensor_stop")
_VMEM_NO_DST = ("buffer_", "global_", "flat_", "scratch_", "tbuffer_", "image_", "exp", "export")

_SMEM_LOAD = ("s_load_", "s_buffer_load_", "s_scratch_load_")
_SMEM_ATOMIC = ("s_atomic_", "s_buffer_atomic_")
_SMEM_ONE_DST = ("s_memtime", "s_memrealtime", "s_get_waveid_in_workgroup")

#: Scalar mnemonics (SOPP, SOPC and friends) with no explicit destination.
_SCALAR_NO_DST = ("s_cmp_", "s_cmpk_", "s_bitcmp", "s_cbranch_", "s_branch", "s_wait", "s_barrier",
                  "s_nop", "s_endpgm", "s_setprio", "s_sleep", "s_set_vgpr_msb", "s_delay_alu",
                  "s_clause", "s_setreg", "s_trap", "s_icache_inv", "s_setpc_", "s_sethalt",
                  "s_setkill", "s_ttrace", "s_incperflevel", "s_decperflevel", "s_code_end",
                  "s_wakeup", "s_round_mode", "s_denorm_mode", "s_set_inst_prefetch_distance",
                  "s_inst_prefetch", "s_prefetch", "s_version", "s_set_gpr_idx", "s_rfe_",
                  "s_monitor_sleep", "s_singleuse_vdst", "s_dcache_", "s_alloc_vgpr",
                  "s_store_", "s_buffer_store_", "s_scratch_store_", "s_atc_probe", "s_gl1_inv",
                  "s_setvskip", "s_cbranch", "s_sendmsghalt", "s_set_", "s_dealloc_vgprs", "s_add_pc_",
                  "s_ttracedata")

_SCC_WRITERS = ("s_add_u32", "s_add_i32", "s_sub_u32", "s_sub_i32", "s_addc_", "s_subb_",
                "s_add_co_", "s_sub_co_", "s_addk_", "s_min_i32", "s_min_u32", "s_max_i32",
                "s_max_u32", "s_and_", "s_or_", "s_xor_", "s_andn1_", "s_andn2_", "s_orn1_",
                "s_orn2_", "s_nand_", "s_nor_", "s_xnor_", "s_not_b", "s_lshl_b", "s_lshr_b",
                "s_ashr_i", "s_lshl1_add", "s_lshl2_add", "s_lshl3_add", "s_lshl4_add", "s_bfe_",
                "s_abs_i32", "s_absdiff_i32", "s_bcnt0_", "s_bcnt1_", "s_quadmask_", "s_wqm_",
                "s_cmp_", "s_cmpk_", "s_bitcmp", "s_barrier_signal_isfirst", "s_barrier_leave")
_SCC_READERS = ("s_cselect_", "s_cmov_", "s_cmovk_", "s_addc_", "s_subb_", "s_add_co_ci_",
                "s_sub_co_ci_", "s_cbranch_scc")
_TIED = ("s_addk_", "s_mulk_", "s_cmovk_", "s_cmov_", "s_bitset0_", "s_bitset1_", "v_mac_",
         "v_fmac_", "v_dot2c_", "v_dot4c_", "v_dot8c_", "v_pk_fmac_", "v_writelane_",
         "v_permlane16_b32", "v_permlanex16_b32")
_CARRY_OUT = ("v_add_co_", "v_sub_co_", "v_subrev_co_", "v_addc_co_", "v_subb_co_",
              "v_subbrev_co_", "v_mad_u64_u32", "v_mad_i64_i32", "v_mad_co_", "v_div_scale_")
_VALU_NO_DST = ("v_nop", "v_pipeflush", "v_clrexcp")


def _ds_layout(mn: str) -> Layout:
    if mn.startswith(("ds_load", "ds_read")) or mn.startswith(_DS_ONE_DST):
        return Layout(1, family="ds")
    if mn.startswith(("ds_store", "ds_write")) and "_rtn" not in mn:
        return Layout(0, family="ds")
    if "_rtn" in mn:
        return Layout(1, family="ds")
    return Layout(0, family="ds")


def _scalar_layout(mn: str) -> Layout:
    defs: list[Reg] = []
    uses: list[Reg] = []
    if mn.startswith(_SCC_WRITERS):
        defs.append(SCC)
    if mn.startswith(_SCC_READERS):
        uses.append(SCC)
    if mn.startswith("s_cbranch_vcc"):
        uses.append(VCC)
    if mn.startswith("s_cbranch_exec"):
        uses.append(EXEC)
    if "saveexec" in mn or "_wrexec" in mn:
        defs.append(EXEC)
        uses.append(EXEC)
    n_dst = 0 if mn.startswith(_SCALAR_NO_DST) or mn == "s_sendmsg" else 1
    return Layout(n_dst, tuple(defs), tuple(uses), tied=mn.startswith(_TIED), family="salu")


def _vector_alu_layout(mn: str) -> Layout:
    if mn.startswith(_VALU_NO_DST):
        return Layout(0, family="valu")
    if mn.startswith("v_cmpx_"):
        return Layout(0, implicit_defs=(EXEC,), family="vcmpx")
    if mn.startswith("v_cmp_"):
        return Layout(1, family="vcmp")
    if mn.startswith(("v_swap_", "v_swaprel_")):
        return Layout(2, family="vswap")
    if mn.endswith("_sdwa"):  # `dst_unused:UNUSED_PRESERVE` keeps the rest of the destination: a read
        return Layout(1, tied=mn.startswith(_TIED), family="vsdwa")
    return Layout(1, tied=mn.startswith(_TIED),
                  carry_out=mn.startswith(_CARRY_OUT), family="valu")


@lru_cache(maxsize=8192)
def layout_for(mnemonic: str) -> Layout:
    """The operand layout of a (lower-case) mnemonic; unknown mnemonics get a heuristic one.

    Memory instructions are matched by encoding family first so that e.g. a future
    ``global_load_foo`` keeps "first operand is the destination" without a table update.
    """
    mn = mnemonic
    if mn.startswith("ds_"):
        return _ds_layout(mn)
    if mn.startswith(_ASYNC_LDS):
        return Layout(0, family="tensor" if mn.startswith("tensor_") else "async")
    if mn.startswith(_VMEM_ATOMIC):
        return Layout(1, returning=True, tied=mn.startswith(_TIED_ATOMICS), family="vmem_atomic")
    if mn.startswith(_VMEM_LOAD):
        return Layout(1, family="vmem_load")
    if mn.startswith(_VMEM_NO_DST):
        return Layout(0, family="vmem_other")
    if mn.startswith(_SMEM_LOAD) or mn.startswith(_SMEM_ONE_DST):
        return Layout(1, family="smem")
    if mn.startswith(_SMEM_ATOMIC):
        return Layout(1, returning=True, tied=True, family="smem_atomic")
    if mn.startswith("s_"):
        return _scalar_layout(mn)
    if mn.startswith("v_"):
        return _vector_alu_layout(mn)
    if mn.startswith(_LDS_LOADS):
        return Layout(1, family="ds")
    return Layout(0, family="other")


def atomic_returns(mnemonic: str, modifiers: tuple[str, ...]) -> bool:
    """Whether a VMEM/SMEM atomic returns its pre-op value (and so has a destination).

    gfx12 spells it ``th:TH_ATOMIC_RETURN`` (any TH_ATOMIC_*RETURN, or a numeric `th` with bit
    0 set), gfx9/10 ``glc``, gfx940 ``sc0``; some assemblers put ``_rtn`` in the mnemonic.
    """
    if "_rtn" in mnemonic:
        return True
    for mod in modifiers:
        low = mod.lower()
        if low in ("glc", "sc0"):
            return True
        if low.startswith("th:"):
            value = low[3:]
            if "return" in value:
                return True
            try:
                return bool(int(value, 0) & 1)
            except ValueError:
                continue
    return False
