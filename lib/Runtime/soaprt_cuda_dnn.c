/*===- soaprt_cuda_dnn.c - conv2d on cuDNN (legacy convolution API) -------===*
 *
 * Y += conv2d(X, W) and its gradients dW += dL/dW (from X and dY) and
 * dX += dL/dX (from W and dY): NCHW, cross-correlation, fp32 (TF32 tensor
 * cores only when the op allows it: CUDNN_DEFAULT_MATH; strict fp32 is
 * CUDNN_FMA_MATH), or bf16 / f16 (X, W and Y of one type, fp32 compute:
 * cuDNN's PSEUDO_BFLOAT16 / PSEUDO_HALF configurations, on tensor cores).
 * Uses only the long-standing legacy API (present in every cuDNN 9):
 * cudnnFindConvolution{Forward,BackwardFilter,BackwardData}AlgorithmEx and
 * cudnnConvolution{Forward,BackwardFilter,BackwardData}.
 *
 * A plan (descriptors, algorithm, workspace size) is made once per shape:
 * the key holds every size, stride, flag and the alignment of the three
 * pointers and the direction. X and Y are described with their strides; W
 * (the filter, or the filter gradient) is packed first when it is not
 * (filter descriptors are always packed). If cuDNN finds no
 * algorithm for the strided views, the plan packs X and Y (the one written
 * is copied in and back: beta = 1). The batch is split into chunks when a
 * tensor would exceed cuDNN's 2^31-element limit. The workspace is shared
 * and grows.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <cudnn.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIND_WORKSPACE_CAP ((size_t)1 << 30) /* bytes tried while finding */

static cudnnHandle_t gHandle = NULL;
static void *gWorkspace = NULL;
static size_t gWorkspaceBytes = 0;

static void dnnCheck(cudnnStatus_t status, const char *call, const char *op) {
  if (status == CUDNN_STATUS_SUCCESS)
    return;
  char last[512];
  last[0] = 0;
  cudnnGetLastErrorString(last, sizeof(last));
  char detail[768];
  snprintf(detail, sizeof(detail), "%s%s%s", cudnnGetErrorString(status),
           last[0] ? ": " : "", last);
  soaprt_cuda_fail(call, op, detail);
}
#define SOAPRT_CUDNN_CHECK(call, op) dnnCheck((call), #call, (op))

static cudnnHandle_t handle(const char *op) {
  cudaStream_t stream = soaprt_cuda_stream(op);
  if (gHandle)
    return gHandle;
  SOAPRT_CUDNN_CHECK(cudnnCreate(&gHandle), op);
  SOAPRT_CUDNN_CHECK(cudnnSetStream(gHandle, stream), op);
  return gHandle;
}

/* ------------------------------------------------------------------ plans */

/* What a plan computes: Y from X and W, dW from X and dY (Y describes
 * dY), or dX from W and dY (X describes dX, Y dY). */
enum { CONV_FORWARD = 0, CONV_FILTER_GRAD = 1, CONV_DATA_GRAD = 2 };

typedef struct convKey {
  int64_t n, c, h, w;     /* X (this chunk of the batch) */
  int64_t xs[4];          /* X strides (elements) */
  int64_t f, kh, kw;      /* W (packed): f x c/groups x kh x kw */
  int64_t groups;         /* channel groups (cudnnSetConvolutionGroupCount) */
  int64_t oh, ow;         /* Y: n x f x oh x ow */
  int64_t ys[4];          /* Y strides */
  int64_t sh, sw, dh, dw; /* convolution strides and dilations */
  int64_t ph, pw;         /* zero padding of X on each side */
  int64_t flags;
  int64_t type;     /* cudnnDataType_t of X, W and Y */
  int64_t align[3]; /* log2 alignment (up to 256) of X, W, Y */
  int64_t direction; /* CONV_FORWARD, CONV_FILTER_GRAD or CONV_DATA_GRAD */
} convKey_t;

typedef struct plan {
  convKey_t key;
  uint64_t hash;
  int packed; /* X and Y go through packed temporaries */
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  int algo; /* cudnnConvolution{Fwd,BwdFilter,BwdData}Algo_t */
  size_t workspace;
  struct plan *next;
} plan_t;
static plan_t *gPlans = NULL;

