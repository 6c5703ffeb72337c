; stinkywait test input (written for this project): issue 19's example, a kernel that passes a
; DS load's result to a callee defined in the same file (the shape of call-waitcnt.ll's
; call_memory_arg_load, with @func defined): the callee reads v0, which only its entry wait
; protects.
target triple = "amdgcn-amd-amdhsa"

define hidden void @func(i32 %x, ptr addrspace(1) %o) #0 {
  store i32 %x, ptr addrspace(1) %o
  ret void
}

define amdgpu_kernel void @call_memory_arg_load(ptr addrspace(3) %ptr, ptr addrspace(1) %o) #0 {
  %vgpr = load volatile i32, ptr addrspace(3) %ptr
  call void @func(i32 %vgpr, ptr addrspace(1) %o)
  ret void
}

attributes #0 = { nounwind "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-implicitarg-ptr" }
