; The smoke test's kernel: out[i] = 2 * in[i] + 1 for i < n (one thread each).
; gen-cuda-smoke-kernels.sh turns it into cuda_smoke_kernels.h (PTX and an sm_90 cubin).
target datalayout = "e-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define ptx_kernel void @soaprt_smoke_scale(ptr addrspace(1) %in, ptr addrspace(1) %out, i64 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %bid, %bdim
  %i32 = add i32 %b, %tid
  %i = zext i32 %i32 to i64
  %inb = icmp slt i64 %i, %n
  br i1 %inb, label %body, label %exit
body:
  %pin = getelementptr float, ptr addrspace(1) %in, i64 %i
  %v = load float, ptr addrspace(1) %pin
  %m = fmul float %v, 2.0
  %r = fadd float %m, 1.0
  %pout = getelementptr float, ptr addrspace(1) %out, i64 %i
  store float %r, ptr addrspace(1) %pout
  br label %exit
exit:
  ret void
}
