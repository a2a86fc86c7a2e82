/*===- cuda_emu_runtime_test.c - libsoaprt_cuda end to end on the emulation
 *-===*
 *
 * Links libsoaprt_cuda_emu.a: the real CUDA back end (soaprt_cuda*.c) on the
 * host emulation of CUDA, cuBLAS, cuDNN and NCCL (lib/Runtime/emulation).
 * Drives the runtime through its C ABI as compiled code does, on any number
 * of ranks (mpirun -np 1 and -np 3 in run-cuda-emu-tests.sh), and checks
 * every result against a host reference, including that elements outside
 * the views are untouched:
 *   inputs (host and device bindings), constants, memref alloc/free,
 *   cuBLAS matmuls (layouts, packed and broadcast operands, TF32, overwrite
 *   of NaN memory, rank 2; bf16 and f16, into themselves and into f32),
 *   cuDNN's three convolution calls on bf16 and f16, cuDNN
 *convolutions (padding, strides, dilations, strided X and Y, unpacked W, the
 *packed fallback), memrefCopy between host and device strided views,
 *soaprt_transfer between ranks, soaprt_all_reduce over the world and a
 *sub-group for every element type NCCL reduces, their asynchronous starts,
 *waits and groups (deferred or not: SOAPRT_COMM_DEFER), soaprt_bind_output,
 *soaprt_device_peak_bytes; then the emulation's own strictness (the errors a
 *real library returns) and NCCL over MPI directly. Ends with
 *"cuda_emu_runtime_test: all N checks passed on R rank(s)" and status 0, else
 *status 1.
 *
 *===----------------------------------------------------------------------===*/

#include "emulation/cuda_emulation.h"
#include "runtime_test_views.h"
#include "soaprt_cuda_internal.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <mpi.h>
#include <nccl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gRank = 0, gSize = 1, gChecks = 0, gFailures = 0;

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    ++gChecks;                                                                 \
    if (!(cond)) {                                                             \
      ++gFailures;                                                             \
      fprintf(stderr, "cuda_emu_runtime_test: [rank %d] line %d: ", gRank,     \
              __LINE__);                                                       \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

/* Deterministic values in [-1, 1). */
static float value(int64_t i, int salt) {
  uint64_t h = ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ull ^
               (uint64_t)salt * 0xC2B2AE3D27D4EB4Full;
  return (float)((h >> 40) % 2000) / 1000.0f - 1.0f;
}

static void upload(void *device, const void *host, size_t bytes) {
  SOAPRT_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                    soaprt_cuda_stream("test")),
                    "test upload");
}

static void download(void *host, const void *device, size_t bytes) {
  cudaStream_t s = soaprt_cuda_stream("test");
  SOAPRT_CUDA_CHECK(
      cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, s),
      "test download");
  SOAPRT_CUDA_CHECK(cudaStreamSynchronize(s), "test download");
}

/* ---------------------------------------------------------------- tensors */

/* A strided f32 view of `elems` elements, with a host mirror (`want`: the
 * expected contents after an op; `scale`: the tolerance scale of each
 * element, 0 = must be exact). */
typedef struct tensor {
  int rank;
  int64_t sizes[4], strides[4], offset, elems;
  float *want;
  double *scale;
  float *dev;
  view_t view;
} tensor_t;

static void makeTensor(tensor_t *t, int rank, const int64_t *sizes,
                       const int64_t *strides, int64_t offset, int64_t elems,
                       int salt) {
  memset(t, 0, sizeof(*t));
  t->rank = rank;
  memcpy(t->sizes, sizes, (size_t)rank * 8);
  memcpy(t->strides, strides, (size_t)rank * 8);
  t->offset = offset;
  t->elems = elems;
  t->want = (float *)malloc((size_t)elems * 4);
  t->scale = (double *)calloc((size_t)elems, sizeof(double));
  for (int64_t i = 0; i < elems; ++i)
    t->want[i] = value(i, salt);
  t->dev = (float *)_mlir_memref_to_llvm_alloc((size_t)elems * 4);
  upload(t->dev, t->want, (size_t)elems * 4);
}

static soaprt_unranked_memref_t *ref(tensor_t *t) {
  return mk(&t->view, t->dev, t->offset, t->rank, t->sizes, t->strides);
}

static int64_t at(const tensor_t *t, const int64_t *idx) {
  int64_t off = t->offset;
  for (int d = 0; d < t->rank; ++d)
    off += idx[d] * t->strides[d];
  return off;
}

/* Compares the device contents with the expectation. */
static void expectTensor(const tensor_t *t, double tolerance,
                         const char *what) {
  float *got = (float *)malloc((size_t)t->elems * 4);
  download(got, t->dev, (size_t)t->elems * 4);
  int64_t bad = -1;
  for (int64_t i = 0; i < t->elems && bad < 0; ++i) {
    double bound = tolerance * t->scale[i];
    if (t->scale[i] == 0 ? memcmp(&got[i], &t->want[i], 4) != 0
                         : !(fabs((double)got[i] - t->want[i]) <= bound))
      bad = i;
  }
  EXPECT(bad < 0, "%s: element %lld is %.8g, expected %.8g", what,
         (long long)bad, bad >= 0 ? (double)got[bad] : 0.0,
         bad >= 0 ? (double)t->want[bad] : 0.0);
  free(got);
}

static void freeTensor(tensor_t *t) {
  _mlir_memref_to_llvm_free(t->dev);
  free(t->want);
  free(t->scale);
}

/* --------------------------------------------------------------- matmul */

typedef struct mmCase {
  const char *name;
  int rank; /* 3, or 2 (no batch dim) */
  int64_t batch, m, n, k;
  int64_t aBatch, bBatch; /* 1: broadcast */
  int64_t aStrides[3], bStrides[3], cStrides[3];
  int64_t flags;
  int nanC; /* C starts as NaN (fresh memory) and is overwritten */
} mmCase_t;

static int64_t extentOf(int rank, const int64_t *sizes,
                        const int64_t *strides) {
  int64_t e = 1;
  for (int d = 0; d < rank; ++d)
    e += (sizes[d] - 1) * strides[d];
  return e;
}

static void runMatmul(const mmCase_t *c) {
  int64_t aSizes[3] = {c->aBatch, c->m, c->k},
          bSizes[3] = {c->bBatch, c->k, c->n},
          cSizes[3] = {c->batch, c->m, c->n};
  int r2 = c->rank == 2; /* views without the batch dim */
  tensor_t A, B, C;
  makeTensor(&A, c->rank, aSizes + r2, c->aStrides + r2, 3,
             3 + extentOf(3, aSizes, c->aStrides) + 5, 1);
  makeTensor(&B, c->rank, bSizes + r2, c->bStrides + r2, 0,
             extentOf(3, bSizes, c->bStrides) + 2, 2);
  makeTensor(&C, c->rank, cSizes + r2, c->cStrides + r2, 1,
             1 + extentOf(3, cSizes, c->cStrides), 3);
  if (c->nanC) { /* as fresh device memory: NaN must not leak in */
    _mlir_memref_to_llvm_free(C.dev);
    C.dev = (float *)_mlir_memref_to_llvm_alloc((size_t)C.elems * 4);
    memset(C.want, 0xff, (size_t)C.elems * 4);
  }
  for (int64_t b = 0; b < c->batch; ++b)
    for (int64_t i = 0; i < c->m; ++i)
      for (int64_t j = 0; j < c->n; ++j) {
        int64_t ci[3] = {b, i, j};
        int64_t o = at(&C, ci + r2);
        double sum = c->nanC ? 0.0 : C.want[o], abs = fabs(sum);
        for (int64_t l = 0; l < c->k; ++l) {
          int64_t ai[3] = {c->aBatch == 1 ? 0 : b, i, l};
          int64_t bi[3] = {c->bBatch == 1 ? 0 : b, l, j};
          double t = (double)A.want[at(&A, ai + r2)] * B.want[at(&B, bi + r2)];
          sum += t;
          abs += fabs(t);
        }
        C.want[o] = (float)sum;
        C.scale[o] = abs + 1e-30;
      }
  /* The first matmul allocates cuBLAS's workspace; nothing else stays. */
  long live = soaprt_emu_stats.liveAllocations + (soaprt_emu_stats.gemms == 0);
  _mlir_ciface_soaprt_cuda_matmul_f32(ref(&A), ref(&B), ref(&C), c->flags,
                                      c->name);
  EXPECT(soaprt_emu_stats.liveAllocations == live,
         "%s: %ld temporaries not freed", c->name,
         soaprt_emu_stats.liveAllocations - live);
  expectTensor(&C, 1e-5, c->name);
  expectTensor(&A, 0, c->name); /* inputs untouched */
  expectTensor(&B, 0, c->name);
  freeTensor(&A);
  freeTensor(&B);
  freeTensor(&C);
}