static uint64_t hashKey(const convKey_t *k) {
  const unsigned char *p = (const unsigned char *)k;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof(*k); ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int64_t alignmentOf(const void *p) {
  uintptr_t a = (uintptr_t)p;
  int64_t log = 0;
  while (log < 8 && (a & ((uintptr_t)1 << log)) == 0)
    ++log;
  return log;
}

static int fitsInt(int64_t v) { return v >= 1 && v <= INT_MAX; }

/* Bytes of an element of the types the calls take. */
static int64_t typeBytes(int64_t type) {
  return type == CUDNN_DATA_FLOAT ? 4 : 2;
}

/* Strides with dims of size 1 given the stride NCHW order implies (cuDNN
 * infers layouts from them; their value does not move any element). */
static void normalizeStrides(const int64_t *sizes, const int64_t *in,
                             int64_t *out) {
  for (int d = 3; d >= 0; --d)
    out[d] = sizes[d] != 1 ? in[d] : d == 3 ? 1 : out[d + 1] * sizes[d + 1];
}

/* Elements from the first to one past the last element of a view. */
static int64_t extent(const int64_t *sizes, const int64_t *strides) {
  int64_t e = 1;
  for (int d = 0; d < 4; ++d)
    e += (sizes[d] - 1) * strides[d];
  return e;
}

static void packedStrides(const int64_t *sizes, int64_t *strides) {
  strides[3] = 1;
  for (int d = 2; d >= 0; --d)
    strides[d] = strides[d + 1] * sizes[d + 1];
}

/* Sets the X and Y descriptors (strided, or packed when p->packed). */
static cudnnStatus_t describeTensors(plan_t *p) {
  const convKey_t *k = &p->key;
  int64_t xSizes[4] = {k->n, k->c, k->h, k->w};
  int64_t ySizes[4] = {k->n, k->f, k->oh, k->ow};
  int64_t xs[4], ys[4];
  if (p->packed) {
    packedStrides(xSizes, xs);
    packedStrides(ySizes, ys);
  } else {
    memcpy(xs, k->xs, sizeof(xs));
    memcpy(ys, k->ys, sizeof(ys));
  }
  cudnnStatus_t status = cudnnSetTensor4dDescriptorEx(
      p->x, (cudnnDataType_t)k->type, (int)k->n, (int)k->c, (int)k->h,
      (int)k->w, (int)xs[0], (int)xs[1], (int)xs[2], (int)xs[3]);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  return cudnnSetTensor4dDescriptorEx(
      p->y, (cudnnDataType_t)k->type, (int)k->n, (int)k->f, (int)k->oh,
      (int)k->ow, (int)ys[0], (int)ys[1], (int)ys[2], (int)ys[3]);
}

/* One result of a cudnnFind*AlgorithmEx call, whatever the direction. */
typedef struct algoPerf {
  int algo;
  cudnnStatus_t status;
  size_t memory;
  cudnnMathType_t mathType;
} algoPerf_t;

#define MAX_ALGOS 8
#if CUDNN_CONVOLUTION_FWD_ALGO_COUNT > MAX_ALGOS ||                          \
    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT > MAX_ALGOS ||                   \
    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT > MAX_ALGOS
#error "more cuDNN convolution algorithms than MAX_ALGOS"
#endif

static int algorithmCount(int direction) {
  switch (direction) {
  case CONV_FORWARD:
    return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  case CONV_FILTER_GRAD:
    return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  default:
    return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  }
}

static cudnnStatus_t workspaceSize(cudnnHandle_t h, const plan_t *p, int algo,
                                   size_t *bytes) {
  switch (p->key.direction) {
  case CONV_FORWARD:
    return cudnnGetConvolutionForwardWorkspaceSize(
        h, p->x, p->w, p->conv, p->y, (cudnnConvolutionFwdAlgo_t)algo, bytes);
  case CONV_FILTER_GRAD:
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, p->x, p->y, p->conv, p->w, (cudnnConvolutionBwdFilterAlgo_t)algo,
        bytes);
  default:
    return cudnnGetConvolutionBackwardDataWorkspaceSize(
        h, p->w, p->y, p->conv, p->x, (cudnnConvolutionBwdDataAlgo_t)algo,
        bytes);
  }
}

