	.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
	.text
	.globl	lsp_join
	.type	lsp_join,@function
lsp_join:
	ds_load_b64 v[0:1], v10
	ds_load_b64 v[2:3], v10 offset:8
	s_cmp_eq_u32 s13, 1
	s_cbranch_scc1 .LBB0_2
; %bb.1: both arms leave the same two loads in flight
	v_mov_b32_e32 v20, 1
	s_branch .LBB0_3
.LBB0_2:
	v_mov_b32_e32 v20, 2
.LBB0_3:
	v_add_f32_e32 v30, v0, v1
	s_endpgm
