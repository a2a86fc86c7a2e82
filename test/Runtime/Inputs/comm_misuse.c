/* Misuses of libsoaprt's asynchronous communication and of
 * soaprt_input_random_range (soaprt.h), one per run (argv[1]); each must
 * stop with a clear message and a non-zero status. Compiled code never
 * does these (soap-cuda-async-communication places every wait outside
 * groups and after its start; soap-cpu-entry gives a range after binding
 * the input, the verifier checks it); a hand-written caller may. Test:
 * test/Runtime/comm-misuse.test. */
#include "soap/Runtime/soaprt.h"

#include <stdint.h>
#include <string.h>

/* A rank-1 memref descriptor (MLIR's C interface) over `data`. */
typedef struct {
  void *allocated, *aligned;
  int64_t offset, size, stride;
} memref1_t;

int main(int argc, char **argv) {
  if (soaprt_init(&argc, &argv) != 0)
    return 2;
  const char *what = argc > 1 ? argv[1] : "";
  float data[4] = {1, 2, 3, 4};
  int64_t devices[2] = {0, 1};
  memref1_t d = {data, data, 0, 4, 1}, l = {devices, devices, 0, 1, 1};
  soaprt_unranked_memref_t region = {1, &d}, list = {1, &l};
  /* Three elements over devices 0 and 1 (run on 2 ranks). */
  memref1_t d3 = {data, data, 0, 3, 1}, l2 = {devices, devices, 0, 2, 1};
  soaprt_unranked_memref_t region3 = {1, &d3}, pair = {1, &l2};
  if (!strcmp(what, "wait")) {
    soaprt_comm_wait(5);
  } else if (!strcmp(what, "end")) {
    soaprt_comm_group_end();
  } else if (!strcmp(what, "open-group")) {
    soaprt_comm_group_begin();
  } else if (!strcmp(what, "uneven")) {
    soaprt_reduce_scatter(&region3, SOAPRT_F32, SOAPRT_SUM, 0, &pair);
  } else if (!strcmp(what, "dim")) {
    soaprt_all_gather(&region, SOAPRT_F32, 1, &pair);
  } else if (!strcmp(what, "range-unbound")) {
    soaprt_input_random_range(3, -1.0, 1.0);
  } else if (!strcmp(what, "range-empty")) {
    soaprt_bind_input(0, &region, SOAPRT_F32);
    soaprt_input_random_range(0, 0.5, 0.5);
  } else if (!strcmp(what, "none")) {
    /* Allowed: nothing to wait for (ticket 0), an empty group, an
       all-reduce in a group (a bucket of gradients). */
    soaprt_comm_wait(0);
    soaprt_comm_group_begin();
    soaprt_comm_group_end();
    soaprt_comm_group_begin();
    soaprt_comm_wait(
        soaprt_all_reduce_start(&region, SOAPRT_F32, SOAPRT_SUM, &list));
    soaprt_comm_group_end();
    soaprt_bind_input(0, &region, SOAPRT_F32);
    soaprt_input_random_range(0, -0.5, 0.5);
  }
  soaprt_finalize();
  return 0;
}
