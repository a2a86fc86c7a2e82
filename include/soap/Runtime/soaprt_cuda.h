/*===- soaprt_cuda.h - libsoaprt's CUDA back end, C ABI -------------------===*
 *
 * `soapc --target=cuda --emit=obj|exe` produces the same SPMD program as the
 * CPU target (one rank per GPU, rank r = device r of the strategy's machine),
 * with every tensor in device memory for the whole step. It links
 * libsoaprt_cuda.a instead of libsoaprt.a: the functions of soaprt.h keep
 * their meaning (soaprt_transfer and soaprt_all_reduce then take device
 * regions and run on NCCL; soaprt_bind_output copies a device buffer to the
 * host), and the compiled code calls the functions below as well.
 *
 * One CUDA stream per rank carries all device work in program order: kernels,
 * library calls, copies, NCCL and stream-ordered allocation. The host never
 * reads device memory except in the runtime, which synchronizes the stream
 * first (bind_output, timing), so the compiled code never waits for the GPU.
 *
 * Errors: every CUDA, cuBLAS, cuDNN and NCCL status is checked; a failure
 * prints "soaprt: error: [rank R] <call> failed in <op>: <message>" and
 * aborts every rank (MPI_Abort). Without a usable GPU, soaprt_init fails with
 * a clear message and exit status 1. With SOAPRT_CUDA_SYNC=1 in the
 * environment the runtime synchronizes after every kernel and library call,
 * so that an asynchronous fault names the op that caused it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_CUDA_H
#define SOAP_RUNTIME_SOAPRT_CUDA_H

#include "soap/Runtime/soaprt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of the library calls. */
enum {
  /* Let cuBLAS / cuDNN use TF32 tensor cores for fp32 (soapc --allow-tf32);
     without it fp32 math is strict IEEE fp32. */
  SOAPRT_CUDA_ALLOW_TF32 = 1
};

/* --- Device memory ------------------------------------------------------- */
/* memref.alloc / memref.dealloc of the compiled code (finalize-memref-to-llvm
 * with use-generic-functions): stream-ordered device allocations from a pool
 * that keeps freed memory for reuse. */
void *_mlir_memref_to_llvm_alloc(size_t bytes);
void _mlir_memref_to_llvm_free(void *ptr);

/* Device address of input `index` (bound by soap_setup and filled by the
 * runtime): uploaded on the first call, then kept for the whole run. */
int64_t soaprt_cuda_input(int64_t index);
/* Device copy of `bytes` bytes of host constant data at `hostAddress`
 * (a memref.global of the compiled code): uploaded once per address. */
int64_t soaprt_cuda_constant(int64_t hostAddress, int64_t bytes);

/* --- Library calls (C interface; unranked descriptors as in soaprt.h) --- */
/* C[b] += A[b] x B[b] for rank-3 strided views A: BxMxK, B: BxKxN,
 * C: BxMxN (f32). Each matrix needs a unit stride along one of its two
 * inner dimensions (otherwise it goes through a packed copy). `op` names the
 * op for error messages. cuBLAS (strided-batched GEMM). */
void _mlir_ciface_soaprt_cuda_matmul_f32(soaprt_unranked_memref_t *a,
                                         soaprt_unranked_memref_t *b,
                                         soaprt_unranked_memref_t *c,
                                         int64_t flags, const char *op);
/* Y += conv2d(X, W) for rank-4 strided views X: NxCxHxW, W: FxCxKHxKW,
 * Y: NxFxOHxOW (f32, no padding: the program pads X itself), with the given
 * strides and dilations. cuDNN; the algorithm is chosen once per shape and
 * cached, the workspace grows as needed. */
void _mlir_ciface_soaprt_cuda_conv2d_f32(soaprt_unranked_memref_t *x,
                                         soaprt_unranked_memref_t *w,
                                         soaprt_unranked_memref_t *y,
                                         int64_t strideH, int64_t strideW,
                                         int64_t dilationH, int64_t dilationW,
                                         int64_t flags, const char *op);

/* --- MLIR's GPU host ABI (what gpu-to-llvm and the gpu.binary translation
 * call; Debian ships no libmlir_cuda_runtime). Kernels come as PTX (JIT-
 * compiled by the driver when the module is first used) or cubin. --- */
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);     /* the rank's stream */
void mgpuStreamDestroy(void *stream);     /* no-op */
void mgpuStreamSynchronize(void *stream); /* no-op (see above) */

/* --- For soaprt_main.c ---------------------------------------------------- */
/* Waits for the rank's stream (timing); a no-op on the CPU back end. */
void soaprt_device_synchronize(void);

#ifdef __cplusplus
}
#endif

#endif /* SOAP_RUNTIME_SOAPRT_CUDA_H */
