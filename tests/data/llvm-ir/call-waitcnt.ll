; From llvm/llvm-project llvm/test/CodeGen/AMDGPU/call-waitcnt.ll @058ec5f2 (Apache-2.0 WITH LLVM-exception).
; FileCheck lines removed; IR unchanged.

define amdgpu_kernel void @call_memory_arg_load(ptr addrspace(3) %ptr, i32) #0 {
  %vgpr = load volatile i32, ptr addrspace(3) %ptr
  call void @func(i32 %vgpr)
  ret void
}

define amdgpu_kernel void @call_memory_no_dep(ptr addrspace(1) %ptr, i32) #0 {
  store i32 0, ptr addrspace(1) %ptr
  call void @func(i32 0)
  ret void
}

define amdgpu_kernel void @call_no_wait_after_call(ptr addrspace(1) %ptr, i32) #0 {
  call void @func(i32 0)
  store i32 0, ptr addrspace(1) %ptr
  ret void
}

define amdgpu_kernel void @call_no_wait_after_call_return_val(ptr addrspace(1) %ptr, i32) #0 {
  %rv = call i32 @func.return(i32 0)
  store i32 %rv, ptr addrspace(1) %ptr
  ret void
}

define amdgpu_kernel void @call_got_load(ptr addrspace(1) %ptr, i32) #0 {
  call void @got.func(i32 0)
  ret void
}

define void @tailcall_got_load(ptr addrspace(1) %ptr, i32) #0 {
  tail call void @got.func(i32 0)
  ret void
}

define void @tail_call_memory_arg_load(ptr addrspace(3) %ptr, i32) #0 {
  %vgpr = load volatile i32, ptr addrspace(3) %ptr
  tail call void @func(i32 %vgpr)
  ret void
}

declare hidden void @func(i32) #0
declare hidden i32 @func.return(i32) #0
declare void @got.func(i32) #0

attributes #0 = { nounwind "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
