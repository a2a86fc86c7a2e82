/*===- soaprt_cuda.h - libsoaprt's CUDA back end, C ABI -------------------===*
 *
 * `soapc --target=cuda --emit=obj|exe` produces the same SPMD program as the
 * CPU target (one rank per GPU, rank r = device r of the strategy's machine),
 * with every tensor in device memory for the whole step. It links
 * libsoaprt_cuda.a instead of libsoaprt.a: the functions of soaprt.h keep
 * their meaning (soaprt_transfer and the collectives then take device
 * regions and run on NCCL; soaprt_bind_output copies a device buffer to the
 * host), and the compiled code calls the functions below as well.
 *
 * One CUDA stream per rank carries the computation in program order: kernels,
 * library calls, copies and stream-ordered allocation. With more than one
 * rank a second stream carries the communication (NCCL and its packing
 * copies): each start waits there for the work issued before it, and the
 * computation waits for it only at soaprt_comm_wait (soaprt.h), which the
 * compiled code places before the next use of the region's buffer. The host
 * never reads device memory except in the runtime, which synchronizes the
 * stream first (bind_output, timing), so the compiled code never waits for
 * the GPU.
 *
 * Devices: rank r uses GPU `local rank` (its index among the ranks on its
 * node); a node needs one GPU per rank (NCCL). Communication is NCCL (world
 * communicator made by soaprt_init; one per device group of a collective,
 * made by its members when soap_setup prepares it, soaprt_prepare_group,
 * and cached); all_reduce and reduce_scatter take f32, f64, f16, bf16, i1,
 * i8, i32, i64 (not i16), all_gather any type.
 *
 * Memory: device allocations are stream-ordered (cudaMallocAsync) from the
 * device's pool, which keeps freed memory for reuse. soaprt_main prints the
 * peak (largest over ranks) unless --quiet.
 *
 * Errors: every CUDA, cuBLAS, cuDNN and NCCL status is checked; a failure
 * prints "soaprt: error: [rank R] <call> failed in <op>: <message>" and
 * aborts every rank (MPI_Abort). Without a usable GPU (no driver, no
 * device, more ranks on a node than GPUs), soaprt_init prints
 * "soaprt: error: [rank R] no CUDA GPU available (...)" (or why the GPU is
 * unusable) and every rank exits with status 1. With SOAPRT_CUDA_SYNC=1 in
 * the environment the runtime synchronizes after every kernel and library
 * call, so that an asynchronous fault names the op that caused it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_CUDA_H
#define SOAP_RUNTIME_SOAPRT_CUDA_H

#include "soap/Runtime/soaprt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of the library calls. */
enum {
  /* Let cuBLAS / cuDNN use TF32 tensor cores for fp32 (soapc --allow-tf32);
     without it fp32 math is strict IEEE fp32. */
  SOAPRT_CUDA_ALLOW_TF32 = 1,
  /* Overwrite the output instead of accumulating into it (beta = 0): the
     compiler dropped the zero fill that came right before the call. */
  SOAPRT_CUDA_OVERWRITE = 2
};

/* --- Device memory ------------------------------------------------------- */
/* memref.alloc / memref.dealloc of the compiled code (finalize-memref-to-llvm
 * with use-generic-functions): stream-ordered device allocations from a pool
 * that keeps freed memory for reuse. Never NULL (out of memory is fatal);
 * 0 bytes gives a valid pointer. The host must not dereference them: a
 * contiguous memref.copy lowered to a host memcpy would crash; copies of
 * device memory go through memrefCopy (below, any layout) or gpu.memcpy. */
void *_mlir_memref_to_llvm_alloc(size_t bytes);
/* (use-aligned-alloc): fatal if the allocation is not that aligned
 * (pool allocations are at least 256-byte aligned in practice). */
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes);
void _mlir_memref_to_llvm_free(void *ptr);

/* Inputs: soap_setup binds each input with soaprt_bind_input as on the CPU;
 * the bound buffer may be host memory (soaprt_main fills it; the runtime
 * uploads it into a device buffer of its own) or device memory (soaprt_main
 * fills a host shadow; the runtime uploads it into the bound buffer).
 * soaprt_cuda_input returns the device address of input `index`: uploaded
 * on the first call, then kept for the whole run (the program must not
 * write it: later iterations read the same data). */