static void testMatmuls(void) {
  static const mmCase_t cases[] = {
      /* name, rank, batch, m, n, k, aBatch, bBatch, A, B, C strides */
      {"matmul row-major", 3, 3, 17, 13, 19, 3, 3, {19 * 17, 19, 1},
       {13 * 19, 13, 1}, {13 * 17, 13, 1}, 0, 0},
      {"matmul B col layout, C col layout", 3, 2, 5, 7, 4, 2, 2,
       {20, 4, 1}, {28, 1, 4}, {35, 1, 5}, 0, 0},
      {"matmul padded rows, A transposed", 3, 2, 6, 5, 3, 2, 2,
       {40, 1, 8}, {24, 8, 1}, {70, 11, 1}, 0, 0},
      {"matmul packed A (no unit stride)", 3, 2, 4, 5, 3, 2, 2,
       {40, 8, 2}, {15, 5, 1}, {20, 5, 1}, 0, 0},
      {"matmul broadcast B, TF32", 3, 4, 6, 5, 7, 4, 1, {42, 7, 1},
       {35, 5, 1}, {30, 5, 1}, SOAPRT_CUDA_ALLOW_TF32, 0},
      {"matmul batch stride 0 on A", 3, 3, 4, 6, 5, 3, 3, {0, 5, 1},
       {30, 6, 1}, {24, 6, 1}, 0, 0},
      {"matmul overwrite of NaN memory", 3, 2, 8, 9, 10, 2, 2, {80, 10, 1},
       {90, 9, 1}, {72, 9, 1}, SOAPRT_CUDA_OVERWRITE, 1},
      {"matmul C batches interleaved (packed C)", 3, 2, 3, 4, 2, 2, 2,
       {6, 2, 1}, {8, 4, 1}, {1, 8, 2}, 0, 0},
      {"matmul rank 2", 2, 1, 9, 11, 6, 1, 1, {0, 6, 1}, {0, 1, 6},
       {0, 11, 1}, 0, 0},
      {"matmul of 70000 batches (two cuBLAS calls)", 3, 70000, 1, 1, 2,
       70000, 70000, {2, 2, 1}, {2, 1, 1}, {1, 1, 1}, 0, 0},
      {"matmul single row, column, K = 1", 3, 2, 1, 4, 1, 2, 1,
       {3, 7, 5}, {4, 9, 1}, {8, 8, 2}, 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
    runMatmul(&cases[i]);
}

/* ------------------------------------------------- 16-bit matmuls */

/* Values k/64 (|k| <= 64): exact in bf16 and f16, their products and sums
 * here exact in fp32 and double. */
static double small(int64_t i, int salt) {
  return (double)((int)(value(i, salt) * 64.0f)) / 64.0;
}

/* The bits of x, exact in the type (bf16: the top half of the float; f16:
 * the normal number's exponent and 10 fraction bits). */
static uint16_t exactBits(double x, int bf16) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (bf16)
    return (uint16_t)(u >> 16);
  if (f == 0.0f)
    return (uint16_t)((u >> 16) & 0x8000);
  int e = (int)((u >> 23) & 0xff) - 127;
  return (uint16_t)(((u >> 16) & 0x8000) | ((e + 15) << 10) |
                    ((u >> 13) & 0x3ff));
}

static double fromBits(uint16_t h, int bf16) {
  if (bf16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* C[b] (+)= A[b] B[b] through soaprt_cuda_matmul_<suffix>: A and B of bf16
 * or f16, C of the same type or f32 (`wideC`), A transposed (col layout) or
 * with no unit stride (packed, 2-byte elements) by `aLayout` (0 row, 1
 * col, 2 packed). The sums are exact in double: an f32 C must match them
 * exactly, a 16-bit C within half a unit in the last place (rounded once,
 * not per partial sum). */
static void
runHalfMatmul(const char *name, int bf16, int wideC, int aLayout, int64_t flags,
              void (*fn)(soaprt_unranked_memref_t *, soaprt_unranked_memref_t *,
                         soaprt_unranked_memref_t *, int64_t, const char *)) {
  enum { BATCH = 2, M = 5, N = 7, K = 9 };
  int64_t aSizes[3] = {BATCH, M, K}, bSizes[3] = {BATCH, K, N},
          cSizes[3] = {BATCH, M, N};
  int64_t aStrides[3] = {M * K, K, 1}, bStrides[3] = {K * N, N, 1},
          cStrides[3] = {M * N, N, 1};
  if (aLayout == 1) {
    aStrides[1] = 1;
    aStrides[2] = M;
  } else if (aLayout == 2) {
    aStrides[0] = 2 * M * K;
    aStrides[1] = 2 * K;
    aStrides[2] = 2;
  }
  int64_t aElems = extentOf(3, aSizes, aStrides), bElems = BATCH * K * N,
          cElems = BATCH * M * N;
  int cBytes = wideC ? 4 : 2;
  uint16_t *hA = (uint16_t *)malloc((size_t)aElems * 2);
  uint16_t *hB = (uint16_t *)malloc((size_t)bElems * 2);
  char *hC = (char *)malloc((size_t)cElems * cBytes);
  double *want = (double *)malloc((size_t)cElems * sizeof(double));
  for (int64_t i = 0; i < aElems; ++i)
    hA[i] = exactBits(small(i, 61), bf16);
  for (int64_t i = 0; i < bElems; ++i)
    hB[i] = exactBits(small(i, 62), bf16);
  int overwrite = (flags & SOAPRT_CUDA_OVERWRITE) != 0;
  for (int64_t i = 0; i < cElems; ++i) {
    double c0 = small(i, 63);
    if (wideC)
      ((float *)hC)[i] = (float)c0;
    else
      ((uint16_t *)hC)[i] = exactBits(c0, bf16);
    want[i] = overwrite ? 0.0 : c0;
  }
  for (int64_t b = 0; b < BATCH; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t l = 0; l < K; ++l)
          want[b * M * N + i * N + j] +=
              fromBits(hA[b * aStrides[0] + i * aStrides[1] + l * aStrides[2]],
                       bf16) *
              fromBits(hB[b * K * N + l * N + j], bf16);
  void *A = _mlir_memref_to_llvm_alloc((size_t)aElems * 2);
  void *B = _mlir_memref_to_llvm_alloc((size_t)bElems * 2);
  void *C = _mlir_memref_to_llvm_alloc((size_t)cElems * cBytes);
  upload(A, hA, (size_t)aElems * 2);
  upload(B, hB, (size_t)bElems * 2);
  upload(C, hC, (size_t)cElems * cBytes);
  view_t va, vb, vc;
  long live = soaprt_emu_stats.liveAllocations + (soaprt_emu_stats.gemms == 0);
  fn(mk(&va, A, 0, 3, aSizes, aStrides), mk(&vb, B, 0, 3, bSizes, bStrides),
     mk(&vc, C, 0, 3, cSizes, cStrides), flags, name);
  EXPECT(soaprt_emu_stats.liveAllocations == live,
         "%s: %ld temporaries not freed", name,
         soaprt_emu_stats.liveAllocations - live);
  download(hC, C, (size_t)cElems * cBytes);
  int64_t bad = -1;
  double got = 0;
  for (int64_t i = 0; i < cElems && bad < 0; ++i) {
    got = wideC ? ((float *)hC)[i] : fromBits(((uint16_t *)hC)[i], bf16);
    double halfUlp = wideC ? 0.0 : fabs(want[i]) * (bf16 ? 0x1p-8 : 0x1p-11);
    if (!(fabs(got - want[i]) <= halfUlp))
      bad = i;
  }
  EXPECT(bad < 0, "%s: element %lld is %.8g, expected %.8g", name,
         (long long)bad, got, bad >= 0 ? want[bad] : 0.0);
  EXPECT(soaprt_emu_stats.lastGemmCompute == CUBLAS_COMPUTE_32F,
         "%s: compute type %d, not fp32", name,
         soaprt_emu_stats.lastGemmCompute);
  _mlir_memref_to_llvm_free(A);
  _mlir_memref_to_llvm_free(B);
  _mlir_memref_to_llvm_free(C);
  free(hA);
  free(hB);
  free(hC);
  free(want);
}

static void testHalfMatmuls(void) {
  runHalfMatmul("matmul bf16", 1, 0, 0, 0,
                _mlir_ciface_soaprt_cuda_matmul_bf16);
  runHalfMatmul("matmul bf16, A transposed, TF32 asked (ignored)", 1, 0, 1,
                SOAPRT_CUDA_ALLOW_TF32, _mlir_ciface_soaprt_cuda_matmul_bf16);
  runHalfMatmul("matmul f16, packed A, overwrite", 0, 0, 2,
                SOAPRT_CUDA_OVERWRITE, _mlir_ciface_soaprt_cuda_matmul_f16);
  runHalfMatmul("matmul bf16 -> f32", 1, 1, 0, 0,
                _mlir_ciface_soaprt_cuda_matmul_bf16_f32);
  runHalfMatmul("matmul f16 -> f32, packed A", 0, 1, 2, 0,
                _mlir_ciface_soaprt_cuda_matmul_f16_f32);
}

/* ----------------------------------------------------------------- conv */

typedef struct convCase {
  const char *name;
  int64_t n, c, h, w, f, kh, kw, sh, sw, dh, dw, ph, pw;
  int64_t xStrides[4], wStrides[4], yStrides[4]; /* 0: packed */
  int64_t wChannels; /* channels W is stored with (>= c: not packed) */
  int64_t flags;
  int packedOnly; /* the emulated cuDNN refuses strided tensors */
  int64_t groups; /* 0: 1 */
} convCase_t;

static int64_t groupsOf(const convCase_t *c) {
  return c->groups ? c->groups : 1;
}
/* Channels per group and the first channel of filter f's group. */
static int64_t groupChannels(const convCase_t *c) {
  return c->c / groupsOf(c);
}
static int64_t firstChannel(const convCase_t *c, int64_t f) {
  return f / (c->f / groupsOf(c)) * groupChannels(c);
}

static void packedOf(const int64_t *sizes, int64_t *strides) {
  strides[3] = 1;
  for (int d = 2; d >= 0; --d)
    strides[d] = strides[d + 1] * sizes[d + 1];
}

/* X, W and Y of a case (values from `salt` on), their output size. */
static void makeConvTensors(const convCase_t *c, int salt, tensor_t *X,
                            tensor_t *W, tensor_t *Y, int64_t *oh,
                            int64_t *ow) {
  *oh = (c->h + 2 * c->ph - c->dh * (c->kh - 1) - 1) / c->sh + 1;
  *ow = (c->w + 2 * c->pw - c->dw * (c->kw - 1) - 1) / c->sw + 1;
  int64_t xs[4] = {c->n, c->c, c->h, c->w},
          ws[4] = {c->f, groupChannels(c), c->kh, c->kw},
          ys[4] = {c->n, c->f, *oh, *ow};
  int64_t xst[4], wst[4], yst[4];
  int64_t wStored[4] = {c->f, c->wChannels, c->kh, c->kw};
  memcpy(xst, c->xStrides, sizeof(xst));
  memcpy(yst, c->yStrides, sizeof(yst));
  if (!xst[0])
    packedOf(xs, xst);
  if (!yst[0])
    packedOf(ys, yst);
  packedOf(wStored, wst);
  makeTensor(X, 4, xs, xst, 2, 2 + extentOf(4, xs, xst) + 3, salt);
  makeTensor(W, 4, ws, wst, 0, extentOf(4, wStored, wst), salt + 1);
  makeTensor(Y, 4, ys, yst, 1, 1 + extentOf(4, ys, yst) + 1, salt + 2);
}

static void runConv(const convCase_t *c) {
  tensor_t X, W, Y;
  int64_t oh, ow;
  makeConvTensors(c, 11, &X, &W, &Y, &oh, &ow);
  int overwrite = (c->flags & SOAPRT_CUDA_OVERWRITE) != 0;
  int64_t idx[4] = {0};
  for (idx[0] = 0; idx[0] < c->n; ++idx[0])
    for (idx[1] = 0; idx[1] < c->f; ++idx[1])
      for (idx[2] = 0; idx[2] < oh; ++idx[2])
        for (idx[3] = 0; idx[3] < ow; ++idx[3]) {
          int64_t o = at(&Y, idx);
          double sum = overwrite ? 0.0 : Y.want[o], abs = fabs(sum);
          for (int64_t ch = 0; ch < groupChannels(c); ++ch)
            for (int64_t kh = 0; kh < c->kh; ++kh)
              for (int64_t kw = 0; kw < c->kw; ++kw) {
                int64_t r = idx[2] * c->sh + kh * c->dh - c->ph;
                int64_t q = idx[3] * c->sw + kw * c->dw - c->pw;
                if (r < 0 || r >= c->h || q < 0 || q >= c->w)
                  continue;
                int64_t xi[4] = {idx[0], firstChannel(c, idx[1]) + ch, r, q},
                        wi[4] = {idx[1], ch, kh, kw};
                double t = (double)X.want[at(&X, xi)] * W.want[at(&W, wi)];
                sum += t;
                abs += fabs(t);
              }
          Y.want[o] = (float)sum;
          Y.scale[o] = abs + 1e-30;
        }
  soaprt_emu_options.dnnPackedOnly = c->packedOnly;
  _mlir_ciface_soaprt_cuda_conv2d_f32(ref(&X), ref(&W), ref(&Y), c->sh, c->sw,
                                      c->dh, c->dw, c->ph, c->pw, groupsOf(c),
                                      c->flags, c->name);
  soaprt_emu_options.dnnPackedOnly = 0;
  expectTensor(&Y, 1e-5, c->name);
  expectTensor(&X, 0, c->name);
  expectTensor(&W, 0, c->name);
  freeTensor(&X);
  freeTensor(&W);
  freeTensor(&Y);
}

/* The same case as a filter gradient: W += dL/dW from X and Y (as dY). */
static void runFilterGrad(const convCase_t *c) {
  tensor_t X, W, Y;
  int64_t oh, ow;
  makeConvTensors(c, 21, &X, &W, &Y, &oh, &ow);
  int overwrite = (c->flags & SOAPRT_CUDA_OVERWRITE) != 0;
  int64_t idx[4] = {0};
  for (idx[0] = 0; idx[0] < c->f; ++idx[0])
    for (idx[1] = 0; idx[1] < groupChannels(c); ++idx[1])
      for (idx[2] = 0; idx[2] < c->kh; ++idx[2])
        for (idx[3] = 0; idx[3] < c->kw; ++idx[3]) {
          int64_t o = at(&W, idx);
          double sum = overwrite ? 0.0 : W.want[o], abs = fabs(sum);
          for (int64_t n = 0; n < c->n; ++n)
            for (int64_t i = 0; i < oh; ++i)
              for (int64_t j = 0; j < ow; ++j) {
                int64_t r = i * c->sh + idx[2] * c->dh - c->ph;
                int64_t q = j * c->sw + idx[3] * c->dw - c->pw;
                if (r < 0 || r >= c->h || q < 0 || q >= c->w)
                  continue;
                int64_t xi[4] = {n, firstChannel(c, idx[0]) + idx[1], r, q},
                        yi[4] = {n, idx[0], i, j};
                double t = (double)X.want[at(&X, xi)] * Y.want[at(&Y, yi)];
                sum += t;
                abs += fabs(t);
              }
          W.want[o] = (float)sum;
          W.scale[o] = abs + 1e-30;
        }
  char name[128];
  snprintf(name, sizeof(name), "filter gradient of %s", c->name);
  soaprt_emu_options.dnnPackedOnly = c->packedOnly;
  _mlir_ciface_soaprt_cuda_conv2d_filter_grad_f32(
      ref(&X), ref(&Y), ref(&W), c->sh, c->sw, c->dh, c->dw, c->ph, c->pw,
      groupsOf(c), c->flags, name);
  soaprt_emu_options.dnnPackedOnly = 0;
  expectTensor(&W, 1e-5, name);
  expectTensor(&X, 0, name);
  expectTensor(&Y, 0, name);
  freeTensor(&X);
  freeTensor(&W);
  freeTensor(&Y);
}

/* The same case as an input gradient: X += dL/dX from W and Y (as dY). */
static void runDataGrad(const convCase_t *c) {
  tensor_t X, W, Y;
  int64_t oh, ow;
  makeConvTensors(c, 31, &X, &W, &Y, &oh, &ow);
  int overwrite = (c->flags & SOAPRT_CUDA_OVERWRITE) != 0;
  int64_t idx[4] = {0};
  for (idx[0] = 0; idx[0] < c->n; ++idx[0])
    for (idx[1] = 0; idx[1] < c->c; ++idx[1])
      for (idx[2] = 0; idx[2] < c->h; ++idx[2])
        for (idx[3] = 0; idx[3] < c->w; ++idx[3]) {
          int64_t o = at(&X, idx);
          double sum = overwrite ? 0.0 : X.want[o], abs = fabs(sum);
          /* Every output position and tap that reads X[idx]. */
          for (int64_t f = 0; f < c->f; ++f) {
            int64_t ch = idx[1] - firstChannel(c, f); /* in f's group? */
            if (ch < 0 || ch >= groupChannels(c))
              continue;
            for (int64_t i = 0; i < oh; ++i)
              for (int64_t kh = 0; kh < c->kh; ++kh) {
                if (i * c->sh + kh * c->dh - c->ph != idx[2])
                  continue;
                for (int64_t j = 0; j < ow; ++j)
                  for (int64_t kw = 0; kw < c->kw; ++kw) {
                    if (j * c->sw + kw * c->dw - c->pw != idx[3])
                      continue;
                    int64_t wi[4] = {f, ch, kh, kw},
                            yi[4] = {idx[0], f, i, j};
                    double t = (double)W.want[at(&W, wi)] * Y.want[at(&Y, yi)];
                    sum += t;
                    abs += fabs(t);
                  }
              }
          }
          X.want[o] = (float)sum;
          X.scale[o] = abs + 1e-30;
        }
  char name[128];
  snprintf(name, sizeof(name), "input gradient of %s", c->name);
  soaprt_emu_options.dnnPackedOnly = c->packedOnly;
  long before = soaprt_emu_stats.convDataGrads;
  _mlir_ciface_soaprt_cuda_conv2d_input_grad_f32(
      ref(&W), ref(&Y), ref(&X), c->sh, c->sw, c->dh, c->dw, c->ph, c->pw,
      groupsOf(c), c->flags, name);
  soaprt_emu_options.dnnPackedOnly = 0;
  EXPECT(soaprt_emu_stats.convDataGrads > before,
         "%s: cudnnConvolutionBackwardData ran", name);
  expectTensor(&X, 1e-5, name);
  expectTensor(&W, 0, name);
  expectTensor(&Y, 0, name);
  freeTensor(&X);
  freeTensor(&W);
  freeTensor(&Y);
}

static void testConvolutions(void) {
  static const convCase_t cases[] = {
      /* name, n c h w f kh kw sh sw dh dw ph pw, X, W, Y strides, W chans,
         flags, packedOnly, groups */
      {"conv padded, overwrite", 2, 3, 7, 6, 4, 3, 2, 1, 1, 1, 1, 1, 2,
       {0}, {0}, {0}, 3, SOAPRT_CUDA_OVERWRITE, 0, 1},
      {"conv stride 2 dilation 2, strided Y, unpacked W", 2, 3, 9, 8, 3, 3,
       3, 2, 2, 2, 2, 1, 1, {0}, {0}, {5 * 25, 25, 5, 1}, 5, 0, 0, 1},
      {"conv strided X (a crop), TF32", 1, 2, 5, 5, 2, 3, 3, 1, 1, 1, 1, 0,
       0, {2 * 64, 64, 8, 1}, {0}, {0}, 2, SOAPRT_CUDA_ALLOW_TF32, 0, 1},
      {"conv NHWC-strided X and Y", 2, 4, 5, 6, 3, 2, 2, 1, 2, 1, 1, 1, 0,
       {5 * 6 * 4, 1, 6 * 4, 4}, {0}, {6 * 3 * 3, 1, 3 * 3, 3}, 4, 0, 0, 1},
      {"conv packed fallback (cuDNN refuses strides)", 2, 3, 6, 6, 2, 3, 3,
       1, 1, 1, 1, 1, 1, {0}, {0}, {2 * 72, 72, 12, 2}, 3, 0, 1, 1},
      {"conv of 2 groups, strided", 2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 1, 1, 0,
       {0}, {0}, {0}, 2, 0, 0, 2},
      {"depthwise conv (groups = channels), NHWC-strided X and Y", 2, 3, 6,
       5, 3, 3, 3, 1, 1, 1, 1, 1, 1, {5 * 6 * 3, 1, 5 * 3, 3}, {0},
       {5 * 6 * 3, 1, 5 * 3, 3}, 1, SOAPRT_CUDA_OVERWRITE, 0, 3},
      {"depthwise conv, 2 filters per channel, stride 2", 1, 2, 7, 7, 4, 3,
       3, 2, 2, 1, 1, 0, 0, {0}, {0}, {0}, 1, 0, 0, 2},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    runConv(&cases[i]);
    runFilterGrad(&cases[i]);
    runDataGrad(&cases[i]);
  }
}

/* The three cuDNN calls on 16-bit tensors (packed NCHW, padding 1, stride
 * 1, 2 channel groups): Y = conv(X, W), dW = the filter gradient of X and
 * dY (Y's values), dX = the input gradient of W and dY, each overwriting
 * its output (flag) and each sum exact in double: within half a unit in
 * the last place of the type, rounded once. */
typedef void (*convFn_t)(soaprt_unranked_memref_t *, soaprt_unranked_memref_t *,
                         soaprt_unranked_memref_t *, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t,
                         const char *);

static void runHalfConvolutions(const char *name, int bf16, convFn_t forward,
                                convFn_t filterGrad, convFn_t inputGrad) {
  enum { N = 2, C = 4, H = 5, W = 6, F = 4, G = 2, K = 3, CG = C / G };
  int64_t xSizes[4] = {N, C, H, W}, wSizes[4] = {F, CG, K, K},
          ySizes[4] = {N, F, H, W};
  int64_t xStrides[4], wStrides[4], yStrides[4];
  packedOf(xSizes, xStrides);
  packedOf(wSizes, wStrides);
  packedOf(ySizes, yStrides);
  enum { XE = N * C * H * W, WE = F * CG * K * K, YE = N * F * H * W };
  uint16_t hx[XE], hw[WE], hy[YE], got[XE > WE ? (XE > YE ? XE : YE) : WE];
  double x[XE], w[WE], y[YE], want[XE > WE ? (XE > YE ? XE : YE) : WE];
  for (int i = 0; i < XE; ++i)
    hx[i] = exactBits(x[i] = small(i, 71), bf16);
  for (int i = 0; i < WE; ++i)
    hw[i] = exactBits(w[i] = small(i, 72), bf16);
  for (int i = 0; i < YE; ++i)
    hy[i] = exactBits(y[i] = small(i, 73), bf16);
  void *dx = _mlir_memref_to_llvm_alloc(sizeof(hx));
  void *dw = _mlir_memref_to_llvm_alloc(sizeof(hw));
  void *dy = _mlir_memref_to_llvm_alloc(sizeof(hy));
  view_t vx, vw, vy;
  for (int direction = 0; direction < 3; ++direction) {
    upload(dx, hx, sizeof(hx));
    upload(dw, hw, sizeof(hw));
    upload(dy, hy, sizeof(hy));
    int64_t outElems = direction == 0 ? YE : direction == 1 ? WE : XE;
    for (int64_t i = 0; i < outElems; ++i)
      want[i] = 0;
    /* out index += a * b over every (n, f, oh, ow, c, kh, kw). */
    for (int n = 0; n < N; ++n)
      for (int f = 0; f < F; ++f)
        for (int i = 0; i < H; ++i)
          for (int j = 0; j < W; ++j)
            for (int c = 0; c < CG; ++c)
              for (int kh = 0; kh < K; ++kh)
                for (int kw = 0; kw < K; ++kw) {
                  int r = i + kh - 1, q = j + kw - 1;
                  if (r < 0 || r >= H || q < 0 || q >= W)
                    continue;
                  int xi = ((n * C + f / (F / G) * CG + c) * H + r) * W + q;
                  int wi = ((f * CG + c) * K + kh) * K + kw;
                  int yi = ((n * F + f) * H + i) * W + j;
                  if (direction == 0)
                    want[yi] += x[xi] * w[wi];
                  else if (direction == 1)
                    want[wi] += x[xi] * y[yi];
                  else
                    want[xi] += w[wi] * y[yi];
                }
    soaprt_unranked_memref_t *rx = mk(&vx, dx, 0, 4, xSizes, xStrides);
    soaprt_unranked_memref_t *rw = mk(&vw, dw, 0, 4, wSizes, wStrides);
    soaprt_unranked_memref_t *ry = mk(&vy, dy, 0, 4, ySizes, yStrides);
    if (direction == 0)
      forward(rx, rw, ry, 1, 1, 1, 1, 1, 1, G, SOAPRT_CUDA_OVERWRITE, name);
    else if (direction == 1)
      filterGrad(rx, ry, rw, 1, 1, 1, 1, 1, 1, G, SOAPRT_CUDA_OVERWRITE, name);
    else
      inputGrad(rw, ry, rx, 1, 1, 1, 1, 1, 1, G, SOAPRT_CUDA_OVERWRITE, name);
    download(got,
             direction == 0   ? dy
             : direction == 1 ? dw
                              : dx,
             (size_t)outElems * 2);
    int64_t bad = -1;
    for (int64_t i = 0; i < outElems && bad < 0; ++i)
      if (!(fabs(fromBits(got[i], bf16) - want[i]) <=
            fabs(want[i]) * (bf16 ? 0x1p-8 : 0x1p-11)))
        bad = i;
    EXPECT(bad < 0, "%s, %s: element %lld is %.8g, expected %.8g", name,
           direction == 0   ? "forward"
           : direction == 1 ? "filter gradient"
                            : "input gradient",
           (long long)bad, bad >= 0 ? fromBits(got[bad], bf16) : 0.0,
           bad >= 0 ? want[bad] : 0.0);
  }
  _mlir_memref_to_llvm_free(dx);
  _mlir_memref_to_llvm_free(dw);
  _mlir_memref_to_llvm_free(dy);
}

static void testHalfConvolutions(void) {
  runHalfConvolutions("conv2d bf16", 1, _mlir_ciface_soaprt_cuda_conv2d_bf16,
                      _mlir_ciface_soaprt_cuda_conv2d_filter_grad_bf16,
                      _mlir_ciface_soaprt_cuda_conv2d_input_grad_bf16);
  runHalfConvolutions("conv2d f16", 0, _mlir_ciface_soaprt_cuda_conv2d_f16,
                      _mlir_ciface_soaprt_cuda_conv2d_filter_grad_f16,
                      _mlir_ciface_soaprt_cuda_conv2d_input_grad_f16);
}

/* ------------------------------------------------- inputs and constants */

static float gInput[24], gConstant[64];

static void testInputsAndConstants(void) {
  for (int i = 0; i < 24; ++i)
    gInput[i] = value(i, 21);
  for (int i = 0; i < 64; ++i)
    gConstant[i] = value(i, 22);
  view_t v;
  int64_t sizes[3] = {2, 3, 4}, strides[3] = {12, 4, 1};
  soaprt_bind_input(0, mk(&v, gInput, 0, 3, sizes, strides), SOAPRT_F32);
  float *in = (float *)(intptr_t)soaprt_cuda_input(0);
  struct cudaPointerAttributes attributes;
  EXPECT(cudaPointerGetAttributes(&attributes, in) == cudaSuccess &&
             attributes.type == cudaMemoryTypeDevice,
         "soaprt_cuda_input: not device memory");
  float got[64];
  download(got, in, sizeof(gInput));
  EXPECT(!memcmp(got, gInput, sizeof(gInput)), "input 0 contents");
  EXPECT((float *)(intptr_t)soaprt_cuda_input(0) == in, "input 0 cached");

  /* A device buffer bound as input 1: the runtime fills it from a shadow. */
  float *buffer = (float *)_mlir_memref_to_llvm_alloc(24 * 4);
  soaprt_bind_input(1, mk(&v, buffer, 0, 3, sizes, strides), SOAPRT_F32);
  soaprt_binding_t *b = soaprt_input_binding(1);
  EXPECT(b->data != (char *)buffer && b->ownsData, "device input: no shadow");
  memcpy(b->data, gInput, sizeof(gInput));
  EXPECT((float *)(intptr_t)soaprt_cuda_input(1) == buffer,
         "device input: another buffer");
  download(got, buffer, sizeof(gInput));
  EXPECT(!memcmp(got, gInput, sizeof(gInput)), "device input contents");

  float *c16 = (float *)(intptr_t)soaprt_cuda_constant(
      (int64_t)(intptr_t)gConstant, 16 * 4);
  EXPECT(c16 && soaprt_cuda_constant((int64_t)(intptr_t)gConstant, 8 * 4) ==
                    (int64_t)(intptr_t)c16,
         "constant cached");
  float *c64 = (float *)(intptr_t)soaprt_cuda_constant(
      (int64_t)(intptr_t)gConstant, 64 * 4);
  download(got, c64, sizeof(gConstant));
  EXPECT(!memcmp(got, gConstant, sizeof(gConstant)),
         "constant uploaded again for more bytes");

  float *aligned = (float *)_mlir_memref_to_llvm_aligned_alloc(256, 100);
  float *empty = (float *)_mlir_memref_to_llvm_alloc(0);
  EXPECT(aligned && ((uintptr_t)aligned % 256) == 0 && empty,
         "memref.alloc (aligned, 0 bytes)");
  _mlir_memref_to_llvm_free(aligned);
  _mlir_memref_to_llvm_free(empty);
}

/* ----------------------------------------------------------- memrefCopy */

static void testCopies(void) {
  /* device -> device: a transposed view 2x4x3 of a 2x3x4 tensor. */
  int64_t sizes[3] = {2, 3, 4}, packed[3] = {12, 4, 1};
  int64_t tSizes[3] = {2, 4, 3}, tSrc[3] = {12, 1, 4}, tDst[3] = {12, 3, 1};
  tensor_t S, D;
  makeTensor(&S, 3, sizes, packed, 0, 24, 31);
  makeTensor(&D, 3, tSizes, tDst, 0, 24, 32);
  view_t vs, vd;
  memrefCopy(4, mk(&vs, S.dev, 0, 3, tSizes, tSrc), ref(&D));
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 4; ++k)
      for (int m = 0; m < 3; ++m)
        D.want[b * 12 + k * 3 + m] = S.want[b * 12 + m * 4 + k];
  expectTensor(&D, 0, "memrefCopy device -> device, transposed");

  /* host -> device and device -> host, strided on both sides. */
  float host[40];
  for (int i = 0; i < 40; ++i)
    host[i] = value(i, 33);
  int64_t hSizes[2] = {3, 4}, hStrides[2] = {10, 2}, dStrides[2] = {1, 3};
  memrefCopy(4, mk(&vs, host, 1, 2, hSizes, hStrides),
             mk(&vd, D.dev, 2, 2, hSizes, dStrides));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      D.want[2 + i + 3 * j] = host[1 + 10 * i + 2 * j];
  expectTensor(&D, 0, "memrefCopy host -> device");
  float back[40];
  memcpy(back, host, sizeof(back));
  memrefCopy(4, mk(&vd, D.dev, 0, 2, hSizes, dStrides),
             mk(&vs, back, 3, 2, hSizes, hStrides));
  soaprt_device_synchronize();
  int ok = 1;
  for (int i = 0; i < 40; ++i) {
    int r = i - 3, inView = r >= 0 && r % 10 < 8 && r % 2 == 0 && r / 10 < 3;
    float want = inView ? D.want[(r / 10) + 3 * ((r % 10) / 2)] : host[i];
    ok &= !memcmp(&back[i], &want, 4);
  }
  EXPECT(ok, "memrefCopy device -> host");

  /* bind_output of a strided device view and of host memory (rank 0). */
  soaprt_bind_output(0, mk(&vd, S.dev, 0, 3, tSizes, tSrc), SOAPRT_F32);
  soaprt_bind_output(1, mk(&vs, host, 1, 2, hSizes, hStrides), SOAPRT_F32);
  if (gRank == 0) {
    const float *o0 = (const float *)soaprt_output_binding(0)->data;
    const float *o1 = (const float *)soaprt_output_binding(1)->data;
    ok = 1;
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k)
        for (int m = 0; m < 3; ++m)
          ok &= o0[b * 12 + k * 3 + m] == S.want[b * 12 + m * 4 + k];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        ok &= o1[i * 4 + j] == host[1 + 10 * i + 2 * j];
    EXPECT(ok, "soaprt_bind_output of device and host views");
  }
  freeTensor(&S);
  freeTensor(&D);
}

/* ------------------------------------------------------- communication */

/* Exact binary16 of a small integer. */
static uint16_t halfOfInt(int v) {
  if (v == 0)
    return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned m = (unsigned)(v < 0 ? -v : v), e = 0;
  while ((m >> (e + 1)) != 0)
    ++e;
  return (uint16_t)(sign | ((e + 15) << 10) | ((m << (10 - e)) & 0x3ff));
}

/* Element `e` of rank `r`'s data as dtype `t`, stored at `p`. */
static void encode(int64_t t, int64_t v, void *p) {
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  switch (t) {
  case SOAPRT_F32: memcpy(p, &f, 4); break;
  case SOAPRT_F64: { double d = (double)v; memcpy(p, &d, 8); break; }
  case SOAPRT_I32: { int32_t i = (int32_t)v; memcpy(p, &i, 4); break; }
  case SOAPRT_I64: memcpy(p, &v, 8); break;
  case SOAPRT_I8: { int8_t i = (int8_t)v; memcpy(p, &i, 1); break; }
  case SOAPRT_I1: { uint8_t i = (uint8_t)(v != 0); memcpy(p, &i, 1); break; }
  case SOAPRT_F16: { uint16_t h = halfOfInt((int)v); memcpy(p, &h, 2); break; }
  default: { uint16_t h = (uint16_t)(bits >> 16); memcpy(p, &h, 2); break; }
  }
}

static int64_t dataOf(int64_t t, int rank, int64_t e) {
  if (t == SOAPRT_I1) /* all ones, or some ranks (sum != or, and != or) */
    return e % 4 == 0 || (rank + e) % 3 != 0;
  return (int64_t)((rank * 7 + e * 5) % 9) - 4; /* -4..4: exact everywhere */
}

/* The region: 3x3 elements, strides {6, 2}, offset 1, of a 24-element
 * buffer (not contiguous: the runtime packs it). */
static const int64_t kRegionSizes[2] = {3, 3}, kRegionStrides[2] = {6, 2};
static int inRegion(int64_t e) {
  int64_t r = e - 1;
  return r >= 0 && r % 2 == 0 && (r % 6) / 2 < 3 && r / 6 < 3;
}

static void allReduce(int64_t t, int64_t kind, const int64_t *devices, int n,
                      int devicesOnDevice, const char *what) {
  size_t size = (size_t)soaprt_dtype_size(t);
  char init[24 * 8], want[24 * 8], got[24 * 8];
  int member = 0;
  for (int i = 0; i < n; ++i)
    member |= devices[i] == gRank;
  for (int64_t e = 0; e < 24; ++e) {
    encode(t, dataOf(t, gRank, e), init + e * size);
    int64_t r = dataOf(t, (int)devices[0], e);
    for (int i = 1; i < n; ++i) {
      int64_t x = dataOf(t, (int)devices[i], e);
      r = kind == SOAPRT_SUM   ? (t == SOAPRT_I1 ? (r || x) : r + x)
          : kind == SOAPRT_MAX ? (x > r ? x : r)
                               : (x < r ? x : r);
    }
    encode(t, member && n > 1 && inRegion(e) ? r : dataOf(t, gRank, e),
           want + e * size);
  }
  char *buffer = (char *)_mlir_memref_to_llvm_alloc(24 * size);
  upload(buffer, init, 24 * size);
  int64_t *list = (int64_t *)(uintptr_t)devices;
  if (devicesOnDevice) {
    list = (int64_t *)_mlir_memref_to_llvm_alloc((size_t)n * 8);
    upload(list, devices, (size_t)n * 8);
  }
  view_t v, d;
  int64_t dSizes[1] = {n}, dStrides[1] = {1};
  soaprt_all_reduce(mk(&v, buffer, 1, 2, kRegionSizes, kRegionStrides), t,
                    kind, mk(&d, list, 0, 1, dSizes, dStrides));
  download(got, buffer, 24 * size);
  EXPECT(!memcmp(got, want, 24 * size), "all_reduce %s of %s (kind %lld)",
         what, soaprt_dtype_npy(t), (long long)kind);
  _mlir_memref_to_llvm_free(buffer);
  if (devicesOnDevice)
    _mlir_memref_to_llvm_free(list);
}

static void testTransfers(void) {
  /* rank 0 -> last rank: the strided region; the rest stays. */
  int last = gSize - 1;
  tensor_t T;
  int64_t sizes[2] = {3, 3};
  makeTensor(&T, 2, sizes, kRegionStrides, 1, 24, 40 + gRank);
  soaprt_transfer(ref(&T), SOAPRT_F32, 0, last);
  if (gRank == last && last != 0)
    for (int64_t e = 0; e < 24; ++e)
      if (inRegion(e))
        T.want[e] = value(e, 40);
  expectTensor(&T, 0, "soaprt_transfer of a strided region");
  /* last rank -> rank 0: the whole buffer, contiguous. */
  int64_t all[1] = {24}, unit[1] = {1};
  view_t v;
  soaprt_transfer(mk(&v, T.dev, 0, 1, all, unit), SOAPRT_F32, last, 0);
  if (gRank == 0 && last != 0) {
    for (int64_t e = 0; e < 24; ++e)
      T.want[e] = value(e, 40 + last);
    for (int64_t e = 0; e < 24; ++e) /* last's region came from rank 0 */
      if (inRegion(e))
        T.want[e] = value(e, 40);
  }
  expectTensor(&T, 0, "soaprt_transfer of a contiguous buffer");
  freeTensor(&T);
}

/* Every rank, 0..gSize-1: the device list of a collective over the world,
 * as a plain list and as the i64 memref the runtime takes. */
static int64_t gWorld[16];
static int64_t *worldDevices(void) {
  for (int i = 0; i < gSize && i < 16; ++i)
    gWorld[i] = i;
  return gWorld;
}
static soaprt_unranked_memref_t *worldList(view_t *v) {
  int64_t sizes[1] = {gSize}, strides[1] = {1};
  return mk(v, worldDevices(), 0, 1, sizes, strides);
}

static void testAllReduces(void) {
  int64_t *world = worldDevices();
  /* A sub-group in a non-sorted order: {2, 0} (or what exists). */
  int64_t group[2] = {gSize >= 3 ? 2 : gSize - 1, 0};
  int groupSize = gSize == 1 ? 1 : 2;
  static const int64_t types[] = {SOAPRT_F32, SOAPRT_F64, SOAPRT_I32,
                                  SOAPRT_I64, SOAPRT_I8,  SOAPRT_I1,
                                  SOAPRT_F16, SOAPRT_BF16};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); ++i)
    for (int64_t kind = SOAPRT_SUM; kind <= SOAPRT_MIN; ++kind) {
      allReduce(types[i], kind, world, gSize, 0, "over the world");
      allReduce(types[i], kind, group, groupSize, (int)(i % 2),
                "over a sub-group");
    }
}

