/*===- soaprt_blas_conv.c - Convolutions of the CPU back end on CBLAS -----===*
 *
 * 2-D convolutions and their filter and input gradients as im2col + GEMM
 * and GEMM + col2im (include/soap/Runtime/soaprt.h). For image n and group
 * g, with K = C/G x KH x KW and P = OH x OW:
 *
 *   col[(c, kh, kw), (oh, ow)] = X[n, g C/G + c, oh sh + kh dh - ph,
 *                                               ow sw + kw dw - pw]
 *                                (0 outside X: the padding)
 *   forward:         Y_ng (F/G x P) += W_g (F/G x K) x col (K x P)
 *   filter gradient: dW_g (F/G x K) += dY_ng (F/G x P) x col^T (P x K)
 *   input gradient:  col = W_g^T (K x F/G) x dY_ng (F/G x P), each entry
 *                    then added to the element of dX it was read from
 *                    (col2im; entries in the padding are dropped)
 *
 * W (or dW) and Y (or dY) are used in place when their (C/G, KH, KW),
 * respectively (OH, OW), dims are one row-major run; otherwise through a
 * packed copy. A 1x1 window at stride 1 without padding needs no col where
 * X's (dX's) (H, W) dims are one run: the GEMMs read (write) X in place.
 * Depthwise convolutions (one channel and one filter per group, whose
 * GEMMs would have one row) are direct loops along the output rows.
 * soap-cpu-library-calls makes the calls.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_blas_internal.h"
#include "soaprt_gemm.h"

#include <string.h>

/* One operand: a 4-D strided view and what the GEMMs read of it. */
typedef struct conv_operand {
  soaprt_region_t view;
  char *base;   /* the view's first element, or the packed copy */
  int64_t ld;   /* between rows of the matrices the GEMMs read */
  int64_t s0;   /* between dim-0 entries (images; filters for W) */
  char *packed; /* the packed row-major copy, or NULL */
  const char *name; /* X, dX, W, dW, Y or dY, for messages */
} conv_operand_t;

static void describe(conv_operand_t *o, soaprt_unranked_memref_t *ref,
                     int64_t elemSize, const char *name, const char *op) {
  if (ref->rank != 4)
    soaprt_fatal("%s: convolution operand %s must be a rank-4 view, not "
                 "rank %lld",
                 op, name, (long long)ref->rank);
  o->name = name;
  o->view = soaprt_view(ref, elemSize);
  o->base = o->view.base;
  o->packed = NULL;
  for (int d = 0; d < 4; ++d)
    if (o->view.strides[d] < 0)
      soaprt_fatal("%s: convolution operand %s has a negative stride", op,
                   name);
}

/* Whether dims 1..3 (`trailing` == 3) or 2..3 (2) of the view are one
 * row-major run (dims of size 1 may have any stride). */
static int trailingContiguous(const soaprt_region_t *v, int trailing) {
  int64_t expected = 1;
  for (int d = 3; d > 3 - trailing; --d) {
    if (v->sizes[d] != 1 && v->strides[d] != expected)
      return 0;
    expected *= v->sizes[d];
  }
  return 1;
}

/* Makes the matrices of `o` readable: in place when its dims from
 * 4 - trailing on are one row-major run and the matrices' rows do not
 * overlap, else from a packed copy (`fill`: with the view's values).
 *   trailing 3 (W, dW: F x C/G x KH x KW): one matrix, a filter per row,
 *     rows `s0` apart;
 *   trailing 2 (Y, dY: N x F x OH x OW): a matrix per image (`s0` apart),
 *     a filter per row, rows `ld` apart. */
