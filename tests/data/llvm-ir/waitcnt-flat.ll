; From llvm/llvm-project llvm/test/CodeGen/AMDGPU/waitcnt-flat.ll @960c3ec4 (Apache-2.0 WITH LLVM-exception).
; FileCheck lines removed; IR unchanged.

define amdgpu_kernel void @test(ptr %out, i32 %in) {
  store volatile i32 0, ptr %out
  %val = load volatile i32, ptr %out
  ret void
}

define amdgpu_kernel void @test_waitcnt_type_flat_global(ptr addrspace(1) %in) {
  %val = load volatile i32, ptr addrspace(1) %in
  store volatile i32 %val, ptr addrspace(3) undef
  ret void
}
