/* Drives libsoaprt_blas's convolutions (soaprt_blas_conv.c) by hand
 * against plain loops in double: forward, filter and input gradient, with
 * strides, dilations, padding and groups (depthwise ones: the runtime's
 * direct loops); every operand in the layouts the
 * CPU target's views can have (NCHW-ordered dims over row-major storage,
 * over channels-last storage: a transposed view, or with every element 2
 * apart: packed by the runtime; a 1x1 window at stride 1 over row-major X
 * is read in place); the output accumulated or overwritten (a
 * NaN in it must not survive an overwrite); f32 and f64. Small integers,
 * so every sum is exact. Prints one line per failing case and
 * "N cases, M failed". */
#include "soap/Runtime/soaprt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank-4 strided memref descriptor (what MLIR passes). */
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} desc4_t;

enum { PLAIN, LAST, GAPPED };
static const char *layoutName[] = {"plain", "channels-last", "gapped"};

/* An a x b x c x d view of a fresh buffer: row-major; with dim 1
 * innermost in memory (a x c x d x b storage); or row-major with every
 * element 2 apart. */
static desc4_t makeView(int64_t a, int64_t b, int64_t c, int64_t d, int layout,
                        int64_t elem, void **buffer) {
  int64_t gap = layout == GAPPED ? 2 : 1;
  *buffer = calloc((size_t)(a * b * c * d * gap + 1), (size_t)elem);
  desc4_t v = {*buffer, *buffer, 1, {a, b, c, d}, {0, 0, 0, 0}};
  if (layout == LAST) {
    v.strides[1] = 1;
    v.strides[3] = b;
    v.strides[2] = d * b;
    v.strides[0] = c * d * b;
  } else {
    v.strides[3] = gap;
    v.strides[2] = d * gap;
    v.strides[1] = c * d * gap;
    v.strides[0] = b * c * d * gap;
  }
  return v;
}

static double get(desc4_t *v, int64_t i, int64_t j, int64_t k, int64_t l,
                  int f64) {
  int64_t at = v->offset + i * v->strides[0] + j * v->strides[1] +
               k * v->strides[2] + l * v->strides[3];
  return f64 ? ((double *)v->aligned)[at] : ((float *)v->aligned)[at];
}
static void set(desc4_t *v, int64_t i, int64_t j, int64_t k, int64_t l, int f64,
                double x) {
  int64_t at = v->offset + i * v->strides[0] + j * v->strides[1] +
               k * v->strides[2] + l * v->strides[3];
  if (f64)
    ((double *)v->aligned)[at] = x;
  else
    ((float *)v->aligned)[at] = (float)x;
}

typedef struct {
  int64_t n, c, h, w, f, kh, kw, sh, sw, dh, dw, ph, pw, g;
} shape_t;

enum { FORWARD, FILTER_GRAD, INPUT_GRAD };
static const char *kindName[] = {"forward", "filter-grad", "input-grad"};