static void prepare(conv_operand_t *o, int trailing, int fill, const char *op) {
  const soaprt_region_t *v = &o->view;
  int64_t run = v->sizes[3] * v->sizes[2] * (trailing == 3 ? v->sizes[1] : 1);
  int64_t rowStride = v->strides[4 - trailing - 1];
  int64_t rows = v->sizes[4 - trailing - 1];
  if (trailingContiguous(v, trailing) && (rows == 1 || rowStride >= run)) {
    int64_t ld = rows == 1 ? (run > 0 ? run : 1) : rowStride;
    if (trailing == 3) {
      o->s0 = ld;
    } else {
      o->ld = ld;
      o->s0 = v->strides[0];
    }
    return;
  }
  o->packed = soaprt_blas_alloc(soaprt_region_elements(v) * v->elemSize,
                                "a packed convolution operand", op);
  if (fill)
    soaprt_copy_region(v, o->packed, 1);
  o->base = o->packed;
  if (trailing == 3) {
    o->s0 = run;
  } else {
    o->ld = run;
    o->s0 = v->sizes[1] * run;
  }
}

/* The convolution's shape, checked. */
typedef struct conv_shape {
  int64_t n, c, h, w, f, kh, kw, oh, ow, groups;
  int64_t sh, sw, dh, dw, ph, pw;
} conv_shape_t;

static conv_shape_t checkShape(const conv_operand_t *x, const conv_operand_t *w,
                               const conv_operand_t *y, int64_t sh, int64_t sw,
                               int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                               int64_t groups, const char *op) {
  conv_shape_t s = {x->view.sizes[0],
                    x->view.sizes[1],
                    x->view.sizes[2],
                    x->view.sizes[3],
                    w->view.sizes[0],
                    w->view.sizes[2],
                    w->view.sizes[3],
                    y->view.sizes[2],
                    y->view.sizes[3],
                    groups,
                    sh,
                    sw,
                    dh,
                    dw,
                    ph,
                    pw};
  if (groups < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0)
    soaprt_fatal("%s: convolution with groups %lld, strides %lldx%lld, "
                 "dilations %lldx%lld, padding %lldx%lld",
                 op, (long long)groups, (long long)sh, (long long)sw,
                 (long long)dh, (long long)dw, (long long)ph, (long long)pw);
  int64_t spanH = (s.kh - 1) * dh + 1, spanW = (s.kw - 1) * dw + 1;
  int ok = s.c % groups == 0 && s.f % groups == 0 &&
           w->view.sizes[1] == s.c / groups && y->view.sizes[0] == s.n &&
           y->view.sizes[1] == s.f && s.kh >= 1 && s.kw >= 1 &&
           s.h + 2 * ph >= spanH && s.w + 2 * pw >= spanW &&
           s.oh == (s.h + 2 * ph - spanH) / sh + 1 &&
           s.ow == (s.w + 2 * pw - spanW) / sw + 1;
  if (!ok)
    soaprt_fatal("%s: convolution shapes do not match: %s %lldx%lldx%lldx%lld, "
                 "%s %lldx%lldx%lldx%lld, %s %lldx%lldx%lldx%lld, %lld groups",
                 op, x->name, (long long)s.n, (long long)s.c, (long long)s.h,
                 (long long)s.w, w->name, (long long)s.f,
                 (long long)w->view.sizes[1], (long long)s.kh, (long long)s.kw,
                 y->name, (long long)y->view.sizes[0],
                 (long long)y->view.sizes[1], (long long)s.oh, (long long)s.ow,
                 (long long)groups);
  return s;
}

/* The output columns [*lo, *hi) whose window column j reads inside X
 * (0 <= ow sw + j dw - pw < W); *first = pw - j dw, X's column of ow is
 * ow sw - *first. */
static void windowColumns(const conv_shape_t *s, int64_t j, int64_t *first,
                          int64_t *lo, int64_t *hi) {
  *first = s->pw - j * s->dw;
  int64_t end = s->w + *first;
  *lo = *first <= 0 ? 0 : (*first + s->sw - 1) / s->sw;
  *hi = end <= 0 ? 0 : (end + s->sw - 1) / s->sw;
  if (*hi > s->ow)
    *hi = s->ow;
  if (*lo > *hi)
    *lo = *hi;
}

/* What a call computes. */
typedef enum { FORWARD, FILTER_GRAD, INPUT_GRAD } conv_kind_t;

/* One output row's part [lo, hi) of a depthwise convolution's window
 * offset (kh, kw): `xr` (X or dX, `step` elements apart) and `yr` (Y or dY,
 * `ystep` apart) from their element lo, the filter tap `wr`. The forward
 * pass and the input gradient both add the tap times one row to the
 * other (Y += w X, dX += w dY); the filter gradient sums dY X into the
 * tap. Unit strides get loops the compiler vectorizes. */
