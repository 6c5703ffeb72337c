; From llvm/llvm-project llvm/test/CodeGen/AMDGPU/llvm.amdgcn.s.barrier.ll @0507d634 (Apache-2.0 WITH LLVM-exception).
; FileCheck lines removed; IR unchanged.

define amdgpu_kernel void @test_barrier(ptr addrspace(1) %out, i32 %size) #0 {
entry:
  %tmp = call i32 @llvm.amdgcn.workitem.id.x()
  %tmp1 = getelementptr i32, ptr addrspace(1) %out, i32 %tmp
  store i32 %tmp, ptr addrspace(1) %tmp1
  call void @llvm.amdgcn.s.barrier()
  %tmp3 = sub i32 %size, 1
  %tmp4 = sub i32 %tmp3, %tmp
  %tmp5 = getelementptr i32, ptr addrspace(1) %out, i32 %tmp4
  %tmp6 = load i32, ptr addrspace(1) %tmp5
  store i32 %tmp6, ptr addrspace(1) %tmp1
  ret void
}

declare void @llvm.amdgcn.s.barrier() #1
declare i32 @llvm.amdgcn.workitem.id.x() #2

attributes #0 = { nounwind }
attributes #1 = { convergent nounwind }
attributes #2 = { nounwind readnone }