#define COPY_PERF(from, count, to)                                             \
  for (int i_ = 0; i_ < (count); ++i_) {                                       \
    (to)[i_].algo = (int)(from)[i_].algo;                                      \
    (to)[i_].status = (from)[i_].status;                                       \
    (to)[i_].memory = (from)[i_].memory;                                       \
    (to)[i_].mathType = (from)[i_].mathType;                                   \
  }

/* cudnnFind*AlgorithmEx of the plan's direction on X, W and Y (the one the
 * direction writes is a scratch buffer): the results, fastest first. */
static cudnnStatus_t findAlgorithms(cudnnHandle_t h, const plan_t *p,
                                    void *x, void *w, void *y,
                                    void *workspace,
                                    size_t bytes, algoPerf_t *perf,
                                    int *returned) {
  cudnnStatus_t status;
  int count = algorithmCount(p->key.direction);
  *returned = 0;
  switch (p->key.direction) {
  case CONV_FORWARD: {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    memset(r, 0, sizeof(r));
    status = cudnnFindConvolutionForwardAlgorithmEx(
        h, p->x, x, p->w, w, p->conv, p->y, y, count, returned, r,
        workspace, bytes);
    COPY_PERF(r, *returned, perf);
    break;
  }
  case CONV_FILTER_GRAD: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    memset(r, 0, sizeof(r));
    status = cudnnFindConvolutionBackwardFilterAlgorithmEx(
        h, p->x, x, p->y, y, p->conv, p->w, w, count, returned, r,
        workspace, bytes);
    COPY_PERF(r, *returned, perf);
    break;
  }
  default: {
    cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    memset(r, 0, sizeof(r));
    status = cudnnFindConvolutionBackwardDataAlgorithmEx(
        h, p->w, w, p->y, y, p->conv, p->x, x, count, returned, r,
        workspace, bytes);
    COPY_PERF(r, *returned, perf);
    break;
  }
  }
  if (*returned > count)
    *returned = count;
  return status;
}

/* Bytes from the first to one past the last element of X or Y as the plan
 * describes them. */
static size_t describedBytes(const plan_t *p, int isY) {
  const convKey_t *k = &p->key;
  int64_t sizes[4] = {k->n, isY ? k->f : k->c, isY ? k->oh : k->h,
                      isY ? k->ow : k->w};
  int64_t strides[4];
  if (p->packed)
    packedStrides(sizes, strides);
  else
    memcpy(strides, isY ? k->ys : k->xs, sizeof(strides));
  return (size_t)(extent(sizes, strides) * typeBytes(k->type));
}

/* Picks the fastest algorithm of the plan's direction that cuDNN can run on
 * its descriptors: timed on the real inputs (two of X, W and Y) and a
 * scratch output with the real output's alignment (`x`, `w` or `y`: only
 * its address is used). 0 if there is none. */
static int chooseAlgorithm(plan_t *p, void *x, void *w, void *y,
                           const char *op) {
  cudnnHandle_t h = handle(op);
  int direction = p->key.direction;
  /* Strict fp32 keeps TF32 off; 16-bit types run on tensor cores. */
  int strict = p->key.type == CUDNN_DATA_FLOAT &&
               !(p->key.flags & SOAPRT_CUDA_ALLOW_TF32);
  cudnnMathType_t math = strict ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  SOAPRT_CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, math), op);

  /* The largest workspace any algorithm wants (capped). */
  size_t want = 0;
  for (int a = 0; a < algorithmCount(direction); ++a) {
    size_t bytes = 0;
    if (workspaceSize(h, p, a, &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes <= FIND_WORKSPACE_CAP && bytes > want)
      want = bytes;
  }
  void *workspace = NULL;
  while (want > 0 && !(workspace = soaprt_cuda_try_alloc(want, op)))
    want /= 2;

  /* Scratch output: FindEx overwrites it. */
  const convKey_t *k = &p->key;
  const void *real = direction == CONV_FORWARD       ? y
                     : direction == CONV_FILTER_GRAD ? w
                                                     : x;
  size_t outBytes = direction == CONV_FILTER_GRAD
                        ? (size_t)(k->f * (k->c / k->groups) * k->kh * k->kw *
                                   typeBytes(k->type))
                        : describedBytes(p, direction == CONV_FORWARD);
  size_t shift = (size_t)((uintptr_t)real % 256);
  char *scratch = (char *)soaprt_cuda_alloc(outBytes + shift, op);
  if (direction == CONV_FORWARD)
    y = scratch + shift;
  else if (direction == CONV_FILTER_GRAD)
    w = scratch + shift;
  else
    x = scratch + shift;

  algoPerf_t perf[MAX_ALGOS];
  int returned = 0;
  /* The inputs and the scratch output ready whatever stream the search
     uses inside (once per shape). */
  soaprt_cuda_sync(op);
  cudnnStatus_t status =
      findAlgorithms(h, p, x, w, y, workspace, want, perf, &returned);
  soaprt_cuda_free(scratch, op);
  soaprt_cuda_free(workspace, op);
  if (status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM)
    return 0;
  SOAPRT_CUDNN_CHECK(status, op);

  /* Sorted fastest first. Strict fp32: no tensor-op (TF32) results, and
     FMA math whatever the result says (as PyTorch does). */
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS)
      continue;
    if (strict && (perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                   perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      continue;
    cudnnMathType_t use = strict ? CUDNN_FMA_MATH : perf[i].mathType;
    SOAPRT_CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, use), op);
    size_t bytes = 0;
    if (workspaceSize(h, p, perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS)
      continue; /* not with this math type */
    p->algo = perf[i].algo;
    p->workspace = bytes > perf[i].memory ? bytes : perf[i].memory;
    return 1;
  }
  SOAPRT_CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, math), op);
  return 0;
}