/* Asynchronous starts, tickets, waits and groups (soaprt_comm.c). Deferred
 * (the emulation's default, SOAPRT_COMM_DEFER unset or 1): nothing runs
 * before its wait, so the data are still the old ones there; with
 * SOAPRT_COMM_DEFER=0 everything runs when it starts (the emulation is
 * synchronous). Either way the results after the waits are the same. */
static void testAsyncCommunication(void) {
  const char *env = getenv("SOAPRT_COMM_DEFER");
  int deferred = !env || !*env || strcmp(env, "0") != 0;
  int last = gSize - 1;

  /* All-reduce (sum) of the strided region over the world. */
  tensor_t A;
  int64_t sizes[2] = {3, 3};
  makeTensor(&A, 2, sizes, kRegionStrides, 1, 24, 60 + gRank);
  view_t d;
  int64_t t1 = soaprt_all_reduce_start(ref(&A), SOAPRT_F32, SOAPRT_SUM,
                                       worldList(&d));
  EXPECT(gSize == 1 ? t1 == 0 : t1 > 0, "all_reduce_start ticket %lld on %d "
         "ranks", (long long)t1, gSize);
  if (deferred)
    expectTensor(&A, 0, "deferred all_reduce: the region before its wait");
  for (int64_t e = 0; e < 24; ++e)
    if (inRegion(e) && gSize > 1) {
      double sum = 0;
      for (int r = 0; r < gSize; ++r)
        sum += value(e, 60 + r);
      A.want[e] = (float)sum;
      A.scale[e] = gSize;
    }

  /* Rank 0 and the last rank swap regions of B in one group: 0 -> last
     (the strided region), last -> 0 (the 4 elements after it). */
  tensor_t B;
  makeTensor(&B, 2, sizes, kRegionStrides, 1, 24, 80 + gRank);
  view_t w;
  int64_t tailSize[1] = {4}, unit[1] = {1};
  soaprt_comm_group_begin();
  int64_t t2 = soaprt_transfer_start(ref(&B), SOAPRT_F32, 0, last);
  int64_t t3 = soaprt_transfer_start(mk(&w, B.dev, 20, 1, tailSize, unit),
                                     SOAPRT_F32, last, 0);
  soaprt_comm_group_end();
  int inSwap = last != 0 && (gRank == 0 || gRank == last);
  EXPECT(inSwap ? t2 > t1 && t3 == t2 + 1 : t2 == 0 && t3 == 0,
         "transfer_start tickets %lld, %lld after %lld", (long long)t2,
         (long long)t3, (long long)t1);
  if (deferred)
    expectTensor(&B, 0, "deferred transfers: the regions before the wait");
  if (gRank == last && last != 0)
    for (int64_t e = 0; e < 24; ++e)
      if (inRegion(e))
        B.want[e] = value(e, 80);
  if (gRank == 0 && last != 0)
    for (int64_t e = 20; e < 24; ++e)
      B.want[e] = value(e, 80 + last);

  /* One wait for the last ticket covers all three. */
  soaprt_comm_wait(t3 > 0 ? t3 : t1);
  soaprt_comm_wait(t1); /* already covered: nothing to do */
  expectTensor(&A, 1e-6, "all_reduce after its wait");
  expectTensor(&B, 0, "grouped transfers after the wait");
  freeTensor(&A);
  freeTensor(&B);
}

