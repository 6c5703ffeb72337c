// gfx942: LDS and scalar loads share lgkmcnt (LDS in order, SMEM out of order); VMEM on vmcnt.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.globl shared942
shared942:
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	ds_read_b128 v[0:3], v10
	ds_read_b128 v[4:7], v10 offset:64
	buffer_load_dword v20, v11, s[8:11], 0 offen
	v_add_f32 v30, v0, v1
	v_add_f32 v31, v20, v20
	s_endpgm
