; From llvm/llvm-project llvm/test/CodeGen/AMDGPU/lds-dma-workgroup-release.ll @06ff2ebe
; (Apache-2.0 WITH LLVM-exception). FileCheck lines removed; IR unchanged.

declare void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) nocapture, i32 %size, i32 %voffset, i32 %soffset, i32 %offset, i32 %aux)

define amdgpu_kernel void @barrier_release(<4 x i32> inreg %rsrc,
                                           ptr addrspace(3) inreg %lds1,
                                           ptr addrspace(3) inreg %lds2,
                                           ptr addrspace(1) %dummy2) {
main_body:
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) %lds1, i32 4, i32 2048, i32 0, i32 0, i32 0), !alias.scope !102
  fence syncscope("workgroup") release
  tail call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %load = load i32, ptr addrspace(3) %lds2, align 4, !noalias !105
  store i32 %load, ptr addrspace(1) %dummy2, align 4, !noalias !105
  ret void
}

define amdgpu_kernel void @fence_fence(<4 x i32> inreg %rsrc,
                                       ptr addrspace(3) inreg %lds1,
                                       ptr addrspace(3) inreg %lds2,
                                       ptr addrspace(1) %flag,
                                       ptr addrspace(1) %dummy2) {
main_body:
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) %lds1, i32 4, i32 2048, i32 0, i32 0, i32 0), !alias.scope !102
  fence syncscope("workgroup") release
  store atomic i32 1, ptr addrspace(1) %flag syncscope("workgroup") monotonic, align 4, !noalias !105
  %unused_flag = load atomic i32, ptr addrspace(1) %flag syncscope("workgroup") monotonic, align 4, !noalias !105
  fence syncscope("workgroup") acquire
  %load = load i32, ptr addrspace(3) %lds2, align 4, !noalias !105
  store i32 %load, ptr addrspace(1) %dummy2, align 4, !noalias !105
  ret void
}

define amdgpu_kernel void @release_acquire(<4 x i32> inreg %rsrc,
                                       ptr addrspace(3) inreg %lds1,
                                       ptr addrspace(3) inreg %lds2,
                                       ptr addrspace(1) %flag,
                                       ptr addrspace(1) %dummy2) {
main_body:
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rsrc, ptr addrspace(3) %lds1, i32 4, i32 2048, i32 0, i32 0, i32 0), !alias.scope !102
  store atomic i32 1, ptr addrspace(1) %flag syncscope("workgroup") release, align 4, !noalias !105
  %unused_flag = load atomic i32, ptr addrspace(1) %flag syncscope("workgroup") acquire, align 4, !noalias !105
  %load = load i32, ptr addrspace(3) %lds2, align 4, !noalias !105
  store i32 %load, ptr addrspace(1) %dummy2, align 4, !noalias !105
  ret void
}

declare void @llvm.amdgcn.s.barrier()

!100 = !{!100}
!101 = !{!101, !100}
!102 = !{!101}
!103 = !{!103, !100}
!104 = !{!103}
!105 = !{!101, !103}
