/*===- cudnn_host.c - Emulated cuDNN: descriptors, conv and its gradients ===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU.
 *
 * The legacy convolution API libsoaprt_cuda uses: fp32, f16 or bf16 4-D
 * tensors (X, W and Y of one type, fp32 compute: cuDNN's FLOAT,
 * PSEUDO_HALF and PSEUDO_BFLOAT16 configurations) with any positive
 * strides (cudnnSetTensor4dDescriptorEx), packed NCHW filters,
 * padding, strides, dilations, channel groups (cudnnSetConvolutionGroupCount:
 * filter k of K reads X channels [g w->c, (g+1) w->c), g = k / (K / G)),
 * cross-correlation or convolution (flipped filter), alpha and beta (beta =
 * 0: Y is not read). Computed in double, rounded once to the output's
 * type, for every math type.
 *
 * Algorithms: IMPLICIT_GEMM (no workspace), IMPLICIT_PRECOMP_GEMM (a small
 * index table) and GEMM (an im2col buffer of one image) are "supported";
 * the others report CUDNN_STATUS_NOT_SUPPORTED; the gradients (filter and
 * data) support ALGO_0 (no workspace) and ALGO_1. FindEx times nothing: it
 * lists the supported ones (those whose workspace fits) fastest first, then
 * the failures, and overwrites Y with NaN as the real search overwrites it
 * with trial results. soaprt_emu_options can make it refuse non-packed
 * tensors or list awkward results first (cuda_emulation.h).
 *
 * Strict as cuDNN on descriptors (CUDNN_STATUS_BAD_PARAM: sizes and strides
 * below 1, channel counts or output sizes that do not match), on workspaces
 * smaller than cudnnGetConvolutionForwardWorkspaceSize said, and where a GPU
 * would fault: X, W, Y and the workspace must lie in device memory, Y must
 * not overlap X or W (CUDNN_STATUS_EXECUTION_FAILED or _BAD_PARAM). The
 * reason is printed and kept for cudnnGetLastErrorString.
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <cudnn.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cudnnContext {
  cudaStream_t stream;
};
struct cudnnTensorStruct {
  int set;
  int n, c, h, w, ns, cs, hs, ws;
  soaprt_emu_float_t format;
};
struct cudnnFilterStruct {
  int set;
  int k, c, h, w;
  soaprt_emu_float_t format;
};

/* The emulation's format of a cuDNN data type; 0 if it has none. */
static int formatOf(cudnnDataType_t type, soaprt_emu_float_t *format) {
  switch (type) {
  case CUDNN_DATA_FLOAT:
    *format = SOAPRT_EMU_F32;
    return 1;
  case CUDNN_DATA_HALF:
    *format = SOAPRT_EMU_F16;
    return 1;
  case CUDNN_DATA_BFLOAT16:
    *format = SOAPRT_EMU_BF16;
    return 1;
  default:
    return 0;
  }
}
struct cudnnConvolutionStruct {
  int set;
  int ph, pw, sh, sw, dh, dw;
  int groups; /* 0 (never set) is 1 */
  cudnnConvolutionMode_t mode;
  cudnnMathType_t math;
};
static soaprt_emu_registry_t gObjects; /* handles and descriptors */
static char gLastError[512];

/* Keeps the reason for cudnnGetLastErrorString and returns `status`. */
static cudnnStatus_t fail(cudnnStatus_t status, const char *call,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static cudnnStatus_t fail(cudnnStatus_t status, const char *call,
                          const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(gLastError, sizeof(gLastError), fmt, args);
  va_end(args);
  soaprt_emu_diag(call, "%s", gLastError);
  return status;
}

static void *create(size_t bytes) {
  void *p = calloc(1, bytes);
  if (p && !soaprt_emu_registry_add(&gObjects, p)) {
    free(p);
    p = NULL;
  }
  return p;
}

static cudnnStatus_t destroy(void *p) {
  if (!soaprt_emu_registry_remove(&gObjects, p))
    return CUDNN_STATUS_BAD_PARAM;
  free(p);
  return CUDNN_STATUS_SUCCESS;
}

static int live(const void *p) {
  return soaprt_emu_registry_contains(&gObjects, p);
}

/* ------------------------------------------------------- handle, errors */

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  if (!handle)
    return CUDNN_STATUS_BAD_PARAM;
  if (soaprt_emu_need_device() != cudaSuccess)
    return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate", "no GPU");
  *handle = (cudnnHandle_t)create(sizeof(struct cudnnContext));
  return *handle ? CUDNN_STATUS_SUCCESS
                 : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) { return destroy(handle); }

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (!live(handle))
    return CUDNN_STATUS_BAD_PARAM;
  if (!soaprt_emu_stream_valid(stream))
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream",
                "stream %p was not created", (void *)stream);
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

