/*===- float_formats_host.c - f32, f16 and bf16 for the emulated libraries -===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h): the
 * element formats cuBLAS's and cuDNN's emulations read and write, converted
 * to and from double (they compute in double and round once per result).
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"
#include "soaprt_float16.h"

int soaprt_emu_float_bytes(soaprt_emu_float_t t) {
  return t == SOAPRT_EMU_F32 ? 4 : 2;
}

double soaprt_emu_load(soaprt_emu_float_t t, const void *p, long long i) {
  switch (t) {
  case SOAPRT_EMU_F16:
    return soaprt_half_to_float(((const uint16_t *)p)[i]);
  case SOAPRT_EMU_BF16:
    return soaprt_bf16_to_float(((const uint16_t *)p)[i]);
  default:
    return ((const float *)p)[i];
  }
}

void soaprt_emu_store(soaprt_emu_float_t t, void *p, long long i, double v) {
  switch (t) {
  case SOAPRT_EMU_F16:
    ((uint16_t *)p)[i] = soaprt_float_to_half((float)v);
    break;
  case SOAPRT_EMU_BF16:
    ((uint16_t *)p)[i] = soaprt_float_to_bf16((float)v);
    break;
  default:
    ((float *)p)[i] = (float)v;
    break;
  }
}
