; From llvm/llvm-project llvm/test/CodeGen/AMDGPU/idemponent-atomics.ll @11ee4821 (Apache-2.0 WITH LLVM-exception).
; FileCheck lines removed; IR unchanged.

define i32 @global_agent_monotonic_idempotent_or(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") monotonic, align 4
  ret i32 %val
}

define i32 @global_agent_acquire_idempotent_or(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") acquire, align 4
  ret i32 %val
}

define i32 @global_agent_release_idempotent_or(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") release, align 4
  ret i32 %val
}

define i32 @global_agent_release_idempotent_or_no_remote(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") release, align 4, !amdgpu.no.remote.memory !0
  ret i32 %val
}

define i32 @global_agent_release_idempotent_or_no_fine_grained(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") release, align 4, !amdgpu.no.fine.grained.memory !0
  ret i32 %val
}

define i32 @global_agent_acquire_release_idempotent_or(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") acq_rel, align 4
  ret i32 %val
}

define i32 @global_agent_acquire_release_idempotent_or__no_fine_grained(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") acq_rel, align 4, !amdgpu.no.fine.grained.memory !0
  ret i32 %val
}

define i32 @global_agent_seq_cst_idempotent_or(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw or ptr addrspace(1) %in, i32 0 syncscope("agent-one-as") seq_cst, align 4
  ret i32 %val
}

define i32 @global_agent_monotonic_idempotent_add(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw add ptr addrspace(1) %in, i32 0 syncscope("workgroup") monotonic, align 4
  ret i32 %val
}

define i32 @global_agent_monotonic_idempotent_add__no_fine_grained(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw add ptr addrspace(1) %in, i32 0 syncscope("workgroup") monotonic, align 4, !amdgpu.no.fine.grained.memory !0
  ret i32 %val
}

define i32 @global_agent_monotonic_idempotent_sub(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw sub ptr addrspace(1) %in, i32 0 syncscope("wavefront") monotonic, align 4
  ret i32 %val
}

define i32 @global_system_monotonic_idempotent_xor(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw xor ptr addrspace(1) %in, i32 0 monotonic, align 4
  ret i32 %val
}

define i32 @global_agent_monotonic_idempotent_and(ptr addrspace(1) %in) {
entry:
  %val = atomicrmw and ptr addrspace(1) %in, i32 -1 syncscope("singlethread") monotonic, align 4
  ret i32 %val
}

!0 = !{}