/* A bucket of gradients: two all-reduces started in one group (one NCCL
 * launch), the strided region packed and unpacked at the group's end, then
 * one wait. */
/* Element e's largest value over the ranks, rank r's being value(e, base +
 * r). */
static float maxOverRanks(int64_t e, int base) {
  float most = value(e, base);
  for (int r = 1; r < gSize; ++r)
    most = value(e, base + r) > most ? value(e, base + r) : most;
  return most;
}

static void testAllReduceBucket(void) {
  tensor_t C, D;
  int64_t sizes[2] = {3, 3}, whole[1] = {24}, unit[1] = {1};
  makeTensor(&C, 2, sizes, kRegionStrides, 1, 24, 100 + gRank);
  makeTensor(&D, 1, whole, unit, 0, 24, 120 + gRank);
  view_t d1, d2;
  soaprt_comm_group_begin();
  int64_t t1 = soaprt_all_reduce_start(ref(&C), SOAPRT_F32, SOAPRT_SUM,
                                       worldList(&d1));
  int64_t t2 = soaprt_all_reduce_start(ref(&D), SOAPRT_F32, SOAPRT_MAX,
                                       worldList(&d2));
  soaprt_comm_group_end();
  EXPECT(gSize == 1 ? t1 == 0 && t2 == 0 : t2 == t1 + 1,
         "bucket tickets %lld, %lld", (long long)t1, (long long)t2);
  for (int64_t e = 0; e < 24 && gSize > 1; ++e) {
    if (inRegion(e)) {
      double sum = 0;
      for (int r = 0; r < gSize; ++r)
        sum += value(e, 100 + r);
      C.want[e] = (float)sum;
      C.scale[e] = gSize;
    }
    D.want[e] = maxOverRanks(e, 120);
  }
  soaprt_comm_wait(t2);
  expectTensor(&C, 1e-6, "bucket: the strided region's sum after the wait");
  expectTensor(&D, 0, "bucket: the whole buffer's max after the wait");
  freeTensor(&C);
  freeTensor(&D);
}