int64_t soaprt_cuda_input(int64_t index);
/* Device copy of `bytes` bytes of host constant data at `hostAddress`
 * (a memref.global of the compiled code): uploaded on the first call for
 * that address (again if a later call asks for more bytes), then cached;
 * the program must not write it. */
int64_t soaprt_cuda_constant(int64_t hostAddress, int64_t bytes);

/* Also with device memory (CUDA back end): soaprt_transfer and the
 * collectives take device regions (any strides); the `devices` list of a
 * collective may be host or device memory (host is cheaper: no wait);
 * soaprt_bind_output copies from host or device memory; memrefCopy copies
 * between any two views in either memory, in stream order. */

/* --- Library calls (C interface; unranked descriptors as in soaprt.h) --- */
/* C[b] += A[b] x B[b] for rank-3 strided views A: BxMxK, B: BxKxN,
 * C: BxMxN (f32; the 16-bit variants below), or C += A x B for rank-2 views
 * (MxK, KxN, MxN; all three of the same rank). A and B may have batch size 1
 * (broadcast) or any batch stride, 0 included. A matrix with a unit stride
 * along one of its two inner dimensions is used in place; otherwise (or when
 * C's batches overlap) it goes through a packed copy. `op` names the op for
 * error messages. cuBLAS (strided-batched GEMM; CUBLAS_COMPUTE_32F_FAST_TF32
 * with SOAPRT_CUDA_ALLOW_TF32, else CUBLAS_COMPUTE_32F). Any size 0: nothing to
 * do. */
#define SOAPRT_CUDA_DECLARE_MATMUL(suffix)                                     \
  void _mlir_ciface_soaprt_cuda_matmul_##suffix(                               \
      soaprt_unranked_memref_t *a, soaprt_unranked_memref_t *b,                \
      soaprt_unranked_memref_t *c, int64_t flags, const char *op);
SOAPRT_CUDA_DECLARE_MATMUL(f32)
/* The same for 16-bit operands, on tensor cores with fp32 accumulation
 * (CUBLAS_COMPUTE_32F; SOAPRT_CUDA_ALLOW_TF32 changes nothing): A, B and C
 * bf16 (C rounded once, after the whole sum), or f16; A and B bf16 (f16)
 * and C f32 (mixed precision). */
SOAPRT_CUDA_DECLARE_MATMUL(bf16)
SOAPRT_CUDA_DECLARE_MATMUL(f16)
SOAPRT_CUDA_DECLARE_MATMUL(bf16_f32)
SOAPRT_CUDA_DECLARE_MATMUL(f16_f32)
#undef SOAPRT_CUDA_DECLARE_MATMUL
/* Y += conv2d(X, W) for rank-4 strided views X: NxCxHxW, W: Fx(C/G)xKHxKW,
 * Y: NxFxOHxOW (f32; Y = conv with SOAPRT_CUDA_OVERWRITE), X zero-padded by
 * padH rows above and below and padW columns left and right, with the given
 * strides and dilations (cross-correlation, as linalg.conv_2d_nchw_fchw), in
 * G = `groups` channel groups: filters [g F/G, (g+1) F/G) read channels
 * [g C/G, (g+1) C/G) (linalg.conv_2d_ngchw_gfchw with G and C, G and F
 * merged; depthwise_conv_2d_nchw_chw is G = C = F; G = 1: a plain one).
 * cuDNN; the algorithm is chosen once per shape and cached (timed with
 * cudnnFindConvolutionForwardAlgorithmEx: the first call of each shape is
 * slow), the workspace grows as needed. Strict fp32 uses CUDNN_FMA_MATH,
 * SOAPRT_CUDA_ALLOW_TF32 allows TF32 tensor cores. */
SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_f32, x, w, y);