/* `x`, `w` (packed) and `y` as the direction reads or writes them; the
 * one it writes is only looked at for its alignment. */
static plan_t *getPlan(const convKey_t *key, const soaprt_region_t *x,
                       void *w, const soaprt_region_t *y,
                       const char *op) {
  uint64_t hash = hashKey(key);
  for (plan_t *p = gPlans; p; p = p->next)
    if (p->hash == hash && !memcmp(&p->key, key, sizeof(*key)))
      return p;
  plan_t *p = (plan_t *)calloc(1, sizeof(plan_t));
  if (!p)
    soaprt_fatal("%s: out of memory", op);
  p->key = *key;
  p->hash = hash;
  SOAPRT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x), op);
  SOAPRT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y), op);
  SOAPRT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w), op);
  SOAPRT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv), op);
  SOAPRT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
                         p->w, (cudnnDataType_t)key->type, CUDNN_TENSOR_NCHW,
                         (int)key->f, (int)(key->c / key->groups), (int)key->kh,
                         (int)key->kw),
                     op);
  SOAPRT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
                         p->conv, (int)key->ph, (int)key->pw, (int)key->sh,
                         (int)key->sw,
                         (int)key->dh, (int)key->dw, CUDNN_CROSS_CORRELATION,
                         CUDNN_DATA_FLOAT),
                     op);
  if (key->groups > 1)
    SOAPRT_CUDNN_CHECK(
        cudnnSetConvolutionGroupCount(p->conv, (int)key->groups), op);
  int positive = 1;
  for (int d = 0; d < 4; ++d)
    positive &= fitsInt(key->xs[d]) && fitsInt(key->ys[d]);
  int64_t xSizes[4] = {key->n, key->c, key->h, key->w};
  int64_t ySizes[4] = {key->n, key->f, key->oh, key->ow};
  positive &=
      extent(xSizes, key->xs) <= INT_MAX && extent(ySizes, key->ys) <= INT_MAX;
  int found = 0;
  if (positive && describeTensors(p) == CUDNN_STATUS_SUCCESS)
    found = chooseAlgorithm(p, x->base, w, y->base, op);
  if (!found) { /* packed X and Y */
    p->packed = 1;
    SOAPRT_CUDNN_CHECK(describeTensors(p), op);
    char *packedX = soaprt_cuda_pack(x, 1, op);
    char *packedY = soaprt_cuda_pack(y, 1, op);
    found = chooseAlgorithm(p, packedX, w, packedY, op);
    soaprt_cuda_unpack(y, packedY, 0, op);
    soaprt_cuda_unpack(x, packedX, 0, op);
  }
  if (!found)
    soaprt_fatal("%s: cuDNN has no algorithm for this convolution (X "
                 "%lldx%lldx%lldx%lld, W %lldx%lldx%lldx%lld, %lld group(s), "
                 "strides %lldx%lld, dilations %lldx%lld)",
                 op, (long long)key->n, (long long)key->c, (long long)key->h,
                 (long long)key->w, (long long)key->f,
                 (long long)(key->c / key->groups), (long long)key->kh,
                 (long long)key->kw, (long long)key->groups,
                 (long long)key->sh, (long long)key->sw, (long long)key->dh,
                 (long long)key->dw);
  int on = 0, oc = 0, oh = 0, ow = 0;
  SOAPRT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w,
                                                           &on, &oc, &oh, &ow),
                     op);
  if (on != key->n || oc != key->f || oh != key->oh || ow != key->ow)
    soaprt_fatal("%s: cuDNN computes a %dx%dx%dx%d output, the program "
                 "expects %lldx%lldx%lldx%lld",
                 op, on, oc, oh, ow, (long long)key->n, (long long)key->f,
                 (long long)key->oh, (long long)key->ow);
  p->next = gPlans;
  gPlans = p;
  return p;
}