const char *cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
  case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
  case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
  case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
  case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
  case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
  case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
    return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
  default: return "CUDNN_STATUS_INTERNAL_ERROR";
  }
}

void cudnnGetLastErrorString(char *message, size_t max) {
  if (!message || max == 0)
    return;
  snprintf(message, max, "%s", gLastError);
  gLastError[0] = 0;
}

/* ---------------------------------------------------------- descriptors */

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) {
  if (!d)
    return CUDNN_STATUS_BAD_PARAM;
  *d = (cudnnTensorDescriptor_t)create(sizeof(struct cudnnTensorStruct));
  return *d ? CUDNN_STATUS_SUCCESS
            : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  return destroy(d);
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) {
  if (!d)
    return CUDNN_STATUS_BAD_PARAM;
  *d = (cudnnFilterDescriptor_t)create(sizeof(struct cudnnFilterStruct));
  return *d ? CUDNN_STATUS_SUCCESS
            : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  return destroy(d);
}

cudnnStatus_t
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  if (!d)
    return CUDNN_STATUS_BAD_PARAM;
  *d = (cudnnConvolutionDescriptor_t)create(
      sizeof(struct cudnnConvolutionStruct));
  return *d ? CUDNN_STATUS_SUCCESS
            : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}
cudnnStatus_t
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return destroy(d);
}

/* Elements from the first to one past the last of a tensor. */
static long long tensorExtent(const struct cudnnTensorStruct *t) {
  return (long long)(t->n - 1) * t->ns + (long long)(t->c - 1) * t->cs +
         (long long)(t->h - 1) * t->hs + (long long)(t->w - 1) * t->ws + 1;
}

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d,
                                           cudnnDataType_t type, int n, int c,
                                           int h, int w, int ns, int cs,
                                           int hs, int ws) {
  const char *call = "cudnnSetTensor4dDescriptorEx";
  if (!live(d))
    return CUDNN_STATUS_BAD_PARAM;
  if (n < 1 || c < 1 || h < 1 || w < 1 || ns < 1 || cs < 1 || hs < 1 ||
      ws < 1)
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "sizes %dx%dx%dx%d and strides %d,%d,%d,%d must be positive",
                n, c, h, w, ns, cs, hs, ws);
  soaprt_emu_float_t format;
  if (!formatOf(type, &format))
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "data type %d: the emulation does fp32, f16 and bf16 only",
                (int)type);
  struct cudnnTensorStruct t = {1, n, c, h, w, ns, cs, hs, ws, format};
  if (tensorExtent(&t) > INT_MAX)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "a tensor of 2^31 elements or more");
  *d = t;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d,
                                         cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k,
                                         int c, int h, int w) {
  const char *call = "cudnnSetFilter4dDescriptor";
  if (!live(d))
    return CUDNN_STATUS_BAD_PARAM;
  if (k < 1 || c < 1 || h < 1 || w < 1)
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "sizes %dx%dx%dx%d must be positive", k, c, h, w);
  soaprt_emu_float_t elements;
  if (!formatOf(type, &elements) || format != CUDNN_TENSOR_NCHW)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "type %d, format %d: the emulation does packed NCHW fp32, "
                "f16 and bf16 only",
                (int)type, (int)format);
  struct cudnnFilterStruct f = {1, k, c, h, w, elements};
  *d = f;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d,
                                              int ph, int pw, int sh, int sw,
                                              int dh, int dw,
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t type) {
  const char *call = "cudnnSetConvolution2dDescriptor";
  if (!live(d))
    return CUDNN_STATUS_BAD_PARAM;
  if (ph < 0 || pw < 0 || sh < 1 || sw < 1 || dh < 1 || dw < 1 ||
      (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION))
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "padding %dx%d, strides %dx%d, dilations %dx%d, mode %d", ph,
                pw, sh, sw, dh, dw, (int)mode);
  if (type != CUDNN_DATA_FLOAT)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "compute type %d: the emulation does fp32 only", (int)type);
  d->set = 1;
  d->ph = ph;
  d->pw = pw;
  d->sh = sh;
  d->sw = sw;
  d->dh = dh;
  d->dw = dw;
  d->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d,
                                            int groups) {
  if (!live(d) || groups < 1)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionGroupCount",
                "group count %d", groups);
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

