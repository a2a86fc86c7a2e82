/*===- float_formats_host.c - f32, f16 and bf16 for the emulated libraries -===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h): the
 * element formats cuBLAS's and cuDNN's emulations read and write, converted
 * to and from double (they compute in double and round once per result).
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* IEEE half and bfloat16 <-> float (round to nearest even; NaN stays NaN). */
static float halfToFloat(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
static uint16_t floatToHalf(float f) {
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
static float bf16ToFloat(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}
static uint16_t floatToBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

int soaprt_emu_float_bytes(soaprt_emu_float_t t) {
  return t == SOAPRT_EMU_F32 ? 4 : 2;
}

double soaprt_emu_load(soaprt_emu_float_t t, const void *p, long long i) {
  switch (t) {
  case SOAPRT_EMU_F16:
    return halfToFloat(((const uint16_t *)p)[i]);
  case SOAPRT_EMU_BF16:
    return bf16ToFloat(((const uint16_t *)p)[i]);
  default:
    return ((const float *)p)[i];
  }
}

void soaprt_emu_store(soaprt_emu_float_t t, void *p, long long i, double v) {
  switch (t) {
  case SOAPRT_EMU_F16:
    ((uint16_t *)p)[i] = floatToHalf((float)v);
    break;
  case SOAPRT_EMU_BF16:
    ((uint16_t *)p)[i] = floatToBf16((float)v);
    break;
  default:
    ((float *)p)[i] = (float)v;
    break;
  }
}