static void *workspace(size_t bytes, const char *op) {
  if (bytes <= gWorkspaceBytes)
    return gWorkspace;
  /* Stream-ordered: earlier convolutions still using it are done first. */
  soaprt_cuda_free(gWorkspace, op);
  gWorkspace = soaprt_cuda_alloc(bytes, op);
  gWorkspaceBytes = bytes;
  return gWorkspace;
}

int64_t soaprt_cuda_dnn_workspace_bytes(void) {
  return (int64_t)gWorkspaceBytes;
}

void soaprt_cuda_dnn_finalize(void) {
  const char *op = "soaprt_finalize";
  while (gPlans) {
    plan_t *p = gPlans;
    gPlans = p->next;
    SOAPRT_CUDNN_CHECK(cudnnDestroyTensorDescriptor(p->x), op);
    SOAPRT_CUDNN_CHECK(cudnnDestroyTensorDescriptor(p->y), op);
    SOAPRT_CUDNN_CHECK(cudnnDestroyFilterDescriptor(p->w), op);
    SOAPRT_CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(p->conv), op);
    free(p);
  }
  soaprt_cuda_free(gWorkspace, op);
  gWorkspace = NULL;
  gWorkspaceBytes = 0;
  if (gHandle)
    SOAPRT_CUDNN_CHECK(cudnnDestroy(gHandle), op);
  gHandle = NULL;
}

/* ------------------------------------------------------------------- conv */

static soaprt_region_t view4(soaprt_unranked_memref_t *ref, int64_t bytes,
                             const char *name, const char *op) {
  if (ref->rank != 4)
    soaprt_fatal("%s: conv2d operand %s must be a rank-4 view, not rank %lld",
                 op, name, (long long)ref->rank);
  soaprt_region_t r = soaprt_view(ref, bytes);
  for (int d = 0; d < 4; ++d)
    if (r.sizes[d] < 0)
      soaprt_fatal("%s: conv2d operand %s has a negative size", op, name);
  return r;
}

/* By direction: Y += conv2d(X, W); W += the filter gradient from X and
 * Y (= dY); X += the input gradient from W and Y (= dY). */