/* Channel groups of a convolution. */
static int groupsOf(const struct cudnnConvolutionStruct *d) {
  return d->groups > 0 ? d->groups : 1;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t math) {
  if (!live(d) || (unsigned)math > (unsigned)CUDNN_FMA_MATH)
    return CUDNN_STATUS_BAD_PARAM;
  d->math = math;
  return CUDNN_STATUS_SUCCESS;
}

/* One output size, or 0 if the window does not fit. */
static int outputSize(int in, int pad, int filter, int dilation, int stride) {
  long long span = (long long)dilation * (filter - 1) + 1;
  long long room = (long long)in + 2LL * pad - span;
  return room < 0 ? 0 : (int)(room / stride + 1);
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, int *n, int *c, int *h, int *wd) {
  const char *call = "cudnnGetConvolution2dForwardOutputDim";
  if (!live(conv) || !live(x) || !live(w) || !conv->set || !x->set ||
      !w->set || !n || !c || !h || !wd)
    return fail(CUDNN_STATUS_BAD_PARAM, call, "unset descriptor or NULL");
  int groups = groupsOf(conv);
  if (x->c != w->c * groups || w->k % groups != 0)
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "X has %d channels, the filter %d filters of %d in %d "
                "group(s)",
                x->c, w->k, w->c, groups);
  int oh = outputSize(x->h, conv->ph, w->h, conv->dh, conv->sh);
  int ow = outputSize(x->w, conv->pw, w->w, conv->dw, conv->sw);
  if (oh < 1 || ow < 1)
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "the %dx%d filter (dilations %dx%d) does not fit the %dx%d "
                "input padded by %dx%d",
                w->h, w->w, conv->dh, conv->dw, x->h, x->w, conv->ph,
                conv->pw);
  *n = x->n;
  *c = w->k;
  *h = oh;
  *wd = ow;
  return CUDNN_STATUS_SUCCESS;
}

/* --------------------------------------------------------- convolutions */

static int packed(const struct cudnnTensorStruct *t) {
  return t->ws == 1 && t->hs == t->w && t->cs == t->h * t->w &&
         t->ns == t->c * t->h * t->w;
}

/* The descriptors fit together: X, W and Y of one convolution. */
static cudnnStatus_t checkShapes(const char *call, cudnnHandle_t h,
                                 const cudnnTensorDescriptor_t x,
                                 const cudnnFilterDescriptor_t w,
                                 const cudnnConvolutionDescriptor_t conv,
                                 const cudnnTensorDescriptor_t y) {
  if (!live(h))
    return fail(CUDNN_STATUS_BAD_PARAM, call, "handle %p is not live",
                (void *)h);
  if (!live(y) || !y->set)
    return fail(CUDNN_STATUS_BAD_PARAM, call, "Y descriptor is not set");
  int n, c, oh, ow;
  cudnnStatus_t status =
      cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &oh, &ow);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (y->n != n || y->c != c || y->h != oh || y->w != ow)
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "Y is %dx%dx%dx%d, the convolution gives %dx%dx%dx%d", y->n,
                y->c, y->h, y->w, n, c, oh, ow);
  if (x->format != w->format || y->format != w->format)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "X, W and Y of different data types");
  return CUDNN_STATUS_SUCCESS;
}

