// An LDS store other waves read after the barrier: drained before it unless one wave runs
// (numWaves = 1: the store and the load of one wave are ordered, nobody else reads).
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
waves:
  v_mov_b32 v1, 0x100
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
  v_add_nc_u32 v6, v4, v4
  s_endpgm
