/* Drives libsoaprt_cuda_emu's access profiler (emulation/kernel_profile.c)
 * by hand with access patterns whose sector counts are known: what an
 * emulated kernel built with --cuda-emulation-profile calls. */
#include <stdint.h>

void soaprt_emu_profile_launch(const char *name, int64_t sites);
void soaprt_emu_profile_thread(int64_t block, int64_t thread);
void soaprt_emu_profile_access(int64_t site, int64_t address, int64_t bytes,
                               int64_t isStore);
void soaprt_emu_profile_launch_end(void);

/* Every thread of `blocks` x `threads` accesses float `index(b, t, k)` of
 * a buffer at 4096, `perThread` times. */
static void launch(const char *name, int blocks, int threads, int perThread,
                   int64_t (*index)(int64_t, int64_t, int64_t)) {
  soaprt_emu_profile_launch(name, 1);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t t = 0; t < threads; ++t) {
      soaprt_emu_profile_thread(b, t);
      for (int64_t k = 0; k < perThread; ++k)
        soaprt_emu_profile_access(0, 4096 + 4 * index(b, t, k), 4, 0);
    }
  soaprt_emu_profile_launch_end();
}

static int64_t contiguous(int64_t b, int64_t t, int64_t k) {
  (void)k;
  return b * 64 + t;
}
static int64_t rowPerThread(int64_t b, int64_t t, int64_t k) {
  return (b * 64 + t) * 32 + k; /* each thread reads its own row */
}
static int64_t broadcast(int64_t b, int64_t t, int64_t k) {
  (void)b, (void)t, (void)k;
  return 0;
}
static int64_t stride2(int64_t b, int64_t t, int64_t k) {
  (void)k;
  return 2 * (b * 64 + t);
}

int main(void) {
  /* 2 blocks x 64 threads: 4 warps, each request 32 floats in 4 sectors. */
  launch("contiguous", 2, 64, 1, contiguous);
  /* 32 requests per warp, each 32 floats a row (128 bytes) apart: 32
     sectors where 4 could hold the bytes; the footprint is every float
     once (64 rows x 128 bytes: 256 sectors). */
  launch("row-per-thread", 1, 64, 32, rowPerThread);
  /* One float for the whole warp: 1 sector, as few as can be. */
  launch("broadcast", 1, 64, 1, broadcast);
  /* Every other float: 8 sectors for 128 distinct bytes. */
  launch("stride-2", 1, 64, 1, stride2);
  /* Launched again: its row counts add up. */
  launch("contiguous", 2, 64, 1, contiguous);
  return 0;
}