/* dW += dL/dW of Y = conv2d(X, W) given dY = dL/dY (the filter gradient:
 * the correlation of X with dY over images and output positions), same
 * views, padding, strides, dilations and groups as
 * _mlir_ciface_soaprt_cuda_conv2d_f32 (dW: Fx(C/G)xKHxKW; dW = the gradient with SOAPRT_CUDA_OVERWRITE). cuDNN's
 * cudnnConvolutionBackwardFilter, the algorithm chosen once per shape
 * (cudnnFindConvolutionBackwardFilterAlgorithmEx) as for the forward. */
SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_filter_grad_f32, x, dy,
                      dw);

/* dX += dL/dX of Y = conv2d(X, W) given W and dY = dL/dY (the input
 * gradient, a transposed convolution), same views, padding, strides,
 * dilations and groups as _mlir_ciface_soaprt_cuda_conv2d_f32 (dX: NxCxHxW; dX = the
 * gradient with SOAPRT_CUDA_OVERWRITE). cuDNN's cudnnConvolutionBackwardData,
 * the algorithm chosen once per shape
 * (cudnnFindConvolutionBackwardDataAlgorithmEx) as for the forward. */
SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_input_grad_f32, w, dy,
                      dx);
/* The three for X, W and Y of bf16 (_bf16) or f16 (_f16): fp32 compute
 * (cuDNN's PSEUDO_BFLOAT16 / PSEUDO_HALF configurations) on tensor cores;
 * SOAPRT_CUDA_ALLOW_TF32 changes nothing. */
#define SOAPRT_CUDA_DECLARE_CONV(suffix)                                       \
  SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_##suffix, x, w, y);    \
  SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_filter_grad_##suffix,  \
                        x, dy, dw);                                            \
  SOAPRT_CONV_SIGNATURE(_mlir_ciface_soaprt_cuda_conv2d_input_grad_##suffix,   \
                        w, dy, dx);
SOAPRT_CUDA_DECLARE_CONV(bf16)
SOAPRT_CUDA_DECLARE_CONV(f16)
#undef SOAPRT_CUDA_DECLARE_CONV

/* --- MLIR's GPU host ABI (what gpu-to-llvm and the gpu.binary translation
 * of LLVM 22 call; Debian ships no libmlir_cuda_runtime). Kernels come as
 * PTX (mgpuModuleLoadJIT, JIT-compiled by the driver) or cubin / fatbin
 * (mgpuModuleLoad). The translation loads modules from global constructors,
 * before main(): the loads only record the image, which is loaded into the
 * rank's GPU on the first mgpuModuleGetFunction (after soaprt_init).
 * Functions are cached per (module, name pointer). A kernel failure names
 * the kernel.
 *
 * The compiled code wraps every launch in mgpuStreamCreate ->
 * mgpuLaunchKernel -> mgpuStreamSynchronize -> mgpuStreamDestroy. Create
 * returns the rank's stream and Destroy does nothing. Synchronize waits
 * only if an mgpuMemcpy was queued since the last wait (its destination
 * may be host memory the program reads next); otherwise it does nothing,
 * which is safe because every piece of device work of the rank is ordered
 * on that one stream and the host reads device memory only in the runtime,
 * which waits first. So launches never stall the host. --- */
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
/* `extra` must be NULL (the translation always passes NULL); a grid with a
 * 0 dimension launches nothing; dynamic shared memory above 48 KiB is
 * allowed on the kernel first. */
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);             /* the rank's stream */
void mgpuStreamDestroy(void *stream);     /* no-op */
void mgpuStreamSynchronize(void *stream); /* see above */
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
/* gpu.alloc (from the pool, as memref.alloc; host_shared: managed memory),
 * gpu.dealloc, gpu.memcpy (any direction), gpu.memset (count elements). */
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  void *stream);
/* No-op: the runtime gives each rank its GPU. */
void mgpuSetDefaultDevice(int32_t device);

/* --- For soaprt_main.c ---------------------------------------------------- */
/* Waits for the rank's stream (timing); a no-op on the CPU back end. */
void soaprt_device_synchronize(void);

#ifdef __cplusplus
}
#endif

#endif /* SOAP_RUNTIME_SOAPRT_CUDA_H */