static void conv2d(int direction, soaprt_unranked_memref_t *xRef,
                   soaprt_unranked_memref_t *wRef,
                   soaprt_unranked_memref_t *yRef, int64_t strideH,
                   int64_t strideW, int64_t dilationH, int64_t dilationW,
                   int64_t padH, int64_t padW, int64_t groups, int64_t flags,
                   cudnnDataType_t type, const char *op) {
  int64_t bytes = typeBytes(type);
  soaprt_region_t X = view4(xRef, bytes, "X", op),
                  W = view4(wRef, bytes, "W", op),
                  Y = view4(yRef, bytes, "Y", op);
  int64_t N = X.sizes[0], C = X.sizes[1], H = X.sizes[2], Wd = X.sizes[3];
  int64_t F = W.sizes[0], KH = W.sizes[2], KW = W.sizes[3];
  int64_t OH = Y.sizes[2], OW = Y.sizes[3];
  if (!fitsInt(strideH) || !fitsInt(strideW) || !fitsInt(dilationH) ||
      !fitsInt(dilationW) || strideH < 1 || strideW < 1 || dilationH < 1 ||
      dilationW < 1 || padH < 0 || padW < 0 || padH > INT_MAX ||
      padW > INT_MAX || !fitsInt(groups))
    soaprt_fatal("%s: bad conv2d strides %lldx%lld, dilations %lldx%lld, "
                 "padding %lldx%lld or group count %lld",
                 op, (long long)strideH, (long long)strideW,
                 (long long)dilationH, (long long)dilationW, (long long)padH,
                 (long long)padW, (long long)groups);
  /* Group g reads channels [g C/G, (g+1) C/G) of X and writes filters
     [g F/G, (g+1) F/G); W holds C/G channels per filter. */
  int shapesMatch = W.sizes[1] * groups == C && F % groups == 0 &&
                    Y.sizes[0] == N && Y.sizes[1] == F;
  if (shapesMatch && N > 0 && F > 0 && OH > 0 && OW > 0 && C > 0 && KH > 0 &&
      KW > 0)
    shapesMatch = H + 2 * padH >= dilationH * (KH - 1) + 1 &&
                  Wd + 2 * padW >= dilationW * (KW - 1) + 1 &&
                  OH == (H + 2 * padH - dilationH * (KH - 1) - 1) / strideH +
                            1 &&
                  OW == (Wd + 2 * padW - dilationW * (KW - 1) - 1) / strideW +
                            1;
  if (!shapesMatch)
    soaprt_fatal("%s: conv2d shapes do not match: X %lldx%lldx%lldx%lld, W "
                 "%lldx%lldx%lldx%lld, Y %lldx%lldx%lldx%lld, %lld group(s), "
                 "strides %lldx%lld, dilations %lldx%lld, padding %lldx%lld",
                 op, (long long)N, (long long)C, (long long)H, (long long)Wd,
                 (long long)F, (long long)W.sizes[1], (long long)KH,
                 (long long)KW, (long long)Y.sizes[0], (long long)Y.sizes[1],
                 (long long)OH, (long long)OW, (long long)groups,
                 (long long)strideH, (long long)strideW,
                 (long long)dilationH, (long long)dilationW, (long long)padH,
                 (long long)padW);
  if (N == 0 || F == 0 || OH == 0 || OW == 0 || C == 0 || KH == 0 || KW == 0)
    return; /* Y += nothing */
  if (!fitsInt(C) || !fitsInt(F) || !fitsInt(H) || !fitsInt(Wd) ||
      !fitsInt(KH) || !fitsInt(KW) || C * KH * KW > INT_MAX ||
      F * (C / groups) * KH * KW > INT_MAX)
    soaprt_fatal("%s: conv2d dimensions beyond 2^31 are not supported", op);
  cudnnHandle_t h = handle(op);

  /* Filters must be packed; a gradient is read only to accumulate. */
  int filterGrad = direction == CONV_FILTER_GRAD;
  float alpha = 1.0f;
  float beta = (flags & SOAPRT_CUDA_OVERWRITE) ? 0.0f : 1.0f;
  char *w = soaprt_cuda_pack(&W, !filterGrad || beta != 0.0f, op);
  convKey_t key;
  memset(&key, 0, sizeof(key)); /* the hash reads every byte */
  key.c = C;
  key.h = H;
  key.w = Wd;
  key.f = F;
  key.groups = groups;
  key.kh = KH;
  key.kw = KW;
  key.oh = OH;
  key.ow = OW;
  key.sh = strideH;
  key.sw = strideW;
  key.dh = dilationH;
  key.dw = dilationW;
  key.ph = padH;
  key.pw = padW;
  key.flags = flags & SOAPRT_CUDA_ALLOW_TF32;
  key.type = type;
  key.align[1] = alignmentOf(w);
  key.direction = direction;

  /* Images per call: every tensor below 2^31 elements (cuDNN's limit). */
  int64_t xImage[4] = {1, C, H, Wd}, yImage[4] = {1, F, OH, OW};
  int64_t xImageExtent = extent(xImage, X.strides) > C * H * Wd
                             ? extent(xImage, X.strides)
                             : C * H * Wd;
  int64_t yImageExtent = extent(yImage, Y.strides) > F * OH * OW
                             ? extent(yImage, Y.strides)
                             : F * OH * OW;
  int64_t xStep = X.strides[0] > C * H * Wd ? X.strides[0] : C * H * Wd;
  int64_t yStep = Y.strides[0] > F * OH * OW ? Y.strides[0] : F * OH * OW;
  if (xImageExtent > INT_MAX || yImageExtent > INT_MAX)
    soaprt_fatal("%s: conv2d images of 2^31 elements or more are not "
                 "supported by cuDNN",
                 op);
  int64_t chunk = N;
  while (chunk > 1 && (xImageExtent + (chunk - 1) * xStep > INT_MAX ||
                       yImageExtent + (chunk - 1) * yStep > INT_MAX))
    chunk = (chunk + 1) / 2;

  for (int64_t n0 = 0; n0 < N; n0 += chunk) {
    int64_t count = N - n0 < chunk ? N - n0 : chunk;
    int64_t xSizes[4] = {count, C, H, Wd}, ySizes[4] = {count, F, OH, OW};
    soaprt_region_t x = X, y = Y;
    x.base = X.base + n0 * X.strides[0] * bytes;
    x.sizes = xSizes;
    y.base = Y.base + n0 * Y.strides[0] * bytes;
    y.sizes = ySizes;
    key.n = count;
    normalizeStrides(xSizes, X.strides, key.xs);
    normalizeStrides(ySizes, Y.strides, key.ys);
    key.align[0] = alignmentOf(x.base);
    key.align[2] = alignmentOf(y.base);
    plan_t *p = getPlan(&key, &x, w, &y, op);
    char *xData = x.base, *yData = y.base;
    if (p->packed) {
      xData = soaprt_cuda_pack(&x, 1, op);
      yData = soaprt_cuda_pack(&y, 1, op);
    }
    void *ws = workspace(p->workspace, op);
    if (filterGrad) {
      SOAPRT_CUDNN_CHECK(
          cudnnConvolutionBackwardFilter(
              h, &alpha, p->x, xData, p->y, yData, p->conv,
              (cudnnConvolutionBwdFilterAlgo_t)p->algo, ws, p->workspace,
              &beta, p->w, w),
          op);
      beta = 1.0f; /* the next images add to the gradient */
    } else if (direction == CONV_DATA_GRAD) {
      SOAPRT_CUDNN_CHECK(
          cudnnConvolutionBackwardData(
              h, &alpha, p->w, w, p->y, yData, p->conv,
              (cudnnConvolutionBwdDataAlgo_t)p->algo, ws, p->workspace, &beta,
              p->x, xData),
          op);
    } else {
      SOAPRT_CUDNN_CHECK(
          cudnnConvolutionForward(h, &alpha, p->x, xData, p->w, w, p->conv,
                                  (cudnnConvolutionFwdAlgo_t)p->algo, ws,
                                  p->workspace, &beta, p->y, yData),
          op);
    }
    if (p->packed) {
      soaprt_cuda_unpack(&y, yData, direction == CONV_FORWARD, op);
      soaprt_cuda_unpack(&x, xData, direction == CONV_DATA_GRAD, op);
    }
  }
  soaprt_cuda_unpack(&W, w, filterGrad, op);
  soaprt_cuda_after_call(op);
}