/* More operations pending than the deferred queue first holds (64): the
 * queue grows while they wait, and each still reduces its own region (the
 * copies of the regions' sizes and strides move with the queue). */
static void testManyPending(void) {
  tensor_t C;
  int64_t sizes[2] = {3, 3};
  makeTensor(&C, 2, sizes, kRegionStrides, 1, 24, 140 + gRank);
  view_t d;
  int64_t last = 0;
  for (int i = 0; i < 150; ++i)
    last = soaprt_all_reduce_start(ref(&C), SOAPRT_F32, SOAPRT_MAX,
                                   worldList(&d));
  for (int64_t e = 0; e < 24 && gSize > 1; ++e)
    if (inRegion(e))
      C.want[e] = maxOverRanks(e, 140);
  /* Memory the queue left behind as it grew is reused now: were a region
     still pointing there, it would read these bytes. */
  enum { SCRIBBLES = 64 };
  void *scribble[SCRIBBLES];
  for (int i = 0; i < SCRIBBLES; ++i) {
    size_t bytes = (size_t)(8 + i) << 10;
    scribble[i] = malloc(bytes);
    if (scribble[i])
      memset(scribble[i], 0x7f, bytes);
  }
  soaprt_comm_wait(last);
  for (int i = 0; i < SCRIBBLES; ++i)
    free(scribble[i]);
  expectTensor(&C, 0, "150 pending all-reduces: the region's max after the "
                      "wait");
  freeTensor(&C);
}

