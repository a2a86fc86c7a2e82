/*===- soaprt_cuda_copy.c - Strided copies on the rank's stream -----------===*
 *
 * A copy between two strided views drops unit dims and merges dims that are
 * contiguous in both views, then runs as cudaMemcpy2DAsync calls: rows of
 * the innermost dim when it is unit-stride on both sides (the usual case:
 * a subview of a row-major tensor), else single elements with the strides
 * as pitches, looping over the remaining outer dims. cudaMemcpyDefault lets
 * either side be host or device memory (unified addressing).
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* One 2-D copy: `height` rows of `width` bytes, pitches in bytes. */
static void copy2d(char *dst, int64_t dpitch, const char *src, int64_t spitch,
                   int64_t width, int64_t height, cudaStream_t stream,
                   const char *op) {
  int64_t maxPitch = (int64_t)soaprt_cuda.maxPitch;
  if (height == 1 || (dpitch == width && spitch == width)) {
    SOAPRT_CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)(width * height),
                                      cudaMemcpyDefault, stream),
                      op);
  } else if (dpitch >= width && spitch >= width && dpitch <= maxPitch &&
             spitch <= maxPitch) {
    SOAPRT_CUDA_CHECK(cudaMemcpy2DAsync(dst, (size_t)dpitch, src,
                                        (size_t)spitch, (size_t)width,
                                        (size_t)height, cudaMemcpyDefault,
                                        stream),
                      op);
  } else { /* pitches cudaMemcpy2D does not take (huge, overlapping, 0) */
    for (int64_t row = 0; row < height; ++row)
      SOAPRT_CUDA_CHECK(cudaMemcpyAsync(dst + row * dpitch, src + row * spitch,
                                        (size_t)width, cudaMemcpyDefault,
                                        stream),
                        op);
  }
}

void soaprt_cuda_copy(char *dst, const int64_t *dstStrides, const char *src,
                      const int64_t *srcStrides, const int64_t *sizes,
                      int64_t rank, int64_t elemSize, const char *op) {
  cudaStream_t stream = soaprt_cuda_stream(op);
  if (rank < 0 || rank > SOAPRT_MAX_RANK)
    soaprt_fatal("%s: views of rank %lld are not supported", op,
                 (long long)rank);
  /* Non-unit dims, outermost first, merged where both views allow. */
  int64_t n[SOAPRT_MAX_RANK], ds[SOAPRT_MAX_RANK], ss[SOAPRT_MAX_RANK];
  int r = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] <= 0)
      return; /* empty */
    if (sizes[d] == 1)
      continue;
    if (r > 0 && ds[r - 1] == sizes[d] * dstStrides[d] &&
        ss[r - 1] == sizes[d] * srcStrides[d]) {
      n[r - 1] *= sizes[d];
      ds[r - 1] = dstStrides[d];
      ss[r - 1] = srcStrides[d];
      continue;
    }
    n[r] = sizes[d];
    ds[r] = dstStrides[d];
    ss[r] = srcStrides[d];
    ++r;
  }
  if (r == 0) {
    copy2d(dst, elemSize, src, elemSize, elemSize, 1, stream, op);
    return;
  }
  int64_t width, height, dpitch, spitch;
  int outer;
  if (ds[r - 1] == 1 && ss[r - 1] == 1) { /* rows of the innermost dim */
    width = n[r - 1] * elemSize;
    height = r >= 2 ? n[r - 2] : 1;
    dpitch = r >= 2 ? ds[r - 2] * elemSize : width;
    spitch = r >= 2 ? ss[r - 2] * elemSize : width;
    outer = r >= 2 ? r - 2 : 0;
  } else { /* single elements */
    width = elemSize;
    height = n[r - 1];
    dpitch = ds[r - 1] * elemSize;
    spitch = ss[r - 1] * elemSize;
    outer = r - 1;
  }
  int64_t index[SOAPRT_MAX_RANK] = {0};
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int d = 0; d < outer; ++d) {
      doff += index[d] * ds[d];
      soff += index[d] * ss[d];
    }
    copy2d(dst + doff * elemSize, dpitch, src + soff * elemSize, spitch, width,
           height, stream, op);
    int d = outer - 1;
    for (; d >= 0; --d) {
      if (++index[d] < n[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      break;
  }
}

void soaprt_cuda_copy_region(const soaprt_region_t *dst,
                             const soaprt_region_t *src, const char *op) {
  int same = dst->rank == src->rank && dst->elemSize == src->elemSize;
  for (int64_t d = 0; same && d < dst->rank; ++d)
    same = dst->sizes[d] == src->sizes[d];
  if (!same)
    soaprt_fatal("%s: source and destination views differ in shape", op);
  soaprt_cuda_copy(dst->base, dst->strides, src->base, src->strides, src->sizes,
                   src->rank, src->elemSize, op);
}

/* Row-major strides of a region's shape. */
static void packedStrides(const soaprt_region_t *r, int64_t *strides) {
  int64_t stride = 1;
  for (int64_t d = r->rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= r->sizes[d];
  }
}

char *soaprt_cuda_pack(const soaprt_region_t *r, int fill, const char *op) {
  if (r->rank > SOAPRT_MAX_RANK)
    soaprt_fatal("%s: views of rank %lld are not supported", op,
                 (long long)r->rank);
  if (soaprt_region_contiguous(r))
    return r->base;
  int64_t bytes = soaprt_region_elements(r) * r->elemSize;
  char *packed = (char *)soaprt_cuda_alloc((size_t)bytes, op);
  if (fill) {
    int64_t strides[SOAPRT_MAX_RANK];
    packedStrides(r, strides);
    soaprt_cuda_copy(packed, strides, r->base, r->strides, r->sizes, r->rank,
                     r->elemSize, op);
  }
  return packed;
}

void soaprt_cuda_unpack(const soaprt_region_t *r, char *packed, int store,
                        const char *op) {
  if (packed == r->base)
    return;
  if (store) {
    int64_t strides[SOAPRT_MAX_RANK];
    packedStrides(r, strides);
    soaprt_cuda_copy(r->base, r->strides, packed, strides, r->sizes, r->rank,
                     r->elemSize, op);
  }
  soaprt_cuda_free(packed, op);
}

/* Host memory: element by element on the CPU (no wait for the GPU). */
static void hostGather(const soaprt_region_t *r, char *out) {
  int64_t index[SOAPRT_MAX_RANK] = {0};
  int64_t n = soaprt_region_elements(r);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < r->rank; ++d)
      offset += index[d] * r->strides[d];
    memcpy(out + i * r->elemSize, r->base + offset * r->elemSize,
           (size_t)r->elemSize);
    for (int64_t d = r->rank - 1; d >= 0; --d) {
      if (++index[d] < r->sizes[d])
        break;
      index[d] = 0;
    }
  }
}

void soaprt_cuda_download(const soaprt_region_t *r, void *host,
                          const char *op) {
  if (r->rank > SOAPRT_MAX_RANK)
    soaprt_fatal("%s: views of rank %lld are not supported", op,
                 (long long)r->rank);
  if (soaprt_region_elements(r) == 0)
    return;
  if (!soaprt_cuda_is_device_pointer(r->base)) {
    hostGather(r, (char *)host);
    return;
  }
  int64_t strides[SOAPRT_MAX_RANK];
  packedStrides(r, strides);
  soaprt_cuda_copy((char *)host, strides, r->base, r->strides, r->sizes,
                   r->rank, r->elemSize, op);
  soaprt_cuda_sync(op);
}
