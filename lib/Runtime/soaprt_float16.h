/*===- soaprt_float16.h - bf16 and f16 <-> float for libsoaprt -------------===*
 *
 * The 16-bit float formats MPI and the host know nothing of: IEEE half
 * (f16) and bfloat16 to float, and float to them rounded to nearest even
 * (NaN stays NaN, overflow is infinity). Shared by the CPU back end's
 * reductions (soaprt.c), its random inputs (soaprt_main.c) and the host
 * emulation of cuBLAS and cuDNN (emulation/float_formats_host.c).
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_FLOAT16_H
#define SOAP_RUNTIME_SOAPRT_FLOAT16_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float soaprt_half_to_float(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
static inline uint16_t soaprt_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  float a = fabsf(f);
  if (a != a)
    return sign | 0x7e00;
  if (a >= 65520.0f) /* rounds past the largest half, 65504 */
    return sign | 0x7c00;
  if (a < 6.103515625e-05f) /* subnormal: multiples of 2^-24 */
    return sign | (uint16_t)lrintf(a * 16777216.0f);
  int e;
  float m = frexpf(a, &e);      /* a = m 2^e, m in [0.5, 1) */
  long q = lrintf(m * 2048.0f); /* 11 significant bits, ties to even */
  if (q == 2048) {
    q = 1024;
    ++e;
  }
  return sign | (uint16_t)(((e + 14) << 10) + (q - 1024));
}
static inline float soaprt_bf16_to_float(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static inline uint16_t soaprt_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

#endif /* SOAP_RUNTIME_SOAPRT_FLOAT16_H */
