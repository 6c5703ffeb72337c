// gemm_loop.s - a small gfx1250 GEMM main loop for the stinkywait demo.
//
// Each iteration the Tensor Data Mover copies one A tile and one B tile from global memory
// into LDS (tensor_load_to_lds), a split barrier publishes them to the whole workgroup, each
// wave reads its fragments with ds_load_b128 and accumulates them with a bf16 WMMA.  A bias
// tile is fetched with global_load_b128 before the loop and added in the epilogue.
//
// The file deliberately contains NO s_wait_* instruction: `stinkywait insert` adds them.
// `// st.token:N` names the LDS region an instruction touches (0 = A tile, 1 = B tile).
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
	.amdhsa_code_object_version 6
	.text
	.globl	gemm_loop
	.p2align	8
	.type	gemm_loop,@function
gemm_loop:
	s_load_b64 s[4:5], s[0:1], 0x0          // A: global address of the first A tile
	s_load_b64 s[6:7], s[0:1], 0x8          // bias
	s_load_b64 s[8:9], s[0:1], 0x10         // C
	s_load_b32 s10, s[0:1], 0x18            // number of K tiles
	v_lshlrev_b32_e32 v40, 4, v0            // per-lane byte offset of the fragments
	v_mov_b32_e32 v41, 0
	s_mov_b32 s12, 1                        // D# group 0 of the A tile: valid, LDS 0x0
	s_mov_b32 s13, 0
	s_mov_b32 s14, s4                       // global base, low and high half
	s_mov_b32 s15, s5
	s_mov_b32 s24, 1                        // D# group 0 of the B tile: LDS 0x2000
	s_mov_b32 s25, 0x2000
	s_add_nc_u64 s[26:27], s[4:5], 0x100000
	s_mov_b32 s16, 0x10000                  // D# group 1: shape and strides
	s_mov_b32 s17, 0x400
	s_mov_b32 s18, 0x400
	s_mov_b32 s19, 0x20
	s_mov_b32 s20, 0x40
	s_mov_b32 s21, 0
	s_mov_b32 s22, 0x400
	s_mov_b32 s23, 0
	v_add_nc_u64_e32 v[44:45], s[6:7], v[40:41]
	v_add_nc_u64_e32 v[46:47], s[8:9], v[40:41]
	global_load_b128 v[48:51], v[44:45], off
	v_mov_b64_e32 v[0:1], 0
	v_mov_b64_e32 v[2:3], 0
	v_mov_b64_e32 v[4:5], 0
	v_mov_b64_e32 v[6:7], 0
.LBB0_1:                                // the K loop
	tensor_load_to_lds s[12:15], s[16:23]   // st.token:0
	tensor_load_to_lds s[24:27], s[16:23]   // st.token:1
	s_barrier_signal -1                     // st.token:0,1
	s_barrier_wait -1                       // st.token:0,1
	ds_load_b128 v[8:11], v40               // st.token:0   A, k-step 0
	ds_load_b128 v[12:15], v40 offset:512   // st.token:0
	ds_load_b128 v[16:19], v40 offset:8192  // st.token:1   B, k-step 0
	ds_load_b128 v[20:23], v40 offset:8704  // st.token:1
	ds_load_b128 v[24:27], v40 offset:64    // st.token:0   A, k-step 1
	ds_load_b128 v[28:31], v40 offset:576   // st.token:0
	ds_load_b128 v[32:35], v40 offset:8256  // st.token:1   B, k-step 1
	ds_load_b128 v[36:39], v40 offset:8768  // st.token:1
	v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]
	v_wmma_f32_16x16x32_bf16 v[0:7], v[24:31], v[32:39], v[0:7]
	s_add_nc_u64 s[14:15], s[14:15], 64     // next A tile
	s_add_nc_u64 s[26:27], s[26:27], 64     // next B tile
	s_add_co_i32 s10, s10, -1
	s_cmp_lg_u32 s10, 0
	s_barrier_signal -1                     // st.token:0,1
	s_barrier_wait -1                       // st.token:0,1
	s_cbranch_scc1 .LBB0_1
	v_add_f32_e32 v0, v0, v48               // epilogue: add the bias
	v_add_f32_e32 v1, v1, v49
	v_add_f32_e32 v2, v2, v50
	v_add_f32_e32 v3, v3, v51
	global_store_b128 v[46:47], v[0:3], off
	global_store_b128 v[46:47], v[4:7], off offset:16
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel gemm_loop
		.amdhsa_group_segment_fixed_size 16384
		.amdhsa_kernarg_size 32
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_next_free_vgpr 52
		.amdhsa_next_free_sgpr 28
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	gemm_loop, .Lfunc_end0-gemm_loop
