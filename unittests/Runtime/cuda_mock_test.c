/*===- cuda_mock_test.c - libsoaprt_cuda's layout logic, without a GPU -----===*
 *
 * Links soaprt_cuda_copy.c, soaprt_cuda_blas.c, soaprt_cuda_dnn.c and
 * soaprt_cuda_mgpu.c (and soaprt.c's CPU build for the view helpers)
 * against host implementations of the CUDA runtime, cuBLAS and cuDNN calls
 * they make. The mocks follow
 * the libraries' documented semantics and argument rules (column-major GEMM
 * with lda/ldb/ldc bounds, cudaMemcpy2D pitch rules, NCHW tensors with
 * strides), so this checks the strided copies (dim merging, 2-D copies,
 * fallbacks), the GEMM formulation (transposes, leading dimensions, packed
 * operands, broadcast batches) and the convolution plans (strides, packed
 * W, the packed X/Y fallback) on random views against host references,
 * the mgpu layer (modules recorded before main and loaded once on first
 * use, functions cached, launches, memset patterns), and that every
 * temporary is freed.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <cublas_v2.h>
#include <cudnn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ soaprt_cuda.c stand-ins */

soaprt_cuda_state_t soaprt_cuda;
static int gLive = 0;      /* allocations not yet freed */
static int gCopyCalls = 0; /* cudaMemcpy*Async calls */
static cudaStream_t gStream = (cudaStream_t)0x5150;

cudaStream_t soaprt_cuda_stream(const char *op) {
  (void)op;
  return gStream;
}
void soaprt_cuda_fail(const char *call, const char *op, const char *detail) {
  soaprt_fatal("%s failed in %s: %s", call, op, detail);
}
void soaprt_cuda_check(cudaError_t e, const char *call, const char *op) {
  if (e != cudaSuccess)
    soaprt_fatal("%s failed in %s: error %d", call, op, (int)e);
}
void soaprt_cuda_sync(const char *op) { (void)op; }
int soaprt_cuda_is_device_pointer(const void *ptr) {
  (void)ptr;
  return 1; /* the mocks' "device" memory is host memory */
}
void soaprt_cuda_after_call(const char *op) { (void)op; }
void *soaprt_cuda_try_alloc(size_t bytes, const char *op) {
  (void)op;
  ++gLive;
  return aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
}
void *soaprt_cuda_alloc(size_t bytes, const char *op) {
  return soaprt_cuda_try_alloc(bytes, op);
}
void soaprt_cuda_free(void *ptr, const char *op) {
  (void)op;
  if (ptr) {
    --gLive;
    free(ptr);
  }
}

/* ------------------------------------------------------ CUDA runtime mock */

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  (void)kind;
  ++gCopyCalls;
  if (stream != gStream)
    return cudaErrorInvalidResourceHandle;
  memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream) {
  (void)kind;
  ++gCopyCalls;
  if (stream != gStream)
    return cudaErrorInvalidResourceHandle;
  if (dpitch < width || spitch < width || dpitch > soaprt_cuda.maxPitch ||
      spitch > soaprt_cuda.maxPitch)
    return cudaErrorInvalidPitchValue;
  for (size_t row = 0; row < height; ++row)
    memmove((char *)dst + row * dpitch, (const char *)src + row * spitch,
            width);
  return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  *ptr = soaprt_cuda_alloc(bytes, "cudaMalloc");
  return cudaSuccess;
}
cudaError_t cudaFree(void *ptr) {
  soaprt_cuda_free(ptr, "cudaFree");
  return cudaSuccess;
}

/* mgpu layer: libraries, kernels, launches, events, memsets. */
static int gLibraryLoads = 0, gKernelLookups = 0, gLaunches = 0;
static const void *gLastImage;
static unsigned gLastJitOptions;
static dim3 gLastGrid, gLastBlock;
static void **gLastArgs;
static size_t gLastSmem;
static int gSmemAttribute = 0;

