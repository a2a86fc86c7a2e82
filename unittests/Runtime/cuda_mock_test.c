/*===- cuda_mock_test.c - libsoaprt_cuda's layout logic, without a GPU -----===*
 *
 * Links soaprt_cuda_copy.c, soaprt_cuda_blas.c, soaprt_cuda_dnn.c and
 * soaprt_cuda_mgpu.c (and soaprt.c's CPU build for the view helpers)
 * against the host emulation of the CUDA runtime, cuBLAS and cuDNN
 * (lib/Runtime/emulation: the libraries' semantics and argument rules,
 * column-major GEMM with lda/ldb/ldc bounds, cudaMemcpy2D pitch rules, NCHW
 * tensors with strides, and bounds checks on every device buffer), with
 * stand-ins for soaprt_cuda.c (no MPI). This checks the strided copies (dim
 * merging, 2-D copies, fallbacks; host and device memory on either side),
 * the GEMM formulation (transposes, leading dimensions, packed operands,
 * broadcast batches) and the convolution plans (strides, packed W, the
 * packed X/Y fallback, awkward algorithm lists) on random views against
 * host references, the mgpu layer (modules recorded before main and loaded
 * once on first use, functions cached, launches, memset patterns), and that
 * every temporary is freed. The emulation's counters (soaprt_emu_stats)
 * stand in for instrumentation of the libraries.
 *
 *===----------------------------------------------------------------------===*/

#include "emulation/cuda_emulation.h"
#include "runtime_test_views.h"
#include "soaprt_cuda_internal.h"

#include <cublas_v2.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ soaprt_cuda.c stand-ins */

soaprt_cuda_state_t soaprt_cuda;
static cudaStream_t gStream; /* created by main() */

cudaStream_t soaprt_cuda_stream(const char *op) {
  (void)op;
  return gStream;
}
void soaprt_cuda_fail(const char *call, const char *op, const char *detail) {
  soaprt_fatal("%s failed in %s: %s", call, op, detail);
}
void soaprt_cuda_check(cudaError_t e, const char *call, const char *op) {
  if (e != cudaSuccess)
    soaprt_fatal("%s failed in %s: %s", call, op, cudaGetErrorString(e));
}
void soaprt_cuda_sync(const char *op) {
  soaprt_cuda_check(cudaStreamSynchronize(gStream), "cudaStreamSynchronize",
                    op);
}
int soaprt_cuda_is_device_pointer(const void *ptr) {
  return soaprt_emu_memory_kind(ptr) != SOAPRT_EMU_HOST;
}
void soaprt_cuda_after_call(const char *op) { (void)op; }
void *soaprt_cuda_try_alloc(size_t bytes, const char *op) {
  void *ptr = NULL;
  soaprt_cuda_check(cudaMallocAsync(&ptr, bytes ? bytes : 1, gStream),
                    "cudaMallocAsync", op);
  return ptr;
}
void *soaprt_cuda_alloc(size_t bytes, const char *op) {
  return soaprt_cuda_try_alloc(bytes, op);
}
void soaprt_cuda_free(void *ptr, const char *op) {
  if (ptr)
    soaprt_cuda_check(cudaFreeAsync(ptr, gStream), "cudaFreeAsync", op);
}