#define DEPTHWISE_ROW(T)                                                       \
  do {                                                                         \
    T *xp = (T *)xr, *yp = (T *)yr, *wp = (T *)wr;                             \
    int unit = step == 1 && ystep == 1;                                        \
    if (kind == FILTER_GRAD) {                                                 \
      T acc = 0;                                                               \
      if (unit)                                                                \
        for (int64_t k = 0; k < count; ++k)                                    \
          acc += yp[k] * xp[k];                                                \
      else                                                                     \
        for (int64_t k = 0; k < count; ++k)                                    \
          acc += yp[k * ystep] * xp[k * step];                                 \
      *wp += acc;                                                              \
    } else {                                                                   \
      int forward = kind == FORWARD;                                           \
      T *to = forward ? yp : xp, *from = forward ? xp : yp, tap = *wp;         \
      int64_t toStep = forward ? ystep : step,                                 \
              fromStep = forward ? step : ystep;                               \
      if (unit)                                                                \
        for (int64_t k = 0; k < count; ++k)                                    \
          to[k] += tap * from[k];                                              \
      else                                                                     \
        for (int64_t k = 0; k < count; ++k)                                    \
          to[k * toStep] += tap * from[k * fromStep];                          \
    }                                                                          \
  } while (0)

/* A depthwise convolution (one channel and one filter per group: GEMMs of
 * one row, slower than plain loops) or its gradients, by direct loops on
 * the views: per image, channel and output row, each window offset's part
 * of the row whose window reads inside X. The taps are the inner loops, so
 * one output row and the KH input rows it reads stay in L1 while every tap
 * passes over them (tap-outer order streamed the whole output plane once
 * per tap). Each output element and filter tap sums its terms in the same
 * order as tap-outer loops did; an input gradient element in another. */
static void depthwise(const conv_operand_t *x, const conv_operand_t *w,
                      const conv_operand_t *y, const conv_shape_t *s,
                      conv_kind_t kind) {
  const soaprt_region_t *xv = &x->view, *wv = &w->view, *yv = &y->view;
  int64_t e = xv->elemSize, step = s->sw * xv->strides[3],
          ystep = yv->strides[3];
  for (int64_t n = 0; n < s->n; ++n)
    for (int64_t c = 0; c < s->c; ++c) {
      char *xc = xv->base + (n * xv->strides[0] + c * xv->strides[1]) * e;
      char *yc = yv->base + (n * yv->strides[0] + c * yv->strides[1]) * e;
      char *wc = wv->base + c * wv->strides[0] * e;
      for (int64_t oh = 0; oh < s->oh; ++oh)
        for (int64_t i = 0; i < s->kh; ++i) {
          int64_t r = oh * s->sh + i * s->dh - s->ph;
          if (r < 0 || r >= s->h)
            continue;
          for (int64_t j = 0; j < s->kw; ++j) {
            int64_t first, lo, hi;
            windowColumns(s, j, &first, &lo, &hi);
            int64_t count = hi - lo;
            if (count <= 0)
              continue;
            char *wr = wc + (i * wv->strides[2] + j * wv->strides[3]) * e;
            char *xr = xc + (r * xv->strides[2] +
                             (lo * s->sw - first) * xv->strides[3]) *
                                e;
            char *yr = yc + (oh * yv->strides[2] + lo * ystep) * e;
            if (e == 4)
              DEPTHWISE_ROW(float);
            else
              DEPTHWISE_ROW(double);
          }
        }
    }
}

/* One row's `count` elements of type T between col (`row` from column
 * `lo`) and X (`at`, `step` elements apart), in the direction `toCol`. */
#define TRANSFER_ROW(T)                                                        \
  do {                                                                         \
    T *cr = (T *)(row + lo * e), *xr = (T *)at;                                \
    if (toCol)                                                                 \
      for (int64_t k = 0; k < count; ++k)                                      \
        cr[k] = xr[k * step];                                                  \
    else                                                                       \
      for (int64_t k = 0; k < count; ++k)                                      \
        xr[k * step] += cr[k];                                                 \
  } while (0)