/* One entry point: its views `a`, `b`, `c` as conv2d's X, W and Y. */
#define SOAPRT_CONV_ENTRY(name, a, b, c, direction, X, W, Y, what, type)       \
  SOAPRT_CONV_SIGNATURE(name, a, b, c) {                                       \
    conv2d(direction, X, W, Y, strideH, strideW, dilationH, dilationW, padH,   \
           padW, groups, flags, type, op ? op : what);                         \
  }
#define SOAPRT_CONV_ENTRIES(suffix, type)                                      \
  SOAPRT_CONV_ENTRY(_mlir_ciface_soaprt_cuda_conv2d_##suffix, x, w, y,         \
                    CONV_FORWARD, x, w, y, "conv2d", type)                     \
  SOAPRT_CONV_ENTRY(_mlir_ciface_soaprt_cuda_conv2d_filter_grad_##suffix, x,   \
                    dy, dw, CONV_FILTER_GRAD, x, dw, dy,                       \
                    "conv2d filter gradient", type)                            \
  SOAPRT_CONV_ENTRY(_mlir_ciface_soaprt_cuda_conv2d_input_grad_##suffix, w,    \
                    dy, dx, CONV_DATA_GRAD, dx, w, dy,                         \
                    "conv2d input gradient", type)
SOAPRT_CONV_ENTRIES(f32, CUDNN_DATA_FLOAT)
SOAPRT_CONV_ENTRIES(bf16, CUDNN_DATA_BFLOAT16)
SOAPRT_CONV_ENTRIES(f16, CUDNN_DATA_HALF)