/* The workspace an algorithm needs, or -1 if the emulation lacks it. */
static long long workspaceOf(cudnnConvolutionFwdAlgo_t algo,
                             const cudnnTensorDescriptor_t x,
                             const cudnnFilterDescriptor_t w,
                             const cudnnTensorDescriptor_t y) {
  if (soaprt_emu_options.dnnPackedOnly && (!packed(x) || !packed(y)))
    return -1;
  switch (algo) {
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    return 0;
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    return ((long long)w->c * w->h * w->w * 8 + 255) / 256 * 256;
  case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
    return (long long)w->c * w->h * w->w * y->h * y->w * 4;
  default:
    return -1;
  }
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t conv,
    const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
    size_t *bytes) {
  const char *call = "cudnnGetConvolutionForwardWorkspaceSize";
  cudnnStatus_t status = checkShapes(call, h, x, w, conv, y);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (!bytes || (unsigned)algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
    return CUDNN_STATUS_BAD_PARAM;
  long long need = workspaceOf(algo, x, w, y);
  if (need < 0)
    return CUDNN_STATUS_NOT_SUPPORTED; /* expected: no diagnostic */
  *bytes = (size_t)need;
  return CUDNN_STATUS_SUCCESS;
}

/* X, W and Y (and the workspace) are device memory; Y overlaps neither. */
static cudnnStatus_t checkData(const char *call,
                               const cudnnTensorDescriptor_t x, const void *xp,
                               const cudnnFilterDescriptor_t w, const void *wp,
                               const cudnnTensorDescriptor_t y, const void *yp,
                               const void *ws, size_t wsBytes) {
  long long bytes = soaprt_emu_float_bytes(w->format);
  long long xe = tensorExtent(x) * bytes, ye = tensorExtent(y) * bytes;
  long long we = (long long)w->k * w->c * w->h * w->w * bytes;
  if (!soaprt_emu_check_device(call, "X", xp, 0, xe) ||
      !soaprt_emu_check_device(call, "W", wp, 0, we) ||
      !soaprt_emu_check_device(call, "Y", yp, 0, ye) ||
      !soaprt_emu_check_device(call, "the workspace", ws, 0,
                               (long long)wsBytes))
  {
    /* Already printed: only kept for cudnnGetLastErrorString. */
    snprintf(gLastError, sizeof(gLastError), "%s",
             soaprt_emu_last_diagnostic());
    return CUDNN_STATUS_EXECUTION_FAILED;
  }
  const char *yc = (const char *)yp, *xc = (const char *)xp,
             *wc = (const char *)wp;
  if ((yc < xc + xe && xc < yc + ye) || (yc < wc + we && wc < yc + ye))
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "Y overlaps X or W (in-place convolution)");
  return CUDNN_STATUS_SUCCESS;
}

/* Y = alpha conv(X, W) + beta Y, in double. */
static void convolve(double alpha, const struct cudnnTensorStruct *x,
                     const void *X, const struct cudnnFilterStruct *w,
                     const void *W, const struct cudnnConvolutionStruct *d,
                     double beta, const struct cudnnTensorStruct *y, void *Y) {
  soaprt_emu_float_t t = w->format;
  int flip = d->mode == CUDNN_CONVOLUTION;
  int perGroup = w->k / groupsOf(d);
  for (int n = 0; n < y->n; ++n)
    for (int f = 0; f < y->c; ++f)
      for (int i = 0; i < y->h; ++i)
        for (int j = 0; j < y->w; ++j) {
          double sum = 0;
          int c0 = f / perGroup * w->c; /* the group's first channel */
          for (int c = 0; c < w->c; ++c)
            for (int kh = 0; kh < w->h; ++kh) {
              int r = i * d->sh + kh * d->dh - d->ph;
              if (r < 0 || r >= x->h)
                continue; /* zero padding */
              long xrow =
                  (long)n * x->ns + (long)(c0 + c) * x->cs + (long)r * x->hs;
              for (int kw = 0; kw < w->w; ++kw) {
                int q = j * d->sw + kw * d->dw - d->pw;
                if (q < 0 || q >= x->w)
                  continue;
                int fh = flip ? w->h - 1 - kh : kh;
                int fw = flip ? w->w - 1 - kw : kw;
                sum +=
                    soaprt_emu_load(t, X, xrow + (long)q * x->ws) *
                    soaprt_emu_load(
                        t, W, (((long)f * w->c + c) * w->h + fh) * w->w + fw);
              }
            }
          long out = (long)n * y->ns + (long)f * y->cs + (long)i * y->hs +
                     (long)j * y->ws;
          soaprt_emu_store(
              t, Y, out,
              alpha * sum +
                  (beta != 0.0 ? beta * soaprt_emu_load(t, Y, out) : 0.0));
        }
}

/* What every convolution call checks once the shapes fit: its pointers,
 * the algorithm (`algo` of `count`, needing `need` bytes of workspace, -1:
 * not emulated), the workspace, where the data lies and the stream. */