/* Between col (K x P, row-major) of image n, group g and X: im2col
 * (`toCol`) sets col from X, 0 in the padding; col2im adds col to X, the
 * padding's entries dropped. */
static void transferCol(const conv_operand_t *x, const conv_shape_t *s,
                        int64_t n, int64_t g, char *col, int toCol) {
  const soaprt_region_t *v = &x->view;
  int64_t e = v->elemSize, cg = s->c / s->groups, sx = v->strides[3];
  int64_t step = s->sw * sx;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t i = 0; i < s->kh; ++i)
      for (int64_t j = 0; j < s->kw; ++j) {
        int64_t first, lo, hi;
        windowColumns(s, j, &first, &lo, &hi);
        for (int64_t oh = 0; oh < s->oh; ++oh) {
          int64_t r = oh * s->sh + i * s->dh - s->ph;
          char *row =
              col + (((c * s->kh + i) * s->kw + j) * s->oh + oh) * s->ow * e;
          int inside = r >= 0 && r < s->h;
          if (toCol) {
            if (!inside) {
              memset(row, 0, (size_t)(s->ow * e));
              continue;
            }
            memset(row, 0, (size_t)(lo * e));
            memset(row + hi * e, 0, (size_t)((s->ow - hi) * e));
          } else if (!inside) {
            continue;
          }
          char *at =
              v->base + (n * v->strides[0] + (g * cg + c) * v->strides[1] +
                         r * v->strides[2] + (lo * s->sw - first) * sx) *
                            e;
          int64_t count = hi - lo;
          if (toCol && step == 1) { /* one run */
            memcpy(row + lo * e, at, (size_t)(count * e));
          } else if (e == 4) {
            TRANSFER_ROW(float);
          } else {
            TRANSFER_ROW(double);
          }
        }
      }
}

/* Y += conv(X, W); dW += the filter gradient from X and dY (then `w` is dW
 * and `y` dY); or dX += the input gradient from W and dY (`x` is dX, `y`
 * dY). */
