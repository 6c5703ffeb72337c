	.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
	.text
	.globl	lsp_sample
	.p2align	8
	.type	lsp_sample,@function
lsp_sample:
	s_load_b64 s[4:5], s[0:1], 0x0
	s_load_b64 s[6:7], s[0:1], 0x8
	s_mov_b32 s10, 0
	v_mov_b32_e32 v1, s4
	buffer_load_b32 v2, v1, s[4:7], null offen
	ds_load_b128 v[8:11], v0
	ds_load_b128 v[12:15], v0 offset:64
	v_add_f32_e32 v3, v8, v9
	v_add_f32_e32 v4, v2, v3
.LBB0_1:
	ds_load_b64 v[20:21], v0 offset:128
	v_add_f32_e32 v5, v20, v12
	s_add_co_i32 s10, s10, 1
	s_cmp_lt_u32 s10, 8
	s_cbranch_scc1 .LBB0_1
; %bb.2:
	global_store_b32 v0, v5, s[6:7]
	s_endpgm