static int runCase(const shape_t *s, int lx, int lw, int ly, int kind,
                   int overwrite, int f64) {
  int64_t e = f64 ? 8 : 4, cg = s->c / s->g, fg = s->f / s->g;
  int64_t oh = (s->h + 2 * s->ph - (s->kh - 1) * s->dh - 1) / s->sh + 1;
  int64_t ow = (s->w + 2 * s->pw - (s->kw - 1) * s->dw - 1) / s->sw + 1;
  void *bx, *bw, *by;
  desc4_t X = makeView(s->n, s->c, s->h, s->w, lx, e, &bx);
  desc4_t W = makeView(s->f, cg, s->kh, s->kw, lw, e, &bw);
  desc4_t Y = makeView(s->n, s->f, oh, ow, ly, e, &by);
  /* The output: Y (forward), dW or dX; the two others are inputs. */
  desc4_t *out = kind == FORWARD ? &Y : kind == FILTER_GRAD ? &W : &X;
  unsigned seed = (unsigned)(s->n * 131 + s->c * 31 + s->h * 7 + s->f + lx * 3 +
                             lw * 5 + ly * 11 + kind * 13);
  desc4_t *operands[3] = {&X, &W, &Y};
  for (int o = 0; o < 3; ++o) {
    desc4_t *in = operands[o];
    if (in == out)
      continue;
    for (int64_t i = 0; i < in->sizes[0]; ++i)
      for (int64_t j = 0; j < in->sizes[1]; ++j)
        for (int64_t k = 0; k < in->sizes[2]; ++k)
          for (int64_t l = 0; l < in->sizes[3]; ++l)
            set(in, i, j, k, l, f64, (double)(rand_r(&seed) % 7) - 3);
  }
  /* The output starts with its own values (or NaNs where it is
   * overwritten). */
  int64_t total = out->sizes[0] * out->sizes[1] * out->sizes[2] * out->sizes[3];
  double *ref = malloc(sizeof(double) * (size_t)(total + 1));
  for (int64_t i = 0; i < out->sizes[0]; ++i)
    for (int64_t j = 0; j < out->sizes[1]; ++j)
      for (int64_t k = 0; k < out->sizes[2]; ++k)
        for (int64_t l = 0; l < out->sizes[3]; ++l) {
          double v = overwrite && (i + j + k + l) % 3 == 0
                         ? NAN
                         : (double)(i - j + k - l);
          set(out, i, j, k, l, f64, v);
          ref[((i * out->sizes[1] + j) * out->sizes[2] + k) * out->sizes[3] +
              l] = overwrite ? 0 : v;
        }
  /* The reference: every product of the convolution, added where it goes. */
  for (int64_t n = 0; n < s->n; ++n)
    for (int64_t f = 0; f < s->f; ++f)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x)
            for (int64_t i = 0; i < s->kh; ++i)
              for (int64_t j = 0; j < s->kw; ++j) {
                int64_t r = y * s->sh + i * s->dh - s->ph;
                int64_t q = x * s->sw + j * s->dw - s->pw;
                if (r < 0 || r >= s->h || q < 0 || q >= s->w)
                  continue;
                int64_t xc = (f / fg) * cg + c;
                if (kind == FILTER_GRAD)
                  ref[((f * cg + c) * s->kh + i) * s->kw + j] +=
                      get(&X, n, xc, r, q, f64) * get(&Y, n, f, y, x, f64);
                else if (kind == FORWARD)
                  ref[((n * s->f + f) * oh + y) * ow + x] +=
                      get(&X, n, xc, r, q, f64) * get(&W, f, c, i, j, f64);
                else
                  ref[((n * s->c + xc) * s->h + r) * s->w + q] +=
                      get(&W, f, c, i, j, f64) * get(&Y, n, f, y, x, f64);
              }
  soaprt_unranked_memref_t ux = {4, &X}, uw = {4, &W}, uy = {4, &Y};
  int64_t flags = overwrite ? SOAPRT_BLAS_OVERWRITE : 0;
  if (kind == INPUT_GRAD && f64)
    _mlir_ciface_soaprt_cpu_conv2d_input_grad_f64(&uw, &uy, &ux, s->sh, s->sw,
                                                  s->dh, s->dw, s->ph, s->pw,
                                                  s->g, flags, "test");
  else if (kind == INPUT_GRAD)
    _mlir_ciface_soaprt_cpu_conv2d_input_grad_f32(&uw, &uy, &ux, s->sh, s->sw,
                                                  s->dh, s->dw, s->ph, s->pw,
                                                  s->g, flags, "test");
  else if (kind == FILTER_GRAD && f64)
    _mlir_ciface_soaprt_cpu_conv2d_filter_grad_f64(&ux, &uy, &uw, s->sh, s->sw,
                                                   s->dh, s->dw, s->ph, s->pw,
                                                   s->g, flags, "test");
  else if (kind == FILTER_GRAD)
    _mlir_ciface_soaprt_cpu_conv2d_filter_grad_f32(&ux, &uy, &uw, s->sh, s->sw,
                                                   s->dh, s->dw, s->ph, s->pw,
                                                   s->g, flags, "test");
  else if (f64)
    _mlir_ciface_soaprt_cpu_conv2d_f64(&ux, &uw, &uy, s->sh, s->sw, s->dh,
                                       s->dw, s->ph, s->pw, s->g, flags,
                                       "test");
  else
    _mlir_ciface_soaprt_cpu_conv2d_f32(&ux, &uw, &uy, s->sh, s->sw, s->dh,
                                       s->dw, s->ph, s->pw, s->g, flags,
                                       "test");
  int bad = 0;
  for (int64_t i = 0; i < out->sizes[0] && !bad; ++i)
    for (int64_t j = 0; j < out->sizes[1] && !bad; ++j)
      for (int64_t k = 0; k < out->sizes[2] && !bad; ++k)
        for (int64_t l = 0; l < out->sizes[3] && !bad; ++l) {
          double got = get(out, i, j, k, l, f64);
          double want = ref[((i * out->sizes[1] + j) * out->sizes[2] + k) *
                                out->sizes[3] +
                            l];
          if (!(got == want)) {
            printf("FAIL %s %s X %lldx%lldx%lldx%lld W %lldx%lldx%lldx%lld "
                   "stride %lldx%lld dilation %lldx%lld pad %lldx%lld "
                   "groups %lld, X %s W %s Y %s%s: [%lld][%lld][%lld][%lld] "
                   "= %g, expected %g\n",
                   f64 ? "f64" : "f32", kindName[kind], (long long)s->n,
                   (long long)s->c, (long long)s->h, (long long)s->w,
                   (long long)s->f, (long long)cg, (long long)s->kh,
                   (long long)s->kw, (long long)s->sh, (long long)s->sw,
                   (long long)s->dh, (long long)s->dw, (long long)s->ph,
                   (long long)s->pw, (long long)s->g, layoutName[lx],
                   layoutName[lw], layoutName[ly],
                   overwrite ? " overwritten" : "", (long long)i, (long long)j,
                   (long long)k, (long long)l, got, want);
            bad = 1;
          }
        }
  free(bx);
  free(bw);
  free(by);
  free(ref);
  return bad;
}