static void convolution(soaprt_unranked_memref_t *xRef,
                        soaprt_unranked_memref_t *wRef,
                        soaprt_unranked_memref_t *yRef, conv_kind_t kind,
                        int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                        int64_t ph, int64_t pw, int64_t groups, int64_t flags,
                        const char *op, int64_t e) {
  static const char *const defaultName[] = {"convolution",
                                            "convolution filter gradient",
                                            "convolution input gradient"};
  if (!op)
    op = defaultName[kind];
  conv_operand_t x, w, y;
  describe(&x, xRef, e, kind == INPUT_GRAD ? "dX" : "X", op);
  describe(&w, wRef, e, kind == FILTER_GRAD ? "dW" : "W", op);
  describe(&y, yRef, e, kind == FORWARD ? "Y" : "dY", op);
  conv_shape_t s = checkShape(&x, &w, &y, sh, sw, dh, dw, ph, pw, groups, op);
  int overwrite = (flags & SOAPRT_BLAS_OVERWRITE) != 0;
  int64_t fg = s.f / groups, cg = s.c / groups;
  int64_t K = cg * s.kh * s.kw, P = s.oh * s.ow;
  conv_operand_t *out = kind == FORWARD ? &y : kind == FILTER_GRAD ? &w : &x;
  if (soaprt_region_elements(&out->view) == 0)
    return;
  if (s.n == 0 || K == 0 || P == 0 || fg == 0) {
    if (overwrite)
      soaprt_blas_zero(&out->view, op);
    return;
  }
  if (cg == 1 && fg == 1) {
    if (overwrite)
      soaprt_blas_zero(&out->view, op);
    depthwise(&x, &w, &y, &s, kind);
    return;
  }
  if (!soaprt_fits_int(K) || !soaprt_fits_int(P) || !soaprt_fits_int(fg) ||
      !soaprt_fits_int(K * P))
    soaprt_fatal("%s: convolution dimensions beyond 2^31 are not supported",
                 op);
  /* W's rows (a filter's C/G x KH x KW) and Y's (an image's and filter's
   * OH x OW) as matrices, with their values unless overwritten. */
  prepare(&w, 3, !(kind == FILTER_GRAD && overwrite), op);
  prepare(&y, 2, !(kind == FORWARD && overwrite), op);
  if (!soaprt_fits_int(w.s0) || !soaprt_fits_int(y.ld))
    soaprt_fatal("%s: convolution strides beyond 2^31 are not supported", op);
  /* A 1x1 window at stride 1 without padding over rows of X that are one
   * run each: col is X's channels as they are (rows `ldcol` apart). */
  const soaprt_region_t *xv = &x.view;
  int direct = s.kh == 1 && s.kw == 1 && sh == 1 && sw == 1 && ph == 0 &&
               pw == 0 && trailingContiguous(xv, 2) &&
               (cg == 1 || xv->strides[1] >= P) &&
               soaprt_fits_int(xv->strides[1]);
  int64_t ldcol = direct ? (cg == 1 ? P : xv->strides[1]) : P;
  char *buffer =
      direct ? NULL : soaprt_blas_alloc(K * P * e, "the im2col buffer", op);
  /* col2im adds into dX. */
  if (kind == INPUT_GRAD && overwrite && !direct)
    soaprt_blas_zero(xv, op);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      char *col = buffer;
      if (direct)
        col = xv->base + (n * xv->strides[0] + g * cg * xv->strides[1]) * e;
      else if (kind != INPUT_GRAD)
        transferCol(&x, &s, n, g, col, /*toCol=*/1);
      char *wg = w.base + g * fg * w.s0 * e;
      char *yng = y.base + (n * y.s0 + g * fg * y.ld) * e;
      switch (kind) {
      case FORWARD:
        soaprt_blas_gemm(e, CblasRowMajor, CblasNoTrans, CblasNoTrans, fg, P, K,
                         wg, w.s0, col, ldcol, overwrite, yng, y.ld);
        break;
      case FILTER_GRAD:
        soaprt_blas_gemm(e, CblasRowMajor, CblasNoTrans, CblasTrans, fg, K, P,
                         yng, y.ld, col, ldcol, overwrite && n == 0, wg, w.s0);
        break;
      case INPUT_GRAD:
        soaprt_blas_gemm(e, CblasRowMajor, CblasTrans, CblasNoTrans, K, P, fg,
                         wg, w.s0, yng, y.ld, overwrite || !direct, col, ldcol);
        if (!direct)
          transferCol(&x, &s, n, g, col, /*toCol=*/0);
        break;
      }
    }
  free(buffer);
  if (out->packed)
    soaprt_copy_region(&out->view, out->packed, 0);
  free(w.packed);
  free(y.packed);
}

/* Entry point `name`, its operands `a`, `b`, `c` in the call's order,
 * computing `kind` on X, W (or dW) and Y (or dY) = `x`, `w`, `y` of
 * `elemSize`-byte elements. */
#define BLAS_CONV_ENTRY(name, a, b, c, kind, x, w, y, elemSize)                \
  SOAPRT_CONV_SIGNATURE(name, a, b, c) {                                       \
    convolution(x, w, y, kind, strideH, strideW, dilationH, dilationW, padH,   \
                padW, groups, flags, op, elemSize);                            \
  }
/* The three calls for elements `suffix` of `elemSize` bytes. */
#define BLAS_CONV_ENTRIES(suffix, elemSize)                                    \
  BLAS_CONV_ENTRY(_mlir_ciface_soaprt_cpu_conv2d_##suffix, x, w, y, FORWARD,   \
                  x, w, y, elemSize)                                           \
  BLAS_CONV_ENTRY(_mlir_ciface_soaprt_cpu_conv2d_filter_grad_##suffix, x, dy,  \
                  dw, FILTER_GRAD, x, dw, dy, elemSize)                        \
  BLAS_CONV_ENTRY(_mlir_ciface_soaprt_cpu_conv2d_input_grad_##suffix, w, dy,   \
                  dx, INPUT_GRAD, dx, w, dy, elemSize)

BLAS_CONV_ENTRIES(f32, 4)
BLAS_CONV_ENTRIES(f64, 8)
