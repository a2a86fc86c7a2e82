/*===- cuda_emulation.h - Host emulation of CUDA, cuBLAS, cuDNN and NCCL --===*
 *
 * libsoaprt_cuda_emu.a is libsoaprt_cuda (the real soaprt_cuda*.c files)
 * linked with host implementations of every CUDA runtime, cuBLAS, cuDNN and
 * NCCL function those files call. It exists to test the CUDA lowering
 * (`soapc --target=cuda --cuda-host-emulation`: kernels become host loops)
 * and the CUDA runtime on machines without a GPU; it is never used for
 * real runs.
 *
 *   cuda_runtime_host.c  devices, errors, streams, events, object registry
 *   cuda_memory_host.c   device memory (tracked host memory), pools,
 *                        pointer attributes, copies, memsets
 *   cuda_kernel_host.c   libraries and kernels: recorded, never executed
 *   cublas_host.c        cuBLAS handles and strided-batched GEMM
 *   cudnn_host.c         cuDNN descriptors and the convolutions
 *   nccl_mpi.c           NCCL over MPI point-to-point on MPI_COMM_WORLD
 *
 * Everything runs synchronously on the calling thread. "Device memory" is
 * host memory (256-byte aligned, guard bytes on both sides, new memory
 * filled with 0xff bytes: NaN as f32) that the emulation tracks, so that
 * it can be strict where a real library fails or a GPU would fault: wrong
 * memcpy directions, frees of unknown pointers, uncreated streams, bad
 * leading dimensions, descriptors that do not fit, too small workspaces,
 * accesses past the end of an allocation. Such misuse returns the real
 * error code and prints "soaprt-emu: <call>: <why>" on stderr (unless
 * soaprt_emu_options.quiet).
 *
 * Environment: SOAPRT_EMU_GPUS (devices per node, default 8; 0: no GPU,
 * cudaGetDeviceCount fails with cudaErrorNoDevice), SOAPRT_EMU_DEVICE_MEMORY
 * (bytes per device, default 141 GiB).
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_EMULATION_CUDA_EMULATION_H
#define SOAP_RUNTIME_EMULATION_CUDA_EMULATION_H

#include <cuda_runtime_api.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- For tests: what the emulation saw ----------------------------------- */
typedef struct soaprt_emu_stats {
  long copyCalls;        /* cudaMemcpyAsync and cudaMemcpy2DAsync calls */
  long memsetCalls;      /* cudaMemsetAsync calls */
  long liveAllocations;  /* cudaMalloc* not yet freed */
  long libraryLoads;     /* cudaLibraryLoadData (successful) */
  long kernelLookups;    /* cudaLibraryGetKernel (successful) */
  long launches;         /* cudaLaunchKernel (successful; never executed) */
  const void *lastImage; /* of the last library load */
  unsigned lastJitOptions;
  dim3 lastGrid, lastBlock;
  void **lastArgs;
  size_t lastSmem;
  int lastMaxDynamicSmem; /* cudaFuncAttributeMaxDynamicSharedMemorySize */
  long gemms;             /* cublasGemmStridedBatchedEx (successful) */
  int lastGemmCompute;    /* its cublasComputeType_t */
  long convFinds;         /* cudnnFindConvolutionForwardAlgorithmEx */
  long convForwards;      /* cudnnConvolutionForward (successful) */
  long convFilterGrads;   /* cudnnConvolutionBackwardFilter (successful) */
  long convDataGrads;     /* cudnnConvolutionBackwardData (successful) */
  long ncclAllReduces, ncclReduceScatters, ncclAllGathers, ncclSends, ncclRecvs;
} soaprt_emu_stats_t;
extern soaprt_emu_stats_t soaprt_emu_stats;

/* --- For tests: switches ------------------------------------------------- */
typedef struct soaprt_emu_options {
  int quiet; /* no "soaprt-emu:" diagnostics on stderr */
  /* cuDNN offers no algorithm for tensors that are not packed NCHW (as
     cuDNN does for some strided layouts): exercises the packed fallback. */
  int dnnPackedOnly;
  /* cudnnFindConvolutionForwardAlgorithmEx lists a failed result and a
     tensor-op (TF32) result first, as real cuDNN may. */
  int dnnAdversarialFind;
} soaprt_emu_options_t;
extern soaprt_emu_options_t soaprt_emu_options;

/* The last diagnostic (also when quiet), "" if none. */
const char *soaprt_emu_last_diagnostic(void);

/* --- Shared by the emulation's files ------------------------------------- */
/* Prints "soaprt-emu: <call>: <message>" unless quiet and keeps it. */
void soaprt_emu_diag(const char *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Devices (SOAPRT_EMU_GPUS) and the current one (cudaSetDevice). */
int soaprt_emu_device_count(void);
int soaprt_emu_current_device(void);
/* cudaErrorNoDevice without devices, else cudaSuccess. */
cudaError_t soaprt_emu_need_device(void);
/* Every CUDA runtime call returns through this: keeps a failure for
 * cudaGetLastError. */
cudaError_t soaprt_emu_result(cudaError_t e);

/* A stream the program may use: created and not destroyed, or one of the
 * default streams (0, cudaStreamLegacy, cudaStreamPerThread). */
int soaprt_emu_stream_valid(cudaStream_t stream);
/* cudaSuccess, or why `stream` cannot be used by `call` (no device:
 * cudaErrorNoDevice; unknown stream: cudaErrorInvalidResourceHandle, with
 * a diagnostic). */
cudaError_t soaprt_emu_check_stream(const char *call, cudaStream_t stream);
/* Stream-ordered pool bookkeeping at a synchronization point. */
void soaprt_emu_pool_sync(void);

/* A set of live objects (handles, descriptors), to reject stale or made-up
 * ones without dereferencing them. */
typedef struct soaprt_emu_registry {
  const void **items;
  size_t count, capacity;
} soaprt_emu_registry_t;
int soaprt_emu_registry_add(soaprt_emu_registry_t *r, const void *item);
int soaprt_emu_registry_remove(soaprt_emu_registry_t *r, const void *item);
int soaprt_emu_registry_contains(const soaprt_emu_registry_t *r,
                                 const void *item);

/* Memory kinds of the emulation. */
enum { SOAPRT_EMU_HOST = 0, SOAPRT_EMU_DEVICE = 1, SOAPRT_EMU_MANAGED = 2 };
/* The kind of the memory at `p`. */
int soaprt_emu_memory_kind(const void *p);
/* 1 if bytes [p + lo, p + hi) lie inside one device or managed allocation
 * (hi <= lo: nothing is accessed, always 1); else prints a diagnostic that
 * names `call` and `what` and returns 0. */
int soaprt_emu_check_device(const char *call, const char *what, const void *p,
                            int64_t lo, int64_t hi);

/* The float formats the emulated cuBLAS and cuDNN compute on
 * (float_formats_host.c): element i of p as a double, and v stored as
 * element i of p, rounded to the format (to nearest even; NaN stays NaN,
 * overflow is infinity). */
typedef enum {
  SOAPRT_EMU_F32 = 0,
  SOAPRT_EMU_F16 = 1,
  SOAPRT_EMU_BF16 = 2
} soaprt_emu_float_t;
int soaprt_emu_float_bytes(soaprt_emu_float_t t);
double soaprt_emu_load(soaprt_emu_float_t t, const void *p, long long i);
void soaprt_emu_store(soaprt_emu_float_t t, void *p, long long i, double v);

#ifdef __cplusplus
}
#endif

#endif /* SOAP_RUNTIME_EMULATION_CUDA_EMULATION_H */
