; stinkywait test input (written for this project): an LDS DMA still in flight before FLAT
; accesses through a generic pointer, which may reach LDS.
target triple = "amdgcn-amd-amdhsa"
declare void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32>, ptr addrspace(3), i32, i32, i32, i32, i32)

define amdgpu_kernel void @dma_then_flat_load(<4 x i32> %rsrc, ptr addrspace(3) %l, ptr %p, ptr addrspace(1) %o) {
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) %l, i32 4, i32 0, i32 0, i32 0, i32 0)
  %v = load i32, ptr %p
  store i32 %v, ptr addrspace(1) %o
  ret void
}

define amdgpu_kernel void @dma_then_flat_store(<4 x i32> %rsrc, ptr addrspace(3) %l, ptr %p) {
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) %l, i32 4, i32 0, i32 0, i32 0, i32 0)
  store i32 7, ptr %p
  ret void
}

define amdgpu_kernel void @ds_then_flat_store(ptr addrspace(3) %l, ptr %p, ptr addrspace(1) %o) {
  %v = load i32, ptr addrspace(3) %l
  store i32 7, ptr %p
  store i32 %v, ptr addrspace(1) %o
  ret void
}