/* ------------------------------------------------------- memory, peak */

static int64_t gPeak = 0;

static void testPeak(void) {
  int64_t before = soaprt_device_peak_bytes();
  void *big = _mlir_memref_to_llvm_alloc(3 << 20);
  _mlir_memref_to_llvm_free(big);
  int64_t after = soaprt_device_peak_bytes();
  EXPECT(after >= (3 << 20) + (32 << 20) && after >= before,
         "peak %lld bytes (before %lld): the 3 MiB buffer and cuBLAS's 32 "
         "MiB workspace are not in it",
         (long long)after, (long long)before);
  gPeak = after;
}

/* ---------------------------------------- the emulation's strictness */

static void testStrictCudaRuntime(void) {
  cudaStream_t s = soaprt_cuda_stream("test");
  char host[64];
  char *dev = NULL, *managed = NULL;
  EXPECT(cudaMalloc((void **)&dev, 64) == cudaSuccess &&
             cudaMallocManaged((void **)&managed, 64, cudaMemAttachGlobal) ==
                 cudaSuccess,
         "cudaMalloc, cudaMallocManaged");
  EXPECT(cudaMemcpyAsync(host, dev, 64, cudaMemcpyHostToDevice, s) ==
             cudaErrorInvalidValue,
         "HostToDevice into host memory accepted");
  EXPECT(cudaMemcpyAsync(dev, host, 64, cudaMemcpyDeviceToHost, s) ==
             cudaErrorInvalidValue,
         "DeviceToHost into device memory accepted");
  EXPECT(cudaMemcpyAsync(dev, host, 64, cudaMemcpyDeviceToDevice, s) ==
             cudaErrorInvalidValue,
         "DeviceToDevice from host memory accepted");
  EXPECT(cudaMemcpyAsync(managed, host, 64, cudaMemcpyHostToDevice, s) ==
                 cudaSuccess &&
             cudaMemcpyAsync(host, managed, 64, cudaMemcpyHostToHost, s) ==
                 cudaSuccess,
         "managed memory refused on either side");
  EXPECT(cudaMemcpyAsync(dev + 8, host, 64, cudaMemcpyDefault, s) ==
             cudaErrorInvalidValue,
         "a copy past the end of an allocation accepted");
  EXPECT(cudaMemcpyAsync(dev + 8, dev, 16, cudaMemcpyDefault, s) ==
             cudaErrorInvalidValue,
         "an overlapping copy accepted");
  EXPECT(cudaMemcpy2DAsync(dev, 4, host, 8, 8, 2, cudaMemcpyDefault, s) ==
             cudaErrorInvalidPitchValue,
         "cudaMemcpy2D with a pitch below the width accepted");
  EXPECT(cudaMemcpy2DAsync(dev, (size_t)1 << 31, host, 8, 8, 1,
                           cudaMemcpyDefault, s) == cudaErrorInvalidPitchValue,
         "cudaMemcpy2D with a pitch above cudaDevAttrMaxPitch accepted");
  EXPECT(cudaMemcpy2DAsync(dev, 16, host, 8, 8, 4, cudaMemcpyHostToDevice,
                           s) == cudaSuccess,
         "a valid cudaMemcpy2D refused");
  EXPECT(cudaMemcpyAsync(dev, host, 8, cudaMemcpyDefault,
                         (cudaStream_t)(uintptr_t)0x1234) ==
             cudaErrorInvalidResourceHandle,
         "a stream that was never created accepted");
  cudaStream_t dead = NULL;
  EXPECT(cudaStreamCreateWithFlags(&dead, cudaStreamNonBlocking) ==
                 cudaSuccess &&
             cudaStreamDestroy(dead) == cudaSuccess &&
             cudaMemsetAsync(dev, 0, 8, dead) ==
                 cudaErrorInvalidResourceHandle,
         "a destroyed stream accepted");
  EXPECT(cudaMemsetAsync(host, 0, 8, s) == cudaErrorInvalidValue,
         "cudaMemsetAsync of host memory accepted");
  EXPECT(cudaGetLastError() == cudaErrorInvalidValue &&
             cudaGetLastError() == cudaSuccess,
         "cudaGetLastError");
  EXPECT(cudaFree(host) == cudaErrorInvalidValue &&
             cudaFree(dev + 4) == cudaErrorInvalidValue &&
             cudaFree(NULL) == cudaSuccess,
         "cudaFree of host memory, of an interior pointer, of NULL");
  struct cudaPointerAttributes a;
  EXPECT(cudaPointerGetAttributes(&a, dev + 63) == cudaSuccess &&
             a.type == cudaMemoryTypeDevice &&
             cudaPointerGetAttributes(&a, managed) == cudaSuccess &&
             a.type == cudaMemoryTypeManaged &&
             cudaPointerGetAttributes(&a, host) == cudaSuccess &&
             a.type == cudaMemoryTypeUnregistered,
         "cudaPointerGetAttributes");
  dev[64] = 1; /* one byte out of bounds: the free notices */
  EXPECT(cudaFree(dev) == cudaErrorIllegalAddress,
         "an out-of-bounds write went unnoticed");
  EXPECT(cudaFree(dev) == cudaErrorInvalidValue, "a double free accepted");
  EXPECT(cudaFree(managed) == cudaSuccess, "cudaFree of managed memory");

  /* The pool: used bytes follow cudaMallocAsync / cudaFreeAsync. */
  cudaMemPool_t pool;
  uint64_t used0 = 0, used1 = 0, used2 = 0, high = 0, zero = 0, five = 5;
  void *p = NULL;
  EXPECT(cudaDeviceGetDefaultMemPool(&pool, soaprt_cuda.device) ==
                 cudaSuccess &&
             cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
                                     &used0) == cudaSuccess &&
             cudaMallocAsync(&p, 1000, s) == cudaSuccess &&
             cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
                                     &used1) == cudaSuccess &&
             cudaFreeAsync(p, s) == cudaSuccess &&
             cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
                                     &used2) == cudaSuccess &&
             used1 == used0 + 1000 && used2 == used0,
         "pool used bytes %llu -> %llu -> %llu", (unsigned long long)used0,
         (unsigned long long)used1, (unsigned long long)used2);
  EXPECT(cudaFreeAsync(p, s) == cudaErrorInvalidValue,
         "cudaFreeAsync twice accepted");
  EXPECT(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &five) ==
                 cudaErrorInvalidValue &&
             cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh,
                                     &zero) == cudaSuccess &&
             cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh,
                                     &high) == cudaSuccess &&
             high == used0,
         "pool high-water reset");
  int value = 0, count = 0;
  const char *env = getenv("SOAPRT_EMU_GPUS");
  EXPECT(cudaGetDeviceCount(&count) == cudaSuccess &&
             count == (env && *env ? atoi(env) : 8),
         "cudaGetDeviceCount %d", count);
  EXPECT(cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, 0) ==
                 cudaSuccess &&
             value == 2147483647 &&
             cudaDeviceGetAttribute(&value, cudaDevAttrMemoryPoolsSupported,
                                    0) == cudaSuccess &&
             value == 1 &&
             cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, count) ==
                 cudaErrorInvalidDevice,
         "cudaDeviceGetAttribute");
  (void)cudaGetLastError();
}