/* Device memory for the tests' operands. */
static void *deviceAlloc(size_t bytes) {
  void *ptr = NULL;
  soaprt_cuda_check(cudaMalloc(&ptr, bytes), "cudaMalloc", "test");
  return ptr;
}
static void deviceFree(void *ptr) {
  soaprt_cuda_check(cudaFree(ptr), "cudaFree", "test");
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
    /* Either side in host or device memory (the emulation's device memory
       is host memory the test may read directly). */
    int srcOnDevice = rnd(2), dstOnDevice = rnd(2);
    float *src = srcOnDevice ? (float *)deviceAlloc((size_t)se * 4)
                             : (float *)malloc((size_t)se * 4);
    float *dst = dstOnDevice ? (float *)deviceAlloc((size_t)de * 4)
                             : (float *)malloc((size_t)de * 4);
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
    if (srcOnDevice)
      deviceFree(src);
    else
      free(src);
    if (dstOnDevice)
      deviceFree(dst);
    else
      free(dst);
  }
  /* Contiguous views and a subview of rows: one copy call each. */
  soaprt_cuda.maxPitch = 1u << 30;
  float a[4 * 6 * 8], b[4 * 6 * 8];
  int64_t sizes[3] = {4, 6, 8}, packed[3] = {48, 8, 1};
  long calls = soaprt_emu_stats.copyCalls;
  soaprt_cuda_copy((char *)b, packed, (const char *)a, packed, sizes, 3, 4,
                   "c");
  calls = soaprt_emu_stats.copyCalls - calls;
  CHECK(calls == 1, "contiguous copy took %ld calls", calls);
  int64_t half[3] = {4, 6, 4};
  calls = soaprt_emu_stats.copyCalls;
  soaprt_cuda_copy((char *)b, packed, (const char *)a, packed, half, 3, 4, "c");
  calls = soaprt_emu_stats.copyCalls - calls;
  CHECK(calls == 1, "row subview copy took %ld calls", calls);
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
  o->buffer = (float *)deviceAlloc((size_t)(extent + o->offset) * 4);
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
    soaprt_emu_stats.lastGemmCompute = -1;
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
      ok &= soaprt_emu_stats.lastGemmCompute ==
            (int)(flags ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
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
    deviceFree(A.buffer);
    deviceFree(Bm.buffer);
    deviceFree(C.buffer);
  }
}

static void testConvolutions(void) {
  for (int t = 0; t < 400; ++t) {
    /* cuDNN without algorithms for strided tensors; awkward search results
       (a failed fastest one, a TF32 one for strict fp32). */
    soaprt_emu_options.dnnPackedOnly = t % 3 == 2;
    soaprt_emu_options.dnnAdversarialFind = t % 4 == 1;
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
    float *x = (float *)deviceAlloc((size_t)xe * 4),
          *w = (float *)deviceAlloc((size_t)we * 4),
          *y = (float *)deviceAlloc((size_t)ye * 4);
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
        mk(&vy, y, 0, 4, ys, yst), sh, sw, dh, dw, ph, pw, 1, rnd(2),
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
          (long long)pw,
          soaprt_emu_options.dnnPackedOnly ? " (packed only)" : "");
    ++gTests;
    free(want);
    deviceFree(x);
    deviceFree(w);
    deviceFree(y);
  }
}

/* A PTX module with two kernels, and a "cubin": an ELF header whose
 * section table ends past a string table of kernel names (all the
 * emulation looks at). */
static const char kPtx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                           ".visible .entry kernel_a(\n.param .u64 p\n)\n{\n"
                           "ret;\n}\n.visible .entry kernel_b()\n{\nret;\n}\n";
static unsigned char gCubin[8192];
static void *gModuleA, *gModuleB;
__attribute__((constructor)) static void recordModules(void) {
  gModuleA = mgpuModuleLoadJIT((void *)(uintptr_t)kPtx, 3);
  /* Recorded only: the image is filled in before its first use. */
  gModuleB = mgpuModuleLoad(gCubin, sizeof(gCubin));
}

static void makeCubin(void) {
  static const unsigned char magic[4] = {0x7f, 'E', 'L', 'F'};
  memcpy(gCubin, magic, 4);
  size_t at = 64; /* after the header; each name NUL-terminated */
  at += (size_t)snprintf((char *)gCubin + at + 1, 32, "kernel_a") + 1;
  for (int i = 0; i < 600; ++i)
    at += (size_t)snprintf((char *)gCubin + at + 1, 32, "k%d", i) + 1;
  uint64_t shoff = at + 1;
  uint16_t shentsize = 64, shnum = 1;
  memcpy(gCubin + 0x28, &shoff, 8);
  memcpy(gCubin + 0x3a, &shentsize, 2);
  memcpy(gCubin + 0x3c, &shnum, 2);
}

