	.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
	.text
	.globl	lsp_checked
	.type	lsp_checked,@function
lsp_checked:
	s_load_b64 s[4:5], s[0:1], 0x0
	s_mov_b32 s10, 0
	v_mov_b32_e32 v1, s4
	ds_load_b128 v[8:11], v0
	ds_load_b128 v[12:15], v0 offset:64
	s_wait_dscnt 0x0
	v_add_f32_e32 v3, v8, v9
	s_wait_loadcnt 0x0
	s_wait_dscnt 0x0
	v_add_f32_e32 v4, v12, v3
	s_endpgm
