/*===- cuda_smoke_model.c - A hand-written "compiled model" for libsoaprt_cuda
 *
 * Defines the soap_* entry points as soapc's output would (one device, one
 * input, ten results) and calls the CUDA runtime the way compiled code
 * does: modules recorded from a global constructor (PTX for the JIT and an
 * sm_90 cubin), kernel launches through the mgpu* ABI, memref alloc/free,
 * inputs and constants, strided memrefCopy, cuBLAS matmuls in every layout
 * case (in place with op N / op T, C in either layout, packed operands, a
 * broadcast batch, TF32), cuDNN convolutions (strided Y, packed-on-the-fly
 * W, stride and dilation 2) and their filter and input gradients,
 * mgpuMemset32/mgpuMemcpy and bind_output of strided device views. Each result is checked against a host reference;
 * the run ends with "soaprt-cuda-smoke: all N checks passed" or fails.
 *
 * Linked like a soapc executable (mpicc, libsoaprt_main.a,
 * libsoaprt_cuda.a, SOAP_CUDA_RUNTIME_LINK). Without a GPU, soaprt_init must
 * print "no CUDA GPU available" and exit with status 1 (run-cuda-no-gpu.sh).
 * On a GPU: mpirun -np 1 soaprt-cuda-smoke --output-dir=DIR
 *
 *===----------------------------------------------------------------------===*/

#include "soap/Runtime/soaprt_cuda.h"
#include "soaprt_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_smoke_kernels.h"
#include "runtime_test_views.h"

int64_t soap_num_devices(void) { return 1; }
int64_t soap_num_inputs(void) { return 1; }
int64_t soap_num_outputs(void) { return 10; }

/* ----------------------------------------------------------------- data */

#define N_IN 24 /* input 0: 2 x 3 x 4 */
static float gInput[N_IN];

static float gB[2 * 5 * 4];     /* stored 2 x 5 x 4: B = its transpose */
static float gBb[4 * 5];        /* 1 x 4 x 5, row-major (broadcast) */
static float gX[2 * 3 * 6 * 6]; /* conv input */
static float gW[4 * 5 * 3 * 3]; /* conv filters, 5 channels stored */

static void fillConstants(void) {
  for (int i = 0; i < 2 * 5 * 4; ++i)
    gB[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < 4 * 5; ++i)
    gBb[i] = (float)((i * 5) % 13) / 13.0f - 0.4f;
  for (int i = 0; i < 2 * 3 * 6 * 6; ++i)
    gX[i] = (float)((i * 3) % 17) / 17.0f - 0.5f;
  for (int i = 0; i < 4 * 5 * 3 * 3; ++i)
    gW[i] = (float)((i * 11) % 19) / 19.0f - 0.5f;
}

void soap_setup(void) {
  view_t v;
  int64_t sizes[3] = {2, 3, 4}, strides[3] = {12, 4, 1};
  soaprt_bind_input(0, mk(&v, gInput, 0, 3, sizes, strides), SOAPRT_F32);
}

/* ---------------------------------------------------------------- modules */

static void *gPtxModule, *gCubinModule;

/* As the gpu.binary translation: from a global constructor, before main. */
__attribute__((constructor)) static void loadModules(void) {
  gPtxModule = mgpuModuleLoadJIT((void *)(uintptr_t)kSmokePtx, 2);
  gCubinModule =
      mgpuModuleLoad((void *)(uintptr_t)kSmokeCubin, sizeof(kSmokeCubin));
}

__attribute__((destructor)) static void unloadModules(void) {
  mgpuModuleUnload(gPtxModule);
  mgpuModuleUnload(gCubinModule);
}

static const char kKernelName[] = "soaprt_smoke_scale";

static void launchScale(void *module, float *in, float *out, int64_t n) {
  void *function = mgpuModuleGetFunction(module, kKernelName);
  void *stream = mgpuStreamCreate();
  void *params[3] = {&in, &out, &n};
  mgpuLaunchKernel(function, (n + 31) / 32, 1, 1, 32, 1, 1, 0, stream, params,
                   NULL, 3);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
}

/* ----------------------------------------------------------------- checks */

static int gChecks = 0, gFailures = 0;