static void testMgpu(void) {
  const soaprt_emu_stats_t *st = &soaprt_emu_stats;
  makeCubin();
  ++gTests;
  CHECK(st->libraryLoads == 0, "modules loaded before first use");
  static const char nameA[] = "kernel_a", nameB[] = "kernel_b";
  void *fa = mgpuModuleGetFunction(gModuleA, nameA);
  CHECK(st->libraryLoads == 1 && st->lastImage == kPtx &&
            st->lastJitOptions == 3,
        "PTX module load (%ld loads, %u options)", st->libraryLoads,
        st->lastJitOptions);
  void *fb = mgpuModuleGetFunction(gModuleA, nameB);
  void *fc = mgpuModuleGetFunction(gModuleB, nameA);
  CHECK(st->libraryLoads == 2 && st->lastImage == gCubin &&
            st->lastJitOptions == 0,
        "cubin module load");
  for (int i = 0; i < 1000; ++i) /* as the compiled code: before each launch */
    CHECK(mgpuModuleGetFunction(gModuleA, nameA) == fa &&
              mgpuModuleGetFunction(gModuleA, nameB) == fb &&
              mgpuModuleGetFunction(gModuleB, nameA) == fc,
          "function cache");
  CHECK(st->kernelLookups == 3 && fa != fb && fa != fc, "%ld kernel lookups",
        st->kernelLookups);
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
  CHECK(st->launches == 1 && st->lastGrid.x == 3 && st->lastGrid.y == 2 &&
            st->lastGrid.z == 1 && st->lastBlock.x == 128 &&
            st->lastArgs == args,
        "launch");
  mgpuLaunchKernel(fb, 0, 1, 1, 128, 1, 1, 0, stream, args, NULL, 2);
  CHECK(st->launches == 1, "an empty grid launched");
  mgpuLaunchKernel(fb, 1, 1, 1, 32, 1, 1, 100000, NULL, args, NULL, 2);
  CHECK(st->launches == 2 && st->lastSmem == 100000 &&
            st->lastMaxDynamicSmem == 100000,
        "large dynamic shared memory");
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);

  /* gpu.memset patterns: uniform bytes and doubling copies. */
  uint32_t *buf32 = (uint32_t *)deviceAlloc(72 * 4);
  uint16_t *buf16 = (uint16_t *)deviceAlloc(72 * 2);
  for (int count = 0; count < 70; ++count) {
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
  deviceFree(buf32);
  deviceFree(buf16);
  void *managed = mgpuMemAlloc(64, stream, true);
  void *pooled = mgpuMemAlloc(64, stream, false);
  struct cudaPointerAttributes attributes;
  CHECK(managed && pooled &&
            cudaPointerGetAttributes(&attributes, managed) == cudaSuccess &&
            attributes.type == cudaMemoryTypeManaged &&
            cudaPointerGetAttributes(&attributes, pooled) == cudaSuccess &&
            attributes.type == cudaMemoryTypeDevice,
        "mgpuMemAlloc");
  mgpuMemFree(pooled, stream);
  mgpuMemFree(managed, stream);
  soaprt_cuda_mgpu_finalize();
}

int main(void) {
  soaprt_cuda_check(cudaStreamCreateWithFlags(&gStream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags", "main");
  soaprt_cuda.initialized = 1;
  soaprt_cuda.stream = gStream;
  testMgpu();
  testCopies();
  testMatmuls();
  /* The same shapes twice: the second pass finds every plan cached. */
  gSeed = 777;
  testConvolutions();
  long before = soaprt_emu_stats.convFinds;
  gSeed = 777;
  testConvolutions();
  CHECK(soaprt_emu_stats.convFinds == before && before > 0,
        "cached plans were searched again (%ld searches, first pass %ld)",
        soaprt_emu_stats.convFinds - before, before);
  soaprt_cuda_blas_finalize();
  soaprt_cuda_dnn_finalize();
  CHECK(soaprt_emu_stats.liveAllocations == 0,
        "%ld device allocations leaked", soaprt_emu_stats.liveAllocations);
  soaprt_cuda_check(cudaStreamDestroy(gStream), "cudaStreamDestroy", "main");
  if (gFailures) {
    fprintf(stderr, "cuda_mock_test: %d of %d checks failed\n", gFailures,
            gTests);
    return 1;
  }
  printf("cuda_mock_test: all %d checks passed (%ld GEMMs, %ld "
         "convolutions, %ld copies on the emulation)\n",
         gTests, soaprt_emu_stats.gemms, soaprt_emu_stats.convForwards,
         soaprt_emu_stats.copyCalls);
  return 0;
}