static cudnnStatus_t checkRun(const char *call, cudnnHandle_t h,
                              const cudnnTensorDescriptor_t x, const void *xp,
                              const cudnnFilterDescriptor_t w, const void *wp,
                              const cudnnTensorDescriptor_t y, const void *yp,
                              const void *alpha, const void *beta, int algo,
                              int count, long long need, void *ws,
                              size_t wsBytes) {
  if (!alpha || !beta || !xp || !wp || !yp)
    return fail(CUDNN_STATUS_BAD_PARAM, call, "a NULL argument");
  if ((unsigned)algo >= (unsigned)count)
    return fail(CUDNN_STATUS_BAD_PARAM, call, "algorithm %d", algo);
  if (need < 0)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, call,
                "algorithm %d does not support these descriptors", algo);
  if ((size_t)need > wsBytes || (need > 0 && !ws))
    return fail(CUDNN_STATUS_BAD_PARAM, call,
                "algorithm %d needs a workspace of %lld bytes, got %zu at %p",
                algo, need, wsBytes, ws);
  cudnnStatus_t status = checkData(call, x, xp, w, wp, y, yp, ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (!soaprt_emu_stream_valid(h->stream))
    return fail(CUDNN_STATUS_EXECUTION_FAILED, call,
                "the handle's stream is destroyed");
  return CUDNN_STATUS_SUCCESS;
}

/* What every FindEx call checks before it runs: the shapes, the result
 * array, where the data lies (the output must overlap neither input) and
 * the stream. X, W and Y as in the forward convolution (the gradients pass
 * dW as W, or dX as X, and dY as Y). */