static void testStrictLibraries(void) {
  cudaStream_t s = soaprt_cuda_stream("test");
  /* cuBLAS: C = 2 op(A) op(B) + 0.5 C with transposes and a broadcast A. */
  enum { M = 3, N = 4, K = 5, BATCH = 2 };
  float hA[K * M], hB[BATCH * N * K], hC[BATCH * M * N];
  for (int i = 0; i < K * M; ++i)
    hA[i] = value(i, 50);
  for (int i = 0; i < BATCH * N * K; ++i)
    hB[i] = value(i, 51);
  for (int i = 0; i < BATCH * M * N; ++i)
    hC[i] = value(i, 52);
  float *A = NULL, *B = NULL, *C = NULL;
  cudaMalloc((void **)&A, sizeof(hA));
  cudaMalloc((void **)&B, sizeof(hB));
  cudaMalloc((void **)&C, sizeof(hC));
  upload(A, hA, sizeof(hA));
  upload(B, hB, sizeof(hB));
  upload(C, hC, sizeof(hC));
  cublasHandle_t h = NULL;
  float alpha = 2.0f, beta = 0.5f;
  int ok = cublasCreate(&h) == CUBLAS_STATUS_SUCCESS &&
           cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS;
  /* A stored K x M (op T, lda K), B stored N x K per batch (op T, ldb N). */
  ok = ok && cublasGemmStridedBatchedEx(
                 h, CUBLAS_OP_T, CUBLAS_OP_T, M, N, K, &alpha, A, CUDA_R_32F,
                 K, 0, B, CUDA_R_32F, N, N * K, &beta, C, CUDA_R_32F, M, M * N,
                 BATCH, CUBLAS_COMPUTE_32F_FAST_TF32,
                 CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  float got[BATCH * M * N];
  download(got, C, sizeof(got));
  for (int b = 0; b < BATCH; ++b)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < M; ++i) {
        float sum = 0.0f, abs = 0.0f; /* float reference */
        for (int l = 0; l < K; ++l) {
          float t = hA[l + i * K] * hB[b * N * K + j + l * N];
          sum += t;
          abs += fabsf(t);
        }
        float want = 2.0f * sum + 0.5f * hC[b * M * N + i + j * M];
        ok &= fabsf(got[b * M * N + i + j * M] - want) <=
              1e-5f * (2.0f * abs + fabsf(hC[b * M * N + i + j * M])) + 1e-7f;
      }
  EXPECT(ok, "cublasGemmStridedBatchedEx with transposes, alpha, beta, a "
             "broadcast A (stride 0)");
#define GEMM(ta, m, lda, ldc, a, c, sc, batch, compute)                        \
  cublasGemmStridedBatchedEx(h, ta, CUBLAS_OP_N, m, N, K, &alpha, a,           \
                             CUDA_R_32F, lda, 0, B, CUDA_R_32F, K, N * K,      \
                             &beta, c, CUDA_R_32F, ldc, sc, batch, compute,    \
                             CUBLAS_GEMM_DEFAULT)
  EXPECT(GEMM(CUBLAS_OP_N, M, M - 1, M, A, C, M * N, 1, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_INVALID_VALUE &&
             GEMM(CUBLAS_OP_T, M, K - 1, M, A, C, M * N, 1,
                  CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_INVALID_VALUE &&
             GEMM(CUBLAS_OP_N, M, M, M - 1, A, C, M * N, 1,
                  CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_INVALID_VALUE &&
             GEMM(CUBLAS_OP_N, -1, M, M, A, C, M * N, 1,
                  CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_INVALID_VALUE,
         "cuBLAS accepted a bad lda, ldc or m");
  EXPECT(GEMM(CUBLAS_OP_N, M, M, M, A, C, M * N, 1, CUBLAS_COMPUTE_64F) ==
                 CUBLAS_STATUS_NOT_SUPPORTED &&
             GEMM(CUBLAS_OP_N, M, M, M, hA, C, M * N, 1,
                  CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_EXECUTION_FAILED &&
             GEMM(CUBLAS_OP_N, M, M, M, A, C, 0, 2, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_EXECUTION_FAILED &&
             GEMM(CUBLAS_OP_N, M, M, M, A, C + 1, M * N, 2,
                  CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_EXECUTION_FAILED,
         "cuBLAS accepted fp64 compute, host A, overlapping C batches or C "
         "past its allocation");
#undef GEMM
  /* 16-bit operands: fp32 compute only (no TF32 type), A and B of one type,
     C of theirs or fp32 (cuBLAS's table). */
#define GEMM16(at, bt, ct, compute)                                            \
  cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A,  \
                             at, M, 0, B, bt, K, N *K, &beta, C, ct, M, M *N,  \
                             1, compute, CUBLAS_GEMM_DEFAULT)
  EXPECT(GEMM16(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
                CUBLAS_COMPUTE_32F_FAST_TF32) == CUBLAS_STATUS_NOT_SUPPORTED &&
             GEMM16(CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_NOT_SUPPORTED &&
             GEMM16(CUDA_R_16F, CUDA_R_16F, CUDA_R_16BF, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_NOT_SUPPORTED &&
             GEMM16(CUDA_R_32F, CUDA_R_32F, CUDA_R_16BF, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_NOT_SUPPORTED &&
             GEMM16(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
                 CUBLAS_STATUS_SUCCESS,
         "cuBLAS's 16-bit type combinations");
#undef GEMM16
  EXPECT(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS &&
             cublasDestroy(h) == CUBLAS_STATUS_NOT_INITIALIZED,
         "cublasDestroy");

  /* cuDNN descriptors, output shapes, workspaces, CUDNN_CONVOLUTION. */
  cudnnHandle_t dnn = NULL;
  cudnnTensorDescriptor_t x = NULL, y = NULL;
  cudnnFilterDescriptor_t w = NULL;
  cudnnConvolutionDescriptor_t conv = NULL;
  ok = cudnnCreate(&dnn) == CUDNN_STATUS_SUCCESS &&
       cudnnSetStream(dnn, s) == CUDNN_STATUS_SUCCESS &&
       cudnnCreateTensorDescriptor(&x) == CUDNN_STATUS_SUCCESS &&
       cudnnCreateTensorDescriptor(&y) == CUDNN_STATUS_SUCCESS &&
       cudnnCreateFilterDescriptor(&w) == CUDNN_STATUS_SUCCESS &&
       cudnnCreateConvolutionDescriptor(&conv) == CUDNN_STATUS_SUCCESS;
  EXPECT(ok, "cuDNN set-up");
  EXPECT(cudnnSetTensor4dDescriptorEx(x, CUDNN_DATA_FLOAT, 1, 2, 4, 4, 32, 16,
                                      4, 0) == CUDNN_STATUS_BAD_PARAM &&
             cudnnSetTensor4dDescriptorEx(x, CUDNN_DATA_FLOAT, 0, 2, 4, 4, 32,
                                          16, 4, 1) == CUDNN_STATUS_BAD_PARAM &&
             cudnnSetConvolution2dDescriptor(conv, -1, 0, 1, 1, 1, 1,
                                             CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT) ==
                 CUDNN_STATUS_BAD_PARAM,
         "cuDNN accepted a zero stride or size, or a negative padding");
  /* X 1x2x4x4, W 3x2x3x3, pad 1: Y 1x3x4x4; a 1x3x3x3 Y does not fit. */
  float hx[32], hw[54], hy[48];
  for (int i = 0; i < 32; ++i)
    hx[i] = value(i, 60);
  for (int i = 0; i < 54; ++i)
    hw[i] = value(i, 61);
  float *dx = NULL, *dw = NULL, *dy = NULL;
  void *ws = NULL;
  cudaMalloc((void **)&dx, sizeof(hx));
  cudaMalloc((void **)&dw, sizeof(hw));
  cudaMalloc((void **)&dy, sizeof(hy));
  upload(dx, hx, sizeof(hx));
  upload(dw, hw, sizeof(hw));
  ok = cudnnSetTensor4dDescriptorEx(x, CUDNN_DATA_FLOAT, 1, 2, 4, 4, 32, 16, 4,
                                    1) == CUDNN_STATUS_SUCCESS &&
       cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2,
                                  3, 3) == CUDNN_STATUS_SUCCESS &&
       cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1,
                                       CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT) ==
           CUDNN_STATUS_SUCCESS &&
       cudnnSetTensor4dDescriptorEx(y, CUDNN_DATA_FLOAT, 1, 3, 3, 3, 27, 9, 3,
                                    1) == CUDNN_STATUS_SUCCESS;
  float one = 1.0f, zero = 0.0f;
  size_t bytes = 0;
  EXPECT(ok &&
             cudnnConvolutionForward(
                 dnn, &one, x, dx, w, dw, conv,
                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, y,
                 dy) == CUDNN_STATUS_BAD_PARAM,
         "cuDNN accepted a Y descriptor of the wrong shape");
  ok = cudnnSetTensor4dDescriptorEx(y, CUDNN_DATA_FLOAT, 1, 3, 4, 4, 48, 16, 4,
                                    1) == CUDNN_STATUS_SUCCESS &&
       cudnnGetConvolutionForwardWorkspaceSize(
           dnn, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &bytes) ==
           CUDNN_STATUS_SUCCESS &&
       bytes > 0 &&
       cudnnGetConvolutionForwardWorkspaceSize(
           dnn, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_FFT, &bytes) ==
           CUDNN_STATUS_NOT_SUPPORTED;
  EXPECT(ok && cudnnConvolutionForward(dnn, &one, x, dx, w, dw, conv,
                                       CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL,
                                       0, &zero, y,
                                       dy) == CUDNN_STATUS_BAD_PARAM,
         "cuDNN accepted a workspace smaller than it asked for");
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int returned = 0, found = 0;
  EXPECT(cudnnFindConvolutionForwardAlgorithmEx(dnn, x, dx, w, dw, conv, y, dy,
                                                8, &returned, perf, NULL,
                                                0) == CUDNN_STATUS_SUCCESS,
         "cudnnFindConvolutionForwardAlgorithmEx");
  for (int i = 0; i < returned; ++i)
    found |= perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory == 0;
  EXPECT(found, "FindEx without a workspace found no algorithm");
  ok = cudnnConvolutionForward(dnn, &one, x, dx, w, dw, conv,
                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, ws, 0,
                               &zero, y, dy) == CUDNN_STATUS_SUCCESS;
  download(hy, dy, sizeof(hy));
  for (int f = 0; f < 3; ++f) /* convolution: the filter flipped */
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double sum = 0;
        for (int c = 0; c < 2; ++c)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int r = i + kh - 1, q = j + kw - 1;
              if (r >= 0 && r < 4 && q >= 0 && q < 4)
                sum += (double)hx[c * 16 + r * 4 + q] *
                       hw[((f * 2 + c) * 3 + 2 - kh) * 3 + 2 - kw];
            }
        ok &= fabs(hy[f * 16 + i * 4 + j] - sum) <= 1e-5 * (fabs(sum) + 1);
      }
  EXPECT(ok, "CUDNN_CONVOLUTION (flipped filter)");
  /* X, W and Y of different types: cuDNN has no such configuration. */
  ok = cudnnSetTensor4dDescriptorEx(x, CUDNN_DATA_BFLOAT16, 1, 2, 4, 4, 32, 16,
                                    4, 1) == CUDNN_STATUS_SUCCESS;
  EXPECT(ok && cudnnConvolutionForward(dnn, &one, x, dx, w, dw, conv,
                                       CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                       ws, 0, &zero, y,
                                       dy) == CUDNN_STATUS_NOT_SUPPORTED,
         "cuDNN accepted a bf16 X with an fp32 filter");
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroy(dnn);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  (void)cudaGetLastError();
}

/* NCCL over MPI directly: a communicator of all ranks in reverse order, an
 * f16 average, a ring of sends in a group, and the argument checks. */
static void testNccl(void) {
  cudaStream_t s = soaprt_cuda_stream("test");
  ncclUniqueId id;
  if (gRank == gSize - 1)
    EXPECT(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, gSize - 1, MPI_COMM_WORLD);
  int me = gSize - 1 - gRank; /* reversed: the creator is member 0 */
  ncclComm_t comm = NULL;
  EXPECT(ncclCommInitRank(&comm, gSize, id, me) == ncclSuccess,
         "ncclCommInitRank");
  uint16_t h[4], want[4];
  for (int i = 0; i < 4; ++i) {
    h[i] = halfOfInt((me + 1) * (i + 1));
    want[i] = h[i];
  }
  float mean = 0;
  for (int m = 0; m < gSize; ++m)
    mean += (float)(m + 1);
  mean /= (float)gSize;
  for (int i = 0; i < 4; ++i) /* an exact half when it is an integer */
    want[i] = halfOfInt((int)(mean * (float)(i + 1)));
  uint16_t *d = NULL;
  cudaMalloc((void **)&d, sizeof(h));
  upload(d, h, sizeof(h));
  EXPECT(ncclAllReduce(d, d, 4, ncclFloat16, ncclAvg, comm, s) == ncclSuccess,
         "ncclAllReduce f16 avg");
  download(h, d, sizeof(h));
  if (gSize % 2 == 1) /* the mean of 1..n is an integer */
    EXPECT(!memcmp(h, want, sizeof(h)), "ncclAllReduce f16 avg values");
  int32_t out = me, in = -1;
  int32_t *dOut = NULL, *dIn = NULL;
  cudaMalloc((void **)&dOut, 4);
  cudaMalloc((void **)&dIn, 4);
  upload(dOut, &out, 4);
  upload(dIn, &in, 4);
  int ok = ncclGroupStart() == ncclSuccess &&
           ncclSend(dOut, 1, ncclInt32, (me + 1) % gSize, comm, s) ==
               ncclSuccess &&
           ncclRecv(dIn, 1, ncclInt32, (me + gSize - 1) % gSize, comm, s) ==
               ncclSuccess &&
           ncclGroupEnd() == ncclSuccess;
  download(&in, dIn, 4);
  EXPECT(ok && in == (me + gSize - 1) % gSize, "ncclSend/ncclRecv ring: %d",
         (int)in);
  soaprt_emu_options.quiet = 1;
  char host[8];
  EXPECT(ncclAllReduce(host, host, 2, ncclFloat32, ncclSum, comm, s) ==
                 ncclInvalidArgument &&
             ncclSend(dOut, 4, ncclInt32, 0, comm, s) == ncclInvalidArgument &&
             ncclSend(dOut, 1, ncclInt32, gSize, comm, s) ==
                 ncclInvalidArgument &&
             ncclGroupEnd() == ncclInvalidUsage &&
             strlen(ncclGetLastError(comm)) > 0,
         "NCCL accepted host memory, a buffer overrun, a bad peer or a "
         "stray ncclGroupEnd");
  soaprt_emu_options.quiet = 0;
  EXPECT(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
  cudaFree(d);
  cudaFree(dOut);
  cudaFree(dIn);
}

int main(int argc, char **argv) {
  if (soaprt_init(&argc, &argv) != 0)
    return 1;
  gRank = (int)soaprt_rank();
  gSize = (int)soaprt_size();
  testInputsAndConstants();
  testMatmuls();
  testHalfMatmuls();
  testConvolutions();
  testHalfConvolutions();
  testCopies();
  testTransfers();
  testAllReduces();
  testAsyncCommunication();
  testAllReduceBucket();
  testManyPending();
  testPeak();
  soaprt_emu_options.quiet = 1; /* expected failures: no noise */
  testStrictCudaRuntime();
  testStrictLibraries();
  soaprt_emu_options.quiet = 0;
  testNccl();
  soaprt_device_synchronize();
  int failures = 0;
  MPI_Allreduce(&gFailures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  /* (testStrictCudaRuntime reset the pool's high-water mark) */
  int64_t peak = soaprt_device_peak_bytes();
  soaprt_finalize();
  EXPECT(soaprt_device_peak_bytes() == peak, "peak after soaprt_finalize");
  if (gFailures || failures) {
    fprintf(stderr, "cuda_emu_runtime_test: [rank %d] %d of %d checks failed\n",
            gRank, gFailures, gChecks);
    return 1;
  }
  if (gRank == 0)
    printf("cuda_emu_runtime_test: all %d checks passed on %d rank%s (peak "
           "device memory %.1f MiB)\n",
           gChecks, gSize, gSize == 1 ? "" : "s", (double)gPeak / 1048576.0);
  return 0;
}
