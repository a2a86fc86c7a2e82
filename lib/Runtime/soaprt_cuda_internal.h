/*===- soaprt_cuda_internal.h - Shared by the CUDA back end's files -------===*
 *
 * soaprt_cuda.c       device selection, stream, errors, memory, inputs,
 *                     constants, init/finalize
 * soaprt_cuda_copy.c  strided copies on the stream (pack/unpack, memrefCopy,
 *                     device -> host)
 * soaprt_cuda_comm.c  NCCL: transfer and all_reduce
 * soaprt_cuda_mgpu.c  MLIR's GPU host ABI (modules, kernels, mgpu*)
 * soaprt_cuda_blas.c  cuBLAS matmul
 * soaprt_cuda_dnn.c   cuDNN conv2d
 *
 * Everything runs on the one thread that calls soap_main.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_CUDA_INTERNAL_H
#define SOAP_RUNTIME_SOAPRT_CUDA_INTERNAL_H

#include "soap/Runtime/soaprt_cuda.h"
#include "soaprt_internal.h"

#include <cuda_runtime_api.h>

/* --- State (soaprt_cuda.c) ----------------------------------------------- */
typedef struct soaprt_cuda_state {
  int initialized; /* soaprt_cuda_init done */
  int finalized;   /* soaprt_cuda_finalize done: no CUDA calls any more */
  int rank, size;
  int device;
  cudaStream_t stream;  /* the computation, in program order */
  cudaStream_t current; /* where work goes now: stream, or the
                           communication stream inside soaprt_cuda_comm_* */
  cudaMemPool_t pool;
  int syncEachCall;         /* SOAPRT_CUDA_SYNC=1 */
  size_t maxPitch;          /* cudaDevAttrMaxPitch (bytes) */
  int64_t outsidePoolBytes; /* device memory allocated outside the pool */
} soaprt_cuda_state_t;
extern soaprt_cuda_state_t soaprt_cuda;

/* The stream work goes to now (the rank's stream, or its communication
 * stream while communication is issued); fatal before soaprt_init (or after
 * finalize). */
cudaStream_t soaprt_cuda_stream(const char *op);

/* --- Errors -------------------------------------------------------------- */
/* `call` is the call's source text (its name is printed), `op` the op or
 * runtime function it served. Fatal (all ranks) unless e == cudaSuccess. */
void soaprt_cuda_check(cudaError_t e, const char *call, const char *op);
#define SOAPRT_CUDA_CHECK(call, op) soaprt_cuda_check((call), #call, (op))
/* Prints "<call> failed in <op>: <detail>" and aborts every rank. */
void soaprt_cuda_fail(const char *call, const char *op, const char *detail)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
/* Waits for the current stream and checks for asynchronous errors; the message
 * suggests SOAPRT_CUDA_SYNC=1 to find the op that faulted. */
void soaprt_cuda_sync(const char *op);
/* After a kernel or library call: with SOAPRT_CUDA_SYNC=1, waits for it and
 * checks its asynchronous errors (named after `op`). */
void soaprt_cuda_after_call(const char *op);

/* --- Memory -------------------------------------------------------------- */
/* Stream-ordered allocation from the rank's pool (never NULL; fatal on
 * failure). `bytes` may be 0. */
void *soaprt_cuda_alloc(size_t bytes, const char *op);
/* Like soaprt_cuda_alloc but returns NULL when the pool is out of memory. */
void *soaprt_cuda_try_alloc(size_t bytes, const char *op);
void soaprt_cuda_free(void *ptr, const char *op);
/* 1 if `ptr` is device (or managed) memory, 0 for host memory. */
int soaprt_cuda_is_device_pointer(const void *ptr);

/* --- Copies (soaprt_cuda_copy.c) ----------------------------------------- */
/* dst := src for two strided views of the same sizes (strides in elements,
 * any memory on either side: cudaMemcpyDefault), on the stream. */
void soaprt_cuda_copy(char *dst, const int64_t *dstStrides, const char *src,
                      const int64_t *srcStrides, const int64_t *sizes,
                      int64_t rank, int64_t elemSize, const char *op);
void soaprt_cuda_copy_region(const soaprt_region_t *dst,
                             const soaprt_region_t *src, const char *op);
/* A contiguous device buffer with the region's elements: the region itself
 * when it is contiguous, else a temporary (filled from the region when
 * `fill`). Give it back with soaprt_cuda_unpack. */
char *soaprt_cuda_pack(const soaprt_region_t *r, int fill, const char *op);
/* Releases a buffer from soaprt_cuda_pack; copies it back into the region
 * first when `store` (and it is a temporary). */
void soaprt_cuda_unpack(const soaprt_region_t *r, char *packed, int store,
                        const char *op);
/* Contiguous host copy of a region in host or device memory (waits). */
void soaprt_cuda_download(const soaprt_region_t *r, void *host, const char *op);

/* --- Hooks of soaprt.c --------------------------------------------------- */
void soaprt_cuda_init(int rank, int size);
void soaprt_cuda_finalize(void);
void soaprt_cuda_bind_input(soaprt_binding_t *b, const soaprt_region_t *view);
/* Input `index`'s device copy := `part` (its shape; device or host). */
void soaprt_cuda_update_input(int64_t index, const soaprt_region_t *part);
/* Input `b`'s host buffer := its device copy, if that is newer. */
void soaprt_cuda_fetch_input(soaprt_binding_t *b);
void soaprt_cuda_transfer(const soaprt_region_t *r, int64_t from, int64_t to);
void soaprt_cuda_prepare_group(const int64_t *devices, int64_t n);
void soaprt_cuda_reduce_scatter(const soaprt_region_t *r, int64_t dtype,
                                int64_t kind, int64_t dim,
                                const int64_t *devices, int64_t n);
void soaprt_cuda_all_gather(const soaprt_region_t *r, int64_t dim,
                            const int64_t *devices, int64_t n);
void soaprt_cuda_all_reduce(const soaprt_region_t *r, int64_t dtype,
                            int64_t kind, const int64_t *devices, int64_t n);
/* Asynchronous communication (soaprt_comm.c). Between _begin and _end the
 * current stream is the rank's communication stream, which first waits for
 * all work issued so far; _end records that tickets first..last (first > 0;
 * none when first is 0) are complete once what was issued in between is,
 * and makes the rank's stream current again. _wait(t): later work on the
 * rank's stream waits for ticket t (and every earlier one). Transfers
 * between _group_begin and _group_end (inside a _begin/_end) form one NCCL
 * group; their copies back into strided regions follow it. */
void soaprt_cuda_comm_begin(void);
void soaprt_cuda_comm_end(int64_t first, int64_t last);
void soaprt_cuda_comm_wait(int64_t ticket);
void soaprt_cuda_group_begin(void);
void soaprt_cuda_group_end(void);

/* --- Per-file set-up and release (called by soaprt_cuda.c) --------------- */
void soaprt_cuda_comm_init(void); /* the world NCCL communicator */
void soaprt_cuda_comm_finalize(void);
void soaprt_cuda_mgpu_finalize(void);
void soaprt_cuda_blas_finalize(void);
void soaprt_cuda_dnn_finalize(void);
/* The workspace each library holds now (bytes; 0 before its first call). */
int64_t soaprt_cuda_blas_workspace_bytes(void);
int64_t soaprt_cuda_dnn_workspace_bytes(void);

#endif /* SOAP_RUNTIME_SOAPRT_CUDA_INTERNAL_H */