static void expectNear(const char *what, const float *got, const double *want,
                       const double *scale, int64_t n, double tolerance) {
  ++gChecks;
  for (int64_t i = 0; i < n; ++i) {
    double bound = tolerance * (scale ? scale[i] : fabs(want[i])) + 1e-6;
    if (!(fabs((double)got[i] - want[i]) <= bound)) {
      fprintf(stderr,
              "soaprt-cuda-smoke: %s: element %lld is %.7g, expected "
              "%.7g\n",
              what, (long long)i, (double)got[i], want[i]);
      ++gFailures;
      return;
    }
  }
}

static const float *output(int64_t index) {
  return (const float *)soaprt_output_binding(index)->data;
}

/* C[b][m][n] = sum_k A[b][m][k] * B(b, k, n), with scale = sum |terms|. */
static void referenceMatmul(const float *a, int64_t aK, int64_t aRow, int64_t K,
                            double (*b)(int64_t, int64_t, int64_t),
                            double *want, double *scale) {
  for (int64_t bb = 0; bb < 2; ++bb)
    for (int64_t m = 0; m < 3; ++m)
      for (int64_t n = 0; n < 5; ++n) {
        double sum = 0, abs = 0;
        for (int64_t k = 0; k < K; ++k) {
          double t = (double)a[bb * 12 + m * aRow + k * aK] * b(bb, k, n);
          sum += t;
          abs += fabs(t);
        }
        want[bb * 15 + m * 5 + n] = sum;
        scale[bb * 15 + m * 5 + n] = abs;
      }
}
static double bTransposed(int64_t b, int64_t k, int64_t n) {
  return gB[b * 20 + n * 4 + k];
}
static double bBroadcast(int64_t b, int64_t k, int64_t n) {
  (void)b;
  return gBb[k * 5 + n];
}

/* ------------------------------------------------------------------- main */

