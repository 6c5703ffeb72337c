; stinkywait test input (written for this project): gfx1250 async and tensor LDS fills still in
; flight before a FLAT load (which may reach LDS) and before a DS load of the same wave.
target triple = "amdgcn-amd-amdhsa"
declare void @llvm.amdgcn.global.load.async.to.lds.b32(ptr addrspace(1), ptr addrspace(3), i32, i32)
declare void @llvm.amdgcn.tensor.load.to.lds(<4 x i32>, <8 x i32>, <4 x i32>, <4 x i32>, i32 immarg)
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
define amdgpu_kernel void @async_then_flat(ptr addrspace(1) %g, ptr addrspace(3) %l, ptr %p, ptr addrspace(1) %o) {
  call void @llvm.amdgcn.global.load.async.to.lds.b32(ptr addrspace(1) %g, ptr addrspace(3) %l, i32 0, i32 0)
  %v = load i32, ptr %p
  store i32 %v, ptr addrspace(1) %o
  ret void
}
define amdgpu_kernel void @tensor_then_flat(<4 x i32> inreg %a, <8 x i32> inreg %b, ptr %p, ptr addrspace(1) %o) {
  call void @llvm.amdgcn.tensor.load.to.lds(<4 x i32> %a, <8 x i32> %b, <4 x i32> zeroinitializer, <4 x i32> zeroinitializer, i32 0)
  %v = load i32, ptr %p
  store i32 %v, ptr addrspace(1) %o
  ret void
}
define amdgpu_kernel void @tensor_then_ds(<4 x i32> inreg %a, <8 x i32> inreg %b, ptr addrspace(3) %l, ptr addrspace(1) %o) {
  call void @llvm.amdgcn.tensor.load.to.lds(<4 x i32> %a, <8 x i32> %b, <4 x i32> zeroinitializer, <4 x i32> zeroinitializer, i32 0)
  %v = load i32, ptr addrspace(3) %l
  store i32 %v, ptr addrspace(1) %o
  ret void
}