static cudnnStatus_t checkFind(const char *call, cudnnHandle_t h,
                               const cudnnTensorDescriptor_t x, const void *xp,
                               const cudnnFilterDescriptor_t w, const void *wp,
                               const cudnnConvolutionDescriptor_t conv,
                               const cudnnTensorDescriptor_t y, const void *yp,
                               int requested, const int *returned,
                               const void *perf, void *ws, size_t wsBytes) {
  ++soaprt_emu_stats.convFinds;
  cudnnStatus_t status = checkShapes(call, h, x, w, conv, y);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (requested < 1 || !returned || !perf)
    return fail(CUDNN_STATUS_BAD_PARAM, call, "%d results requested",
                requested);
  status = checkData(call, x, xp, w, wp, y, yp, ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (!soaprt_emu_stream_valid(h->stream))
    return fail(CUDNN_STATUS_EXECUTION_FAILED, call,
                "the handle's stream is destroyed");
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const void *xp,
    const cudnnFilterDescriptor_t w, const void *wp,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
    void *yp, const int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t wsBytes) {
  const char *call = "cudnnFindConvolutionForwardAlgorithmEx";
  cudnnStatus_t status = checkFind(call, h, x, xp, w, wp, conv, y, yp,
                                   requested, returned, perf, ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  memset(yp, 0xff,
         (size_t)(tensorExtent(y) *
                  soaprt_emu_float_bytes(y->format))); /* trial results: NaN */

  cudnnConvolutionFwdAlgoPerf_t all[CUDNN_CONVOLUTION_FWD_ALGO_COUNT + 2];
  int count = 0;
  int fma = conv->math == CUDNN_FMA_MATH;
  if (soaprt_emu_options.dnnAdversarialFind) {
    /* A failed "fastest" result, then a tensor-op one even for FMA math. */
    cudnnConvolutionFwdAlgoPerf_t bad = {
        CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
        CUDNN_STATUS_NOT_SUPPORTED, 0.1f, 0, CUDNN_DETERMINISTIC,
        CUDNN_TENSOR_OP_MATH, {0}};
    all[count++] = bad;
    long long need = workspaceOf(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, x,
                                 w, y);
    cudnnConvolutionFwdAlgoPerf_t tensor = {
        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
        need < 0 ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_SUCCESS,
        0.2f, 0, CUDNN_DETERMINISTIC, CUDNN_TENSOR_OP_MATH, {0}};
    all[count++] = tensor;
  }
  static const cudnnConvolutionFwdAlgo_t order[] = {
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
      CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
      CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
      CUDNN_CONVOLUTION_FWD_ALGO_FFT,
      CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,
      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
  /* Successes first (in `order`), then the failures. */
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i) {
      long long need = workspaceOf(order[i], x, w, y);
      int ok = need >= 0 && (size_t)need <= wsBytes;
      if (ok != (pass == 0))
        continue;
      cudnnConvolutionFwdAlgoPerf_t p = {
          order[i],
          ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED,
          ok ? 1.0f + (float)i : -1.0f,
          need < 0 ? 0 : (size_t)need,
          CUDNN_DETERMINISTIC,
          fma ? CUDNN_FMA_MATH
              : (order[i] == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
                     ? CUDNN_TENSOR_OP_MATH
                     : CUDNN_DEFAULT_MATH),
          {0}};
      all[count++] = p;
    }
  *returned = count < requested ? count : requested;
  memcpy(perf, all, (size_t)*returned * sizeof(*perf));
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t x,
    const void *xp, const cudnnFilterDescriptor_t w, const void *wp,
    const cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsBytes, const void *beta, const cudnnTensorDescriptor_t y,
    void *yp) {
  const char *call = "cudnnConvolutionForward";
  cudnnStatus_t status = checkShapes(call, h, x, w, conv, y);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  status = checkRun(call, h, x, xp, w, wp, y, yp, alpha, beta, (int)algo,
                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                    workspaceOf(algo, x, w, y), ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  convolve(*(const float *)alpha, x, xp, w, wp, conv, *(const float *)beta, y,
           yp);
  ++soaprt_emu_stats.convForwards;
  return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------ filter gradient */

/* The workspace a gradient algorithm (filter or data: the same numbers)
 * needs, or -1 if the emulation lacks it: ALGO_0 needs none, ALGO_1 one
 * image's im2col buffer. */
static long long gradWorkspaceOf(int algo, const cudnnTensorDescriptor_t x,
                                 const cudnnFilterDescriptor_t w,
                                 const cudnnTensorDescriptor_t dy) {
  if (soaprt_emu_options.dnnPackedOnly && (!packed(x) || !packed(dy)))
    return -1;
  switch (algo) {
  case 0:
    return 0;
  case 1:
    return (long long)w->c * w->h * w->w * dy->h * dy->w * 4;
  default:
    return -1;
  }
}

/* A gradient FindEx's results: the algorithms whose workspace fits first
 * (fastest first), then the others as failures. */
typedef struct gradPerf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
} gradPerf_t;
static int listGradAlgorithms(int count, const cudnnTensorDescriptor_t x,
                              const cudnnFilterDescriptor_t w,
                              const cudnnTensorDescriptor_t dy, size_t wsBytes,
                              gradPerf_t *out) {
  int listed = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int a = 0; a < count; ++a) {
      long long need = gradWorkspaceOf(a, x, w, dy);
      int ok = need >= 0 && (size_t)need <= wsBytes;
      if (ok != (pass == 0))
        continue;
      gradPerf_t p = {a, ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED,
                      ok ? 1.0f + (float)a : -1.0f,
                      need < 0 ? 0 : (size_t)need};
      out[listed++] = p;
    }
  return listed;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t conv,
    const cudnnFilterDescriptor_t dw, cudnnConvolutionBwdFilterAlgo_t algo,
    size_t *bytes) {
  const char *call = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
  cudnnStatus_t status = checkShapes(call, h, x, dw, conv, dy);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (!bytes || (unsigned)algo >= CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT)
    return CUDNN_STATUS_BAD_PARAM;
  long long need = gradWorkspaceOf(algo, x, dw, dy);
  if (need < 0)
    return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = (size_t)need;
  return CUDNN_STATUS_SUCCESS;
}

/* dW = alpha dL/dW + beta dW, in double (the filter flipped for
 * CUDNN_CONVOLUTION, as the forward). */
static void filterGradient(double alpha, const struct cudnnTensorStruct *x,
                           const void *X, const struct cudnnTensorStruct *y,
                           const void *DY,
                           const struct cudnnConvolutionStruct *d, double beta,
                           const struct cudnnFilterStruct *w, void *DW) {
  soaprt_emu_float_t t = w->format;
  int flip = d->mode == CUDNN_CONVOLUTION;
  int perGroup = w->k / groupsOf(d);
  for (int f = 0; f < w->k; ++f)
    for (int c = 0; c < w->c; ++c)
      for (int kh = 0; kh < w->h; ++kh)
        for (int kw = 0; kw < w->w; ++kw) {
          double sum = 0;
          for (int n = 0; n < y->n; ++n)
            for (int i = 0; i < y->h; ++i) {
              int r = i * d->sh + kh * d->dh - d->ph;
              if (r < 0 || r >= x->h)
                continue;
              for (int j = 0; j < y->w; ++j) {
                int q = j * d->sw + kw * d->dw - d->pw;
                if (q < 0 || q >= x->w)
                  continue;
                sum += soaprt_emu_load(t, X,
                                       (long)n * x->ns +
                                           (long)(f / perGroup * w->c + c) *
                                               x->cs +
                                           (long)r * x->hs + (long)q * x->ws) *
                       soaprt_emu_load(t, DY,
                                       (long)n * y->ns + (long)f * y->cs +
                                           (long)i * y->hs + (long)j * y->ws);
              }
            }
          int fh = flip ? w->h - 1 - kh : kh, fw = flip ? w->w - 1 - kw : kw;
          long out = (((long)f * w->c + c) * w->h + fh) * w->w + fw;
          soaprt_emu_store(
              t, DW, out,
              alpha * sum +
                  (beta != 0.0 ? beta * soaprt_emu_load(t, DW, out) : 0.0));
        }
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const void *xp,
    const cudnnTensorDescriptor_t dy, const void *dyp,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw,
    void *dwp, const int requested, int *returned,
    cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws, size_t wsBytes) {
  const char *call = "cudnnFindConvolutionBackwardFilterAlgorithmEx";
  cudnnStatus_t status = checkFind(call, h, x, xp, dw, dwp, conv, dy, dyp,
                                   requested, returned, perf, ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  memset(dwp, 0xff,
         (size_t)dw->k * dw->c * dw->h * dw->w *
             (size_t)soaprt_emu_float_bytes(dw->format)); /* NaN */
  gradPerf_t all[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int count = listGradAlgorithms(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, x,
                                 dw, dy, wsBytes, all);
  *returned = count < requested ? count : requested;
  for (int i = 0; i < *returned; ++i) {
    cudnnConvolutionBwdFilterAlgoPerf_t p = {
        (cudnnConvolutionBwdFilterAlgo_t)all[i].algo,
        all[i].status,
        all[i].time,
        all[i].memory,
        CUDNN_DETERMINISTIC,
        conv->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH,
        {0}};
    perf[i] = p;
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t x,
    const void *xp, const cudnnTensorDescriptor_t dy, const void *dyp,
    const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t wsBytes,
    const void *beta, const cudnnFilterDescriptor_t dw, void *dwp) {
  const char *call = "cudnnConvolutionBackwardFilter";
  cudnnStatus_t status = checkShapes(call, h, x, dw, conv, dy);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  status = checkRun(call, h, x, xp, dw, dwp, dy, dyp, alpha, beta, (int)algo,
                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                    gradWorkspaceOf(algo, x, dw, dy), ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  filterGradient(*(const float *)alpha, x, xp, dy, dyp, conv,
                 *(const float *)beta, dw, dwp);
  ++soaprt_emu_stats.convFilterGrads;
  return CUDNN_STATUS_SUCCESS;
}

/* -------------------------------------------------------- data gradient */

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w,
    const cudnnTensorDescriptor_t dy, const cudnnConvolutionDescriptor_t conv,
    const cudnnTensorDescriptor_t dx, cudnnConvolutionBwdDataAlgo_t algo,
    size_t *bytes) {
  const char *call = "cudnnGetConvolutionBackwardDataWorkspaceSize";
  cudnnStatus_t status = checkShapes(call, h, dx, w, conv, dy);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  if (!bytes || (unsigned)algo >= CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
    return CUDNN_STATUS_BAD_PARAM;
  long long need = gradWorkspaceOf((int)algo, dx, w, dy);
  if (need < 0)
    return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = (size_t)need;
  return CUDNN_STATUS_SUCCESS;
}

/* dX = alpha dL/dX + beta dX, in double: every dY element times the filter
 * taps that read each input position (the filter flipped for
 * CUDNN_CONVOLUTION, as the forward). */
static cudnnStatus_t
dataGradient(const char *call, double alpha, const struct cudnnFilterStruct *w,
             const void *W, const struct cudnnTensorStruct *y, const void *DY,
             const struct cudnnConvolutionStruct *d, double beta,
             const struct cudnnTensorStruct *x, void *DX) {
  soaprt_emu_float_t t = w->format;
  double *sum = (double *)calloc((size_t)x->n * x->c * x->h * x->w,
                                 sizeof(double));
  if (!sum)
    return fail(CUDNN_STATUS_ALLOC_FAILED, call, "out of host memory");
  int flip = d->mode == CUDNN_CONVOLUTION;
  int perGroup = w->k / groupsOf(d);
  for (int n = 0; n < y->n; ++n)
    for (int f = 0; f < y->c; ++f)
      for (int i = 0; i < y->h; ++i)
        for (int j = 0; j < y->w; ++j) {
          int c0 = f / perGroup * w->c;
          double g = soaprt_emu_load(t, DY,
                                     (long)n * y->ns + (long)f * y->cs +
                                         (long)i * y->hs + (long)j * y->ws);
          for (int c = 0; c < w->c; ++c)
            for (int kh = 0; kh < w->h; ++kh) {
              int r = i * d->sh + kh * d->dh - d->ph;
              if (r < 0 || r >= x->h)
                continue;
              for (int kw = 0; kw < w->w; ++kw) {
                int q = j * d->sw + kw * d->dw - d->pw;
                if (q < 0 || q >= x->w)
                  continue;
                int fh = flip ? w->h - 1 - kh : kh;
                int fw = flip ? w->w - 1 - kw : kw;
                sum[(((long)n * x->c + c0 + c) * x->h + r) * x->w + q] +=
                    g *
                    soaprt_emu_load(
                        t, W, (((long)f * w->c + c) * w->h + fh) * w->w + fw);
              }
            }
        }
  for (int n = 0; n < x->n; ++n)
    for (int c = 0; c < x->c; ++c)
      for (int r = 0; r < x->h; ++r)
        for (int q = 0; q < x->w; ++q) {
          long out = (long)n * x->ns + (long)c * x->cs + (long)r * x->hs +
                     (long)q * x->ws;
          double s = sum[(((long)n * x->c + c) * x->h + r) * x->w + q];
          soaprt_emu_store(t, DX, out,
                           alpha * s + (beta != 0.0
                                            ? beta * soaprt_emu_load(t, DX, out)
                                            : 0.0));
        }
  free(sum);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w, const void *wp,
    const cudnnTensorDescriptor_t dy, const void *dyp,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx,
    void *dxp, const int requested, int *returned,
    cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws, size_t wsBytes) {
  const char *call = "cudnnFindConvolutionBackwardDataAlgorithmEx";
  cudnnStatus_t status = checkFind(call, h, dx, dxp, w, wp, conv, dy, dyp,
                                   requested, returned, perf, ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  memset(dxp, 0xff,
         (size_t)(tensorExtent(dx) *
                  soaprt_emu_float_bytes(dx->format))); /* trial results: NaN */
  gradPerf_t all[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int count = listGradAlgorithms(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, dx, w,
                                 dy, wsBytes, all);
  *returned = count < requested ? count : requested;
  for (int i = 0; i < *returned; ++i) {
    cudnnConvolutionBwdDataAlgoPerf_t p = {
        (cudnnConvolutionBwdDataAlgo_t)all[i].algo,
        all[i].status,
        all[i].time,
        all[i].memory,
        all[i].algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0
            ? CUDNN_NON_DETERMINISTIC
            : CUDNN_DETERMINISTIC,
        conv->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH,
        {0}};
    perf[i] = p;
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t w,
    const void *wp, const cudnnTensorDescriptor_t dy, const void *dyp,
    const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t wsBytes,
    const void *beta, const cudnnTensorDescriptor_t dx, void *dxp) {
  const char *call = "cudnnConvolutionBackwardData";
  cudnnStatus_t status = checkShapes(call, h, dx, w, conv, dy);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  status = checkRun(call, h, dx, dxp, w, wp, dy, dyp, alpha, beta, (int)algo,
                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                    gradWorkspaceOf((int)algo, dx, w, dy), ws, wsBytes);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  status = dataGradient(call, *(const float *)alpha, w, wp, dy, dyp, conv,
                        *(const float *)beta, dx, dxp);
  if (status == CUDNN_STATUS_SUCCESS)
    ++soaprt_emu_stats.convDataGrads;
  return status;
}