const char *cudaGetErrorString(cudaError_t e) {
  (void)e;
  return "mock CUDA error";
}
const char *cudaGetErrorName(cudaError_t e) {
  (void)e;
  return "cudaErrorMock";
}
cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *jitOptions,
                                void **jitOptionsValues,
                                unsigned int numJitOptions,
                                enum cudaLibraryOption *libraryOptions,
                                void **libraryOptionValues,
                                unsigned int numLibraryOptions) {
  (void)libraryOptions, (void)libraryOptionValues;
  if (numLibraryOptions)
    return cudaErrorInvalidValue;
  for (unsigned i = 0; i < numJitOptions; ++i)
    if (jitOptions[i] == cudaJitOptimizationLevel &&
        (uintptr_t)jitOptionsValues[i] > 4)
      return cudaErrorInvalidValue;
  ++gLibraryLoads;
  gLastImage = code;
  gLastJitOptions = numJitOptions;
  *library = (cudaLibrary_t)(uintptr_t)(0x1000 + gLibraryLoads);
  return cudaSuccess;
}
cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  (void)library;
  return cudaSuccess;
}
cudaError_t cudaLibraryGetKernel(cudaKernel_t *kernel, cudaLibrary_t library,
                                 const char *name) {
  ++gKernelLookups;
  *kernel = (cudaKernel_t)((uintptr_t)library * 64 + strlen(name));
  return cudaSuccess;
}
cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                            enum cudaFuncAttribute attr,
                                            int value, int device) {
  (void)kernel, (void)device;
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
    gSmemAttribute = value;
  return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block,
                             void **args, size_t smem, cudaStream_t stream) {
  if (!func || stream != gStream)
    return cudaErrorInvalidValue;
  if (smem > 48 * 1024 && (int)smem > gSmemAttribute)
    return cudaErrorInvalidValue;
  ++gLaunches;
  gLastGrid = grid;
  gLastBlock = block;
  gLastArgs = args;
  gLastSmem = smem;
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
  (void)e, (void)f;
  return s == gStream ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  *e = (cudaEvent_t)malloc(1);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  free(e);
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  (void)e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  (void)e;
  return s == gStream ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaMallocManaged(void **ptr, size_t bytes, unsigned flags) {
  (void)flags;
  *ptr = malloc(bytes);
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a,
                                     const void *p) {
  (void)p;
  memset(a, 0, sizeof(*a));
  a->type = cudaMemoryTypeDevice;
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) {
  if (s != gStream)
    return cudaErrorInvalidValue;
  memset(p, value, bytes);
  return cudaSuccess;
}

/* ------------------------------------------------------------ cuBLAS mock */

struct cublasContext {
  cudaStream_t stream;
  int math;
  void *workspace;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *h) {
  *h = (cublasHandle_t)calloc(1, sizeof(struct cublasContext));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  free(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  h->math = (int)mode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *w, size_t bytes) {
  (void)bytes;
  h->workspace = w;
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_INVALID_VALUE ? "invalid value" : "error";
}

static cublasComputeType_t gLastCompute;

/* C[p] = alpha op(A[p]) op(B[p]) + beta C[p], column-major. */
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const void *alpha, const void *A, cudaDataType at, int lda,
    long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
    const void *beta, void *C, cudaDataType ct, int ldc, long long sc,
    int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  (void)algo;
  if (h->stream != gStream || h->math != CUBLAS_DEFAULT_MATH || !h->workspace)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m < 0 || n < 0 || k < 0 || batch < 0 ||
      lda < (ta == CUBLAS_OP_N ? (m > 1 ? m : 1) : (k > 1 ? k : 1)) ||
      ldb < (tb == CUBLAS_OP_N ? (k > 1 ? k : 1) : (n > 1 ? n : 1)) ||
      ldc < (m > 1 ? m : 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  gLastCompute = compute;
  float al = *(const float *)alpha, be = *(const float *)beta;
  for (int p = 0; p < batch; ++p) {
    const float *a = (const float *)A + p * sa;
    const float *b = (const float *)B + p * sb;
    float *c = (float *)C + p * sc;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int l = 0; l < k; ++l) {
          double x =
              ta == CUBLAS_OP_N ? a[i + (long)l * lda] : a[l + (long)i * lda];
          double y =
              tb == CUBLAS_OP_N ? b[l + (long)j * ldb] : b[j + (long)l * ldb];
          sum += x * y;
        }
        c[i + (long)j * ldc] = (float)(al * sum + be * c[i + (long)j * ldc]);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

/* ------------------------------------------------------------- cuDNN mock */

struct cudnnContext {
  cudaStream_t stream;
};
struct cudnnTensorStruct {
  int n, c, h, w, ns, cs, hs, ws;
};
struct cudnnFilterStruct {
  int k, c, h, w;
};
struct cudnnConvolutionStruct {
  int sh, sw, dh, dw, ph, pw;
  cudnnMathType_t math;
};
static int gDnnOnlyPacked = 0; /* mock: refuse strided tensors */
static int gFinds = 0;

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) {
  *h = (cudnnHandle_t)calloc(1, sizeof(struct cudnnContext));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  free(h);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
  h->stream = s;
  return CUDNN_STATUS_SUCCESS;
}
const char *cudnnGetErrorString(cudnnStatus_t s) {
  return s == CUDNN_STATUS_SUCCESS ? "ok" : "mock cuDNN error";
}
void cudnnGetLastErrorString(char *message, size_t max) {
  if (max)
    message[0] = 0;
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) {
  *d = (cudnnTensorDescriptor_t)calloc(1, sizeof(struct cudnnTensorStruct));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  free(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d,
                                           cudnnDataType_t t, int n, int c,
                                           int h, int w, int ns, int cs, int hs,
                                           int ws) {
  if (t != CUDNN_DATA_FLOAT || n < 1 || c < 1 || h < 1 || w < 1 || ns < 1 ||
      cs < 1 || hs < 1 || ws < 1)
    return CUDNN_STATUS_BAD_PARAM;
  struct cudnnTensorStruct v = {n, c, h, w, ns, cs, hs, ws};
  *d = v;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) {
  *d = (cudnnFilterDescriptor_t)calloc(1, sizeof(struct cudnnFilterStruct));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  free(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d,
                                         cudnnDataType_t t,
                                         cudnnTensorFormat_t f, int k, int c,
                                         int h, int w) {
  if (t != CUDNN_DATA_FLOAT || f != CUDNN_TENSOR_NCHW || k < 1 || c < 1 ||
      h < 1 || w < 1)
    return CUDNN_STATUS_BAD_PARAM;
  struct cudnnFilterStruct v = {k, c, h, w};
  *d = v;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  *d = (cudnnConvolutionDescriptor_t)calloc(
      1, sizeof(struct cudnnConvolutionStruct));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  free(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d,
                                              int ph, int pw, int u, int v,
                                              int dh, int dw,
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t t) {
  if (ph < 0 || pw < 0 || mode != CUDNN_CROSS_CORRELATION ||
      t != CUDNN_DATA_FLOAT || u < 1 || v < 1 || dh < 1 || dw < 1)
    return CUDNN_STATUS_BAD_PARAM;
  d->sh = u;
  d->ph = ph;
  d->pw = pw;
  d->sw = v;
  d->dh = dh;
  d->dw = dw;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t m) {
  d->math = m;
  return CUDNN_STATUS_SUCCESS;
}
static int packedTensor(const struct cudnnTensorStruct *t) {
  return t->ws == 1 && t->hs == t->w && t->cs == t->h * t->w &&
         t->ns == t->c * t->h * t->w;
}
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(
    const cudnnConvolutionDescriptor_t d, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, int *n, int *c, int *h, int *ww) {
  *n = x->n;
  *c = w->k;
  *h = (x->h + 2 * d->ph - d->dh * (w->h - 1) - 1) / d->sh + 1;
  *ww = (x->w + 2 * d->pw - d->dw * (w->w - 1) - 1) / d->sw + 1;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t d,
    const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
    size_t *bytes) {
  (void)h, (void)w, (void)d;
  if (gDnnOnlyPacked && (!packedTensor(x) || !packedTensor(y)))
    return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = (size_t)algo * 1024;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const void *xp,
    const cudnnFilterDescriptor_t w, const void *wp,
    const cudnnConvolutionDescriptor_t d, const cudnnTensorDescriptor_t y,
    void *yp, const int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t wsBytes) {
  (void)xp, (void)wp, (void)yp, (void)w, (void)ws;
  ++gFinds;
  if (h->stream != gStream || requested < 2)
    return CUDNN_STATUS_BAD_PARAM;
  int unsupported = gDnnOnlyPacked && (!packedTensor(x) || !packedTensor(y));
  /* Fastest first: algo 7 failed (it must be skipped); algo 1 works
     unless strided tensors are refused. */
  (void)wsBytes;
  perf[0].algo = (cudnnConvolutionFwdAlgo_t)7;
  perf[0].status = CUDNN_STATUS_NOT_SUPPORTED;
  perf[0].memory = 7 * 1024;
  perf[0].mathType = CUDNN_TENSOR_OP_MATH;
  perf[1].algo = (cudnnConvolutionFwdAlgo_t)1;
  perf[1].status =
      unsupported ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_SUCCESS;
  perf[1].memory = 1024;
  perf[1].mathType = d->math;
  *returned = 2;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t x,
    const void *xp, const cudnnFilterDescriptor_t w, const void *wp,
    const cudnnConvolutionDescriptor_t d, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsBytes, const void *beta, const cudnnTensorDescriptor_t y,
    void *yp) {
  if (h->stream != gStream || algo != 1 || wsBytes < 1024 || !ws)
    return CUDNN_STATUS_BAD_PARAM;
  if (gDnnOnlyPacked && (!packedTensor(x) || !packedTensor(y)))
    return CUDNN_STATUS_NOT_SUPPORTED;
  int on, oc, oh, ow;
  cudnnGetConvolution2dForwardOutputDim(d, x, w, &on, &oc, &oh, &ow);
  if (x->c != w->c || y->n != on || y->c != oc || y->h != oh || y->w != ow)
    return CUDNN_STATUS_BAD_PARAM;
  float al = *(const float *)alpha, be = *(const float *)beta;
  const float *X = (const float *)xp, *W = (const float *)wp;
  float *Y = (float *)yp;
  for (int n = 0; n < on; ++n)
    for (int f = 0; f < oc; ++f)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double sum = 0;
          for (int c = 0; c < w->c; ++c)
            for (int kh = 0; kh < w->h; ++kh)
              for (int kw = 0; kw < w->w; ++kw) {
                int r = i * d->sh + kh * d->dh - d->ph;
                int q = j * d->sw + kw * d->dw - d->pw;
                if (r < 0 || r >= x->h || q < 0 || q >= x->w)
                  continue; /* zero padding */
                sum += (double)X[(long)n * x->ns + (long)c * x->cs +
                                 (long)r * x->hs + (long)q * x->ws] *
                       W[((f * w->c + c) * w->h + kh) * w->w + kw];
              }
          float *out = &Y[(long)n * y->ns + (long)f * y->cs + (long)i * y->hs +
                          (long)j * y->ws];
          *out = (float)(al * sum + be * *out);
        }
  return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ test helpers */

static uint64_t gSeed = 12345;
static int rnd(int n) { /* [0, n) */
  gSeed = gSeed * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((gSeed >> 33) % (uint64_t)n);
}
static float rndf(void) { return (float)rnd(2001) / 1000.0f - 1.0f; }

static int gFailures = 0, gTests = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                     \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++gFailures;                                                             \
    }                                                                          \
  } while (0)

typedef struct view {
  int64_t words[3 + 2 * 8];
  soaprt_unranked_memref_t ref;
} view_t;

static soaprt_unranked_memref_t *mk(view_t *v, void *base, int64_t offset,
                                    int rank, const int64_t *sizes,
                                    const int64_t *strides) {
  memset(v, 0, sizeof(*v));
  v->words[0] = v->words[1] = (int64_t)(intptr_t)base;
  v->words[2] = offset;
  for (int i = 0; i < rank; ++i) {
    v->words[3 + i] = sizes[i];
    v->words[3 + rank + i] = strides[i];
  }
  v->ref.rank = rank;
  v->ref.descriptor = v->words;
  return &v->ref;
}

/* A random layout for `sizes`: a permutation of the dims, padding, and
 * maybe a step along one dim. Returns the elements the buffer needs. */
static int64_t randomLayout(const int64_t *sizes, int rank, int64_t *strides) {
  int order[8];
  for (int i = 0; i < rank; ++i)
    order[i] = i;
  if (rnd(2))
    for (int i = rank - 1; i > 0; --i) {
      int j = rnd(i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
  int64_t stride = 1 + (rnd(4) == 0); /* maybe a step on the innermost */
  for (int i = rank - 1; i >= 0; --i) {
    int d = order[i];
    strides[d] = stride;
    stride *= sizes[d] + (rnd(3) == 0 ? rnd(3) : 0); /* padding */
  }
  int64_t extent = 1;
  for (int d = 0; d < rank; ++d)
    extent += (sizes[d] > 0 ? sizes[d] - 1 : 0) * strides[d];
  return extent + 8;
}

static float at(const float *base, const int64_t *strides, const int64_t *idx,
                int rank) {
  int64_t off = 0;
  for (int d = 0; d < rank; ++d)
    off += idx[d] * strides[d];
  return base[off];
}

static int next(int64_t *idx, const int64_t *sizes, int rank) {
  for (int d = rank - 1; d >= 0; --d) {
    if (++idx[d] < sizes[d])
      return 1;
    idx[d] = 0;
  }
  return 0;
}

/* ------------------------------------------------------------------ tests */

static void testCopies(void) {
  for (int t = 0; t < 3000; ++t) {
    int rank = 1 + rnd(5);
    int64_t sizes[8], ss[8], ds[8];
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
      sizes[d] = rnd(8) == 0 ? 1 : 1 + rnd(5);
      n *= sizes[d];
    }
    int64_t se = randomLayout(sizes, rank, ss),
            de = randomLayout(sizes, rank, ds);
    float *src = (float *)malloc((size_t)se * 4),
          *dst = (float *)malloc((size_t)de * 4);
    for (int64_t i = 0; i < se; ++i)
      src[i] = (float)i;
    for (int64_t i = 0; i < de; ++i)
      dst[i] = -1.0f;
    soaprt_cuda.maxPitch = rnd(4) == 0 ? 16 : 1u << 30; /* force fallbacks */
    int64_t so = rnd(3), doff = rnd(3);
    soaprt_cuda_copy((char *)(dst + doff), ds, (const char *)(src + so), ss,
                     sizes, rank, 4, "test copy");
    int64_t idx[8] = {0};
    int ok = 1;
    do
      ok &= at(dst + doff, ds, idx, rank) == at(src + so, ss, idx, rank);
    while (next(idx, sizes, rank));
    /* Nothing outside the destination view was written. */
    int64_t inside = 0;
    for (int64_t i = 0; i < de; ++i)
      inside += dst[i] != -1.0f;
    CHECK(ok && inside == n, "strided copy %d (rank %d)", t, rank);
    ++gTests;
    free(src);
    free(dst);
  }
  /* Contiguous views and a subview of rows: one copy call each. */
  soaprt_cuda.maxPitch = 1u << 30;
  float a[4 * 6 * 8], b[4 * 6 * 8];
  int64_t sizes[3] = {4, 6, 8}, packed[3] = {48, 8, 1};
  gCopyCalls = 0;
  soaprt_cuda_copy((char *)b, packed, (const char *)a, packed, sizes, 3, 4,
                   "c");
  CHECK(gCopyCalls == 1, "contiguous copy took %d calls", gCopyCalls);
  int64_t half[3] = {4, 6, 4};
  gCopyCalls = 0;
  soaprt_cuda_copy((char *)b, packed, (const char *)a, packed, half, 3, 4, "c");
  CHECK(gCopyCalls == 1, "row subview copy took %d calls", gCopyCalls);
  gTests += 2;
}

/* A random rank-3 operand view of batch x rows x cols, filled randomly. */
typedef struct operand {
  float *buffer;
  int64_t sizes[3], strides[3], offset;
} operand_t;

static void makeOperand(operand_t *o, int64_t batch, int64_t rows, int64_t cols,
                        int allowBroadcast) {
  o->sizes[0] = batch;
  o->sizes[1] = rows;
  o->sizes[2] = cols;
  int64_t extent = randomLayout(o->sizes, 3, o->strides);
  if (allowBroadcast && batch > 1 && rnd(5) == 0)
    o->strides[0] = 0; /* one matrix for every batch */
  if (rnd(3) == 0) {   /* both inner strides > 1: must be packed */
    o->strides[1] *= 2;
    o->strides[2] *= 2;
    o->strides[0] *= 2;
    extent = extent * 2 + 8;
  }
  o->offset = rnd(3);
  o->buffer = (float *)malloc((size_t)(extent + o->offset) * 4);
  for (int64_t i = 0; i < extent + o->offset; ++i)
    o->buffer[i] = rndf();
}

static float opAt(const operand_t *o, int64_t b, int64_t i, int64_t j) {
  if (o->sizes[0] == 1)
    b = 0;
  return o->buffer[o->offset + b * o->strides[0] + i * o->strides[1] +
                   j * o->strides[2]];
}

static void testMatmuls(void) {
  for (int t = 0; t < 1500; ++t) {
    int64_t B = rnd(6) == 0 ? 1 : 1 + rnd(4), M = rnd(5), N = rnd(5),
            K = rnd(5);
    if (rnd(4))
      M += 1, N += 1, K += 1;
    operand_t A, Bm, C;
    makeOperand(&A, rnd(4) == 0 ? 1 : B, M, K, 1);
    makeOperand(&Bm, rnd(4) == 0 ? 1 : B, K, N, 1);
    makeOperand(&C, B, M, N, 0);
    /* Reference from the initial C (beta = 1). */
    double *want = (double *)malloc((size_t)(B * M * N + 1) * sizeof(double));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = opAt(&C, b, i, j);
          for (int64_t k = 0; k < K; ++k)
            s += (double)opAt(&A, b, i, k) * opAt(&Bm, b, k, j);
          want[(b * M + i) * N + j] = s;
        }
    view_t va, vb, vc;
    int64_t flags = rnd(2) ? SOAPRT_CUDA_ALLOW_TF32 : 0;
    gLastCompute = (cublasComputeType_t)-1;
    /* One matrix each: also as rank-2 views (no batch dim). */
    int r2 = B == 1 && A.sizes[0] == 1 && Bm.sizes[0] == 1 && rnd(2);
    _mlir_ciface_soaprt_cuda_matmul_f32(
        mk(&va, A.buffer, A.offset, 3 - r2, A.sizes + r2, A.strides + r2),
        mk(&vb, Bm.buffer, Bm.offset, 3 - r2, Bm.sizes + r2, Bm.strides + r2),
        mk(&vc, C.buffer, C.offset, 3 - r2, C.sizes + r2, C.strides + r2),
        flags, "test mm");
    int ok = 1;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          ok &= fabs(opAt(&C, b, i, j) - want[(b * M + i) * N + j]) < 1e-4;
    if (B * M * N * K > 0)
      ok &= gLastCompute ==
            (flags ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
    CHECK(ok,
          "matmul %d: B=%lld M=%lld N=%lld K=%lld A(%lld,%lld,%lld) "
          "B(%lld,%lld,%lld) C(%lld,%lld,%lld)",
          t, (long long)B, (long long)M, (long long)N, (long long)K,
          (long long)A.strides[0], (long long)A.strides[1],
          (long long)A.strides[2], (long long)Bm.strides[0],
          (long long)Bm.strides[1], (long long)Bm.strides[2],
          (long long)C.strides[0], (long long)C.strides[1],
          (long long)C.strides[2]);
    ++gTests;
    free(want);
    free(A.buffer);
    free(Bm.buffer);
    free(C.buffer);
  }
}

static void testConvolutions(void) {
  for (int t = 0; t < 400; ++t) {
    gDnnOnlyPacked = t % 3 == 2;
    int64_t N = 1 + rnd(3), C = 1 + rnd(3), F = 1 + rnd(3), KH = 1 + rnd(3),
            KW = 1 + rnd(3), sh = 1 + rnd(2), sw = 1 + rnd(2), dh = 1 + rnd(2),
            dw = 1 + rnd(2), ph = rnd(3), pw = rnd(3);
    int64_t H = dh * (KH - 1) + 1 + rnd(5), W = dw * (KW - 1) + 1 + rnd(5);
    int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1,
            OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
    int64_t xs[4] = {N, C, H, W}, ws[4] = {F, C, KH, KW},
            ys[4] = {N, F, OH, OW};
    int64_t xst[4], wst[4], yst[4];
    int64_t xe = randomLayout(xs, 4, xst), we = randomLayout(ws, 4, wst),
            ye = randomLayout(ys, 4, yst);
    /* 256-byte aligned: plans are keyed by alignment too. */
    float *x = (float *)aligned_alloc(256, (size_t)(xe + 64) / 64 * 256),
          *w = (float *)aligned_alloc(256, (size_t)(we + 64) / 64 * 256),
          *y = (float *)aligned_alloc(256, (size_t)(ye + 64) / 64 * 256);
    for (int64_t i = 0; i < xe; ++i)
      x[i] = rndf();
    for (int64_t i = 0; i < we; ++i)
      w[i] = rndf();
    for (int64_t i = 0; i < ye; ++i)
      y[i] = rndf();
    int64_t count = N * F * OH * OW;
    double *want = (double *)malloc((size_t)count * sizeof(double));
    int64_t idx[4] = {0};
    int64_t e = 0;
    do {
      double s = at(y, yst, idx, 4);
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            int64_t xi[4] = {idx[0], c, idx[2] * sh + kh * dh - ph,
                             idx[3] * sw + kw * dw - pw};
            int64_t wi[4] = {idx[1], c, kh, kw};
            if (xi[2] >= 0 && xi[2] < H && xi[3] >= 0 && xi[3] < W)
              s += (double)at(x, xst, xi, 4) * at(w, wst, wi, 4);
          }
      want[e++] = s;
    } while (next(idx, ys, 4));
    view_t vx, vw, vy;
    _mlir_ciface_soaprt_cuda_conv2d_f32(
        mk(&vx, x, 0, 4, xs, xst), mk(&vw, w, 0, 4, ws, wst),
        mk(&vy, y, 0, 4, ys, yst), sh, sw, dh, dw, ph, pw, rnd(2),
        "test conv");
    int ok = 1;
    e = 0;
    memset(idx, 0, sizeof(idx));
    do
      ok &= fabs(at(y, yst, idx, 4) - want[e++]) < 1e-4;
    while (next(idx, ys, 4));
    CHECK(ok,
          "conv %d: N=%lld C=%lld H=%lld W=%lld F=%lld K=%lldx%lld "
          "s=%lldx%lld d=%lldx%lld p=%lldx%lld%s",
          t, (long long)N, (long long)C, (long long)H, (long long)W,
          (long long)F, (long long)KH, (long long)KW, (long long)sh,
          (long long)sw, (long long)dh, (long long)dw, (long long)ph,
          (long long)pw, gDnnOnlyPacked ? " (packed only)" : "");
    ++gTests;
    free(want);
    free(x);
    free(w);
    free(y);
  }
}

static const char kImage[] = "// PTX";
static const unsigned char kCubin[16] = {0x7f, 'E', 'L', 'F'};
static void *gModuleA, *gModuleB;
__attribute__((constructor)) static void recordModules(void) {
  gModuleA = mgpuModuleLoadJIT((void *)(uintptr_t)kImage, 3);
  gModuleB = mgpuModuleLoad((void *)(uintptr_t)kCubin, sizeof(kCubin));
}

static void testMgpu(void) {
  ++gTests;
  CHECK(gLibraryLoads == 0, "modules loaded before first use");
  static const char nameA[] = "kernel_a", nameB[] = "kernel_b";
  void *fa = mgpuModuleGetFunction(gModuleA, nameA);
  CHECK(gLibraryLoads == 1 && gLastImage == kImage && gLastJitOptions == 3,
        "PTX module load (%d loads, %u options)", gLibraryLoads,
        gLastJitOptions);
  void *fb = mgpuModuleGetFunction(gModuleA, nameB);
  void *fc = mgpuModuleGetFunction(gModuleB, nameA);
  CHECK(gLibraryLoads == 2 && gLastImage == kCubin && gLastJitOptions == 0,
        "cubin module load");
  for (int i = 0; i < 1000; ++i) /* as the compiled code: before each launch */
    CHECK(mgpuModuleGetFunction(gModuleA, nameA) == fa &&
              mgpuModuleGetFunction(gModuleA, nameB) == fb &&
              mgpuModuleGetFunction(gModuleB, nameA) == fc,
          "function cache");
  CHECK(gKernelLookups == 3 && fa != fb && fa != fc, "%d kernel lookups",
        gKernelLookups);
  /* Many functions: the table grows and keeps them. */
  static char names[600][16];
  void *fs[600];
  for (int i = 0; i < 600; ++i) {
    snprintf(names[i], sizeof(names[i]), "k%d", i);
    fs[i] = mgpuModuleGetFunction(gModuleB, names[i]);
  }
  for (int i = 0; i < 600; ++i)
    CHECK(mgpuModuleGetFunction(gModuleB, names[i]) == fs[i], "grown cache");
  CHECK(mgpuModuleGetFunction(gModuleA, nameA) == fa, "cache after growth");

  void *stream = mgpuStreamCreate();
  CHECK(stream == (void *)gStream, "mgpuStreamCreate");
  float *p = NULL;
  int64_t n = 7;
  void *args[2] = {&p, &n};
  mgpuLaunchKernel(fa, 3, 2, 1, 128, 1, 1, 0, stream, args, NULL, 2);
  CHECK(gLaunches == 1 && gLastGrid.x == 3 && gLastGrid.y == 2 &&
            gLastGrid.z == 1 && gLastBlock.x == 128 && gLastArgs == args,
        "launch");
  mgpuLaunchKernel(fb, 0, 1, 1, 128, 1, 1, 0, stream, args, NULL, 2);
  CHECK(gLaunches == 1, "an empty grid launched");
  mgpuLaunchKernel(fb, 1, 1, 1, 32, 1, 1, 100000, NULL, args, NULL, 2);
  CHECK(gLaunches == 2 && gLastSmem == 100000 && gSmemAttribute == 100000,
        "large dynamic shared memory");
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);

  /* gpu.memset patterns: uniform bytes and doubling copies. */
  for (int count = 0; count < 70; ++count) {
    uint32_t buf32[72];
    uint16_t buf16[72];
    for (int i = 0; i < 72; ++i)
      buf32[i] = 0xdeadbeef, buf16[i] = 0xbeef;
    uint32_t v32 = count % 3 ? 0x3f800000u + (uint32_t)count : 0;
    uint16_t v16 = count % 3 ? (uint16_t)(0x1234 + count) : 0x5a5a;
    mgpuMemset32(buf32, v32, (size_t)count, stream);
    mgpuMemset16(buf16, v16, (size_t)count, stream);
    int ok = 1;
    for (int i = 0; i < 72; ++i) {
      ok &= buf32[i] == (i < count ? v32 : 0xdeadbeef);
      ok &= buf16[i] == (i < count ? v16 : 0xbeef);
    }
    CHECK(ok, "gpu.memset of %d elements", count);
  }
  void *managed = mgpuMemAlloc(64, stream, true);
  void *pooled = mgpuMemAlloc(64, stream, false);
  CHECK(managed && pooled, "mgpuMemAlloc");
  mgpuMemFree(pooled, stream);
  free(managed); /* the mock reports every pointer as device memory */
  soaprt_cuda_mgpu_finalize();
}

int main(void) {
  soaprt_cuda.initialized = 1;
  soaprt_cuda.stream = gStream;
  testMgpu();
  testCopies();
  testMatmuls();
  /* The same shapes twice: the second pass finds every plan cached. */
  gSeed = 777;
  testConvolutions();
  int before = gFinds;
  gSeed = 777;
  testConvolutions();
  CHECK(gFinds == before && before > 0,
        "cached plans were searched again (%d searches, first pass %d)",
        gFinds - before, before);
  soaprt_cuda_blas_finalize();
  soaprt_cuda_dnn_finalize();
  CHECK(gLive == 0, "%d device allocations leaked", gLive);
  if (gFailures) {
    fprintf(stderr, "cuda_mock_test: %d of %d checks failed\n", gFailures,
            gTests);
    return 1;
  }
  printf("cuda_mock_test: all %d checks passed\n", gTests);
  return 0;
}
