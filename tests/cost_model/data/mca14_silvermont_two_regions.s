# LLVM-MCA-BEGIN chain
movups (%rdi), %xmm1
mulps %xmm0, %xmm1
addps %xmm1, %xmm2
movups 16(%rdi), %xmm3
mulps %xmm0, %xmm3
addps %xmm3, %xmm4
addq $32, %rdi
decq %rcx
jne -30
# LLVM-MCA-END
# LLVM-MCA-BEGIN ports
mulps %xmm0, %xmm1
mulps %xmm0, %xmm2
mulps %xmm0, %xmm3
mulps %xmm0, %xmm4
# LLVM-MCA-END