void soap_main(void) {
  static int iteration = 0;
  if (iteration == 0)
    fillConstants();
  const float *hostIn = (const float *)soaprt_input_binding(0)->data;
  float *x = (float *)(intptr_t)soaprt_cuda_input(0);
  void *stream = mgpuStreamCreate();
  view_t v1, v2, v3;

  /* 1. Kernels: PTX (JIT) then cubin: y2 = 2 (2 x + 1) + 1. */
  float *y1 = (float *)_mlir_memref_to_llvm_alloc(N_IN * 4);
  float *y2 = (float *)_mlir_memref_to_llvm_alloc(N_IN * 4);
  launchScale(gPtxModule, x, y1, N_IN);
  launchScale(gCubinModule, y1, y2, N_IN);
  {
    int64_t sizes[1] = {N_IN}, strides[1] = {1};
    soaprt_bind_output(0, mk(&v1, y2, 0, 1, sizes, strides), SOAPRT_F32);
    double want[N_IN];
    for (int i = 0; i < N_IN; ++i)
      want[i] = 2.0 * (2.0 * hostIn[i] + 1.0) + 1.0;
    expectNear("kernels (PTX, cubin)", output(0), want, NULL, N_IN, 1e-6);
  }
  /* mgpuMemcpy to the host, then mgpuStreamSynchronize: host reads it. */
  {
    float host[N_IN];
    mgpuMemcpy(host, y1, sizeof(host), stream);
    mgpuStreamSynchronize(stream);
    double want[N_IN];
    for (int i = 0; i < N_IN; ++i)
      want[i] = 2.0 * hostIn[i] + 1.0;
    expectNear("mgpuMemcpy to host", host, want, NULL, N_IN, 1e-6);
  }

  /* 2. Matmuls: A = input (2x3x4, row layout). */
  int64_t aSizes[3] = {2, 3, 4}, aStrides[3] = {12, 4, 1};
  float *bDev = (float *)(intptr_t)soaprt_cuda_constant((int64_t)(intptr_t)gB,
                                                        (int64_t)sizeof(gB));
  float *bbDev = (float *)(intptr_t)soaprt_cuda_constant((int64_t)(intptr_t)gBb,
                                                         (int64_t)sizeof(gBb));
  int64_t bSizes[3] = {2, 4, 5}, bStrides[3] = {20, 1, 4}; /* col layout */
  int64_t cSizes[3] = {2, 3, 5}, cRow[3] = {15, 5, 1}, cCol[3] = {15, 1, 3};
  double want[2 * 3 * 5], scale[2 * 3 * 5];
  float *c = (float *)_mlir_memref_to_llvm_alloc(30 * 4);
  /* C in row layout (C^T = B^T A^T), B op T, A op N. */
  mgpuMemset32(c, 0, 30, stream);
  _mlir_ciface_soaprt_cuda_matmul_f32(
      mk(&v1, x, 0, 3, aSizes, aStrides), mk(&v2, bDev, 0, 3, bSizes, bStrides),
      mk(&v3, c, 0, 3, cSizes, cRow), 0, "matmul row C");
  soaprt_bind_output(1, &v3.ref, SOAPRT_F32);
  referenceMatmul(hostIn, 1, 4, 4, bTransposed, want, scale);
  expectNear("matmul, C row-major", output(1), want, scale, 30, 1e-5);
  /* C in col layout (C = A B): accumulates onto 1.0 (beta = 1). */
  uint32_t one;
  float oneF = 1.0f;
  memcpy(&one, &oneF, 4);
  mgpuMemset32(c, one, 30, stream);
  _mlir_ciface_soaprt_cuda_matmul_f32(
      mk(&v1, x, 0, 3, aSizes, aStrides), mk(&v2, bDev, 0, 3, bSizes, bStrides),
      mk(&v3, c, 0, 3, cSizes, cCol), 0, "matmul col C");
  soaprt_bind_output(2, &v3.ref, SOAPRT_F32);
  for (int i = 0; i < 30; ++i)
    want[i] += 1.0, scale[i] += 1.0;
  expectNear("matmul, C column-major, beta 1", output(2), want, scale, 30,
             1e-5);
  /* A packed (no unit stride: columns 0 and 2, K = 2), B: its first two
     rows. */
  {
    int64_t a2Sizes[3] = {2, 3, 2}, a2Strides[3] = {12, 4, 2};
    int64_t b2Sizes[3] = {2, 2, 5};
    mgpuMemset32(c, 0, 30, stream);
    _mlir_ciface_soaprt_cuda_matmul_f32(mk(&v1, x, 0, 3, a2Sizes, a2Strides),
                                        mk(&v2, bDev, 0, 3, b2Sizes, bStrides),
                                        mk(&v3, c, 0, 3, cSizes, cRow), 0,
                                        "matmul packed A");
    soaprt_bind_output(3, &v3.ref, SOAPRT_F32);
    referenceMatmul(hostIn, 2, 4, 2, bTransposed, want, scale);
    expectNear("matmul, packed A", output(3), want, scale, 30, 1e-5);
  }
  /* Broadcast B (batch 1), TF32 allowed. */
  {
    int64_t bbSizes[3] = {1, 4, 5}, bbStrides[3] = {20, 5, 1};
    mgpuMemset32(c, 0, 30, stream);
    _mlir_ciface_soaprt_cuda_matmul_f32(
        mk(&v1, x, 0, 3, aSizes, aStrides),
        mk(&v2, bbDev, 0, 3, bbSizes, bbStrides),
        mk(&v3, c, 0, 3, cSizes, cRow), SOAPRT_CUDA_ALLOW_TF32,
        "matmul tf32 broadcast");
    soaprt_bind_output(4, &v3.ref, SOAPRT_F32);
    referenceMatmul(hostIn, 1, 4, 4, bBroadcast, want, scale);
    expectNear("matmul, broadcast B, TF32", output(4), want, scale, 30, 4e-3);
  }

  /* 3. Convolutions. X 2x3x6x6 (constant), W = channels 0..2 of 4x5x3x3
     (not packed), Y = channels 1..4 of a 2x6x4x4 buffer (strided). */
  float *xDev = (float *)(intptr_t)soaprt_cuda_constant((int64_t)(intptr_t)gX,
                                                        (int64_t)sizeof(gX));
  float *wDev = (float *)(intptr_t)soaprt_cuda_constant((int64_t)(intptr_t)gW,
                                                        (int64_t)sizeof(gW));
  float *yBuf = (float *)_mlir_memref_to_llvm_alloc(2 * 6 * 16 * 4);
  mgpuMemset32(yBuf, one, 2 * 6 * 16, stream);
  int64_t xSizes[4] = {2, 3, 6, 6}, xStrides[4] = {108, 36, 6, 1};
  int64_t wSizes[4] = {4, 3, 3, 3}, wStrides[4] = {45, 9, 3, 1};
  int64_t ySizes[4] = {2, 4, 4, 4}, yStrides[4] = {96, 16, 4, 1};
  _mlir_ciface_soaprt_cuda_conv2d_f32(mk(&v1, xDev, 0, 4, xSizes, xStrides),
                                      mk(&v2, wDev, 0, 4, wSizes, wStrides),
                                      mk(&v3, yBuf, 16, 4, ySizes, yStrides), 1,
                                      1, 1, 1, 0, 0, 1, 0, "conv strided Y");
  soaprt_bind_output(5, &v3.ref, SOAPRT_F32);
  {
    double cw[2 * 4 * 4 * 4], cs[2 * 4 * 4 * 4];
    for (int n = 0; n < 2; ++n)
      for (int f = 0; f < 4; ++f)
        for (int oh = 0; oh < 4; ++oh)
          for (int ow = 0; ow < 4; ++ow) {
            double sum = 1.0, abs = 1.0;
            for (int ch = 0; ch < 3; ++ch)
              for (int kh = 0; kh < 3; ++kh)
                for (int kw = 0; kw < 3; ++kw) {
                  double t =
                      (double)gX[n * 108 + ch * 36 + (oh + kh) * 6 + ow + kw] *
                      gW[f * 45 + ch * 9 + kh * 3 + kw];
                  sum += t;
                  abs += fabs(t);
                }
            int i = ((n * 4 + f) * 4 + oh) * 4 + ow;
            cw[i] = sum;
            cs[i] = abs;
          }
    expectNear("conv2d, strided Y, unpacked W", output(5), cw, cs, 128, 1e-5);
  }
  /* Stride 2, dilation 2: OH = OW = (6 - 5) / 2 + 1 = 1. */
  {
    float *y2d = (float *)_mlir_memref_to_llvm_alloc(2 * 4 * 4);
    mgpuMemset32(y2d, 0, 8, stream);
    int64_t y2Sizes[4] = {2, 4, 1, 1}, y2Strides[4] = {4, 1, 1, 1};
    _mlir_ciface_soaprt_cuda_conv2d_f32(mk(&v1, xDev, 0, 4, xSizes, xStrides),
                                        mk(&v2, wDev, 0, 4, wSizes, wStrides),
                                        mk(&v3, y2d, 0, 4, y2Sizes, y2Strides),
                                        2, 2, 2, 2, 0, 0, 1, 0,
                                        "conv stride 2 dilation 2");
    soaprt_bind_output(6, &v3.ref, SOAPRT_F32);
    double cw[8], cs[8];
    for (int n = 0; n < 2; ++n)
      for (int f = 0; f < 4; ++f) {
        double sum = 0, abs = 0;
        for (int ch = 0; ch < 3; ++ch)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              double t = (double)gX[n * 108 + ch * 36 + 2 * kh * 6 + 2 * kw] *
                         gW[f * 45 + ch * 9 + kh * 3 + kw];
              sum += t;
              abs += fabs(t);
            }
        cw[n * 4 + f] = sum;
        cs[n * 4 + f] = abs;
      }
    expectNear("conv2d, stride and dilation 2", output(6), cw, cs, 8, 1e-5);
    _mlir_memref_to_llvm_free(y2d);
  }

  /* Filter gradient (cudnnConvolutionBackwardFilter): dW 3x3x3x3 from X and
     dY = the top-left 4x4 crop of X's channels (a strided view). */
  {
    float *dw = (float *)_mlir_memref_to_llvm_alloc(81 * 4);
    int64_t dySizes[4] = {2, 3, 4, 4}, dwSizes[4] = {3, 3, 3, 3},
            dwStrides[4] = {27, 9, 3, 1};
    _mlir_ciface_soaprt_cuda_conv2d_filter_grad_f32(
        mk(&v1, xDev, 0, 4, xSizes, xStrides),
        mk(&v2, xDev, 0, 4, dySizes, xStrides),
        mk(&v3, dw, 0, 4, dwSizes, dwStrides), 1, 1, 1, 1, 0, 0, 1,
        SOAPRT_CUDA_OVERWRITE, "conv2d filter gradient");
    soaprt_bind_output(8, &v3.ref, SOAPRT_F32);
    double gw[81], gs[81];
    for (int f = 0; f < 3; ++f)
      for (int ch = 0; ch < 3; ++ch)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            double sum = 0, abs = 0;
            for (int n = 0; n < 2; ++n)
              for (int oh = 0; oh < 4; ++oh)
                for (int ow = 0; ow < 4; ++ow) {
                  double t =
                      (double)gX[n * 108 + ch * 36 + (oh + kh) * 6 + ow + kw] *
                      gX[n * 108 + f * 36 + oh * 6 + ow];
                  sum += t;
                  abs += fabs(t);
                }
            gw[((f * 3 + ch) * 3 + kh) * 3 + kw] = sum;
            gs[((f * 3 + ch) * 3 + kh) * 3 + kw] = abs;
          }
    expectNear("conv2d filter gradient", output(8), gw, gs, 81, 1e-5);
    _mlir_memref_to_llvm_free(dw);
  }

  /* Input gradient (cudnnConvolutionBackwardData) of a stride-2 conv padded
     by 1: dX 2x3x6x6 from W (F = 3 of the unpacked filters) and dY = the
     top-left 3x3 crop of X's channels (OH = (6 + 2 - 3) / 2 + 1 = 3). */
  {
    float *dx = (float *)_mlir_memref_to_llvm_alloc(216 * 4);
    int64_t dySizes[4] = {2, 3, 3, 3}, w3Sizes[4] = {3, 3, 3, 3};
    _mlir_ciface_soaprt_cuda_conv2d_input_grad_f32(
        mk(&v1, wDev, 0, 4, w3Sizes, wStrides),
        mk(&v2, xDev, 0, 4, dySizes, xStrides),
        mk(&v3, dx, 0, 4, xSizes, xStrides), 2, 2, 1, 1, 1, 1, 1,
        SOAPRT_CUDA_OVERWRITE, "conv2d input gradient");
    soaprt_bind_output(9, &v3.ref, SOAPRT_F32);
    double gx[216], gs[216];
    for (int i = 0; i < 216; ++i)
      gx[i] = gs[i] = 0;
    for (int n = 0; n < 2; ++n)
      for (int f = 0; f < 3; ++f)
        for (int oh = 0; oh < 3; ++oh)
          for (int ow = 0; ow < 3; ++ow)
            for (int ch = 0; ch < 3; ++ch)
              for (int kh = 0; kh < 3; ++kh)
                for (int kw = 0; kw < 3; ++kw) {
                  int r = oh * 2 + kh - 1, q = ow * 2 + kw - 1;
                  if (r < 0 || r >= 6 || q < 0 || q >= 6)
                    continue;
                  double t = (double)gX[n * 108 + f * 36 + oh * 6 + ow] *
                             gW[f * 45 + ch * 9 + kh * 3 + kw];
                  gx[n * 108 + ch * 36 + r * 6 + q] += t;
                  gs[n * 108 + ch * 36 + r * 6 + q] += fabs(t);
                }
    for (int i = 0; i < 216; ++i)
      gs[i] += 1e-30;
    expectNear("conv2d input gradient", output(9), gx, gs, 216, 1e-5);
    _mlir_memref_to_llvm_free(dx);
  }

  /* 4. memrefCopy of a transposed view (2x4x3 of the input) into a buffer,
     then communication no-ops of a one-rank run. */
  {
    float *t = (float *)_mlir_memref_to_llvm_alloc(N_IN * 4);
    int64_t sizes[3] = {2, 4, 3}, srcStrides[3] = {12, 1, 4},
            dstStrides[3] = {12, 3, 1};
    memrefCopy(4, mk(&v1, x, 0, 3, sizes, srcStrides),
               mk(&v2, t, 0, 3, sizes, dstStrides));
    int64_t devices[1] = {0}, dSizes[1] = {1}, dStrides[1] = {1};
    soaprt_all_reduce(&v2.ref, SOAPRT_F32, SOAPRT_SUM,
                      mk(&v3, devices, 0, 1, dSizes, dStrides));
    soaprt_transfer(&v2.ref, SOAPRT_F32, 0, 0);
    soaprt_bind_output(7, &v2.ref, SOAPRT_F32);
    double wantT[N_IN];
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k)
        for (int m = 0; m < 3; ++m)
          wantT[b * 12 + k * 3 + m] = hostIn[b * 12 + m * 4 + k];
    expectNear("memrefCopy, transposed view", output(7), wantT, NULL, N_IN,
               0.0);
    _mlir_memref_to_llvm_free(t);
  }

  _mlir_memref_to_llvm_free(yBuf);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(y1);
  _mlir_memref_to_llvm_free(y2);
  mgpuStreamDestroy(stream);
  if (gFailures)
    soaprt_fatal("soaprt-cuda-smoke: %d of %d checks failed", gFailures,
                 gChecks);
  if (iteration++ == 0)
    printf("soaprt-cuda-smoke: all %d checks passed\n", gChecks);
  gChecks = 0;
}