/* Calls the runtime with operands that do not fit (`what`: "shape", a
 * filter of the wrong channel count; "rank", a rank-3 X; "groups", a group
 * count that does not divide the channels; "stride", a negative stride in
 * Y; "input-grad", an input gradient with a negative stride in dX;
 * "input-grad-shape", one whose dX has the wrong channel count): it
 * must end the process with a message naming the op. */
static int badCall(const char *what) {
  void *bx, *bw, *by;
  desc4_t X = makeView(1, 4, 6, 6, PLAIN, 4, &bx);
  desc4_t W = makeView(2, 3, 3, 3, PLAIN, 4, &bw);
  desc4_t Y = makeView(1, 2, 4, 4, PLAIN, 4, &by);
  soaprt_unranked_memref_t ux = {4, &X}, uw = {4, &W}, uy = {4, &Y};
  int64_t groups = 1;
  if (strcmp(what, "rank") == 0)
    ux.rank = 3;
  else if (strcmp(what, "groups") == 0)
    groups = 3;
  else if (strcmp(what, "stride") == 0)
    Y.strides[3] = -1;
  else if (strcmp(what, "input-grad") == 0)
    X.strides[2] = -6;
  else if (strcmp(what, "input-grad-shape") == 0)
    X.sizes[1] = 5; /* dX of 5 channels: W has 3 per filter */
  else
    W.sizes[1] = 3; /* 4 channels: W must have 4 per filter */
  if (strncmp(what, "input-grad", 10) == 0)
    _mlir_ciface_soaprt_cpu_conv2d_input_grad_f32(&uw, &uy, &ux, 1, 1, 1, 1, 0,
                                                  0, groups, 0, "conv 'c1'");
  else
    _mlir_ciface_soaprt_cpu_conv2d_f32(&ux, &uw, &uy, 1, 1, 1, 1, 0, 0, groups,
                                       0, "conv 'c1'");
  printf("no error\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--bad") == 0)
    return badCall(argv[2]);
  int cases = 0, failed = 0;
  static const shape_t shapes[] = {
      /* n  c  h  w  f kh kw sh sw dh dw ph pw g */
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 0, 0, 1},  /* plain */
      {1, 2, 9, 8, 3, 3, 2, 2, 3, 1, 1, 1, 0, 1},  /* strided, padded */
      {2, 4, 8, 9, 6, 2, 3, 1, 2, 2, 1, 1, 2, 2},  /* dilated, grouped */
      {3, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4},  /* depthwise */
      {2, 3, 9, 8, 3, 3, 2, 2, 3, 2, 1, 1, 2, 3},  /* depthwise, strided,
                                                      dilated, padded */
      {1, 1, 4, 4, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},  /* 1x1, one channel */
      {2, 5, 6, 7, 2, 1, 1, 2, 2, 1, 1, 0, 0, 1},  /* 1x1 strided */
      {2, 6, 5, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 2},  /* 1x1, read in place */
      {3, 4, 1, 5, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1},  /* 1x1, one row */
      {0, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 0, 0, 1}}; /* no images: dW = 0 */
  int numShapes = (int)(sizeof shapes / sizeof shapes[0]);
  for (int s = 0; s < numShapes; ++s)
    for (int lx = 0; lx < 3; ++lx)
      for (int lw = 0; lw < 3; ++lw)
        for (int ly = 0; ly < 3; ++ly)
          for (int kind = FORWARD; kind <= INPUT_GRAD; ++kind)
            for (int flags = 0; flags < 4; ++flags) {
              int overwrite = flags & 1, f64 = (flags >> 1) & 1;
              ++cases;
              failed += runCase(&shapes[s], lx, lw, ly, kind, overwrite, f64);
            }
  printf("%d cases, %d failed\n", cases, failed);
  return failed != 0;
}
