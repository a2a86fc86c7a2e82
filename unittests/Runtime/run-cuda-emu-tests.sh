#!/bin/sh
# Tests of libsoaprt_cuda on the host emulation of the CUDA libraries
# (libsoaprt_cuda_emu.a, lib/Runtime/emulation); any machine, GPU or not:
#   run-cuda-emu-tests.sh BUILD_DIR
# (build first: ninja -C BUILD_DIR soaprt_cuda_emu_runtime_test
#  soaprt_cuda_emu_smoke; check-soap builds them)
#
# 1. soaprt_cuda_emu_runtime_test on 1 and on 3 ranks: the real runtime end
#    to end (matmul, conv2d, copies, transfers, all-reduces over the world
#    and a sub-group, outputs, peak memory) and the emulation's strictness.
#    Again on 1 and 3 ranks with SOAPRT_COMM_DEFER=0 (communication when it
#    starts, on the communication stream, instead of at its wait).
# 2. SOAPRT_EMU_GPUS=0 (no GPU): the test and the smoke model linked as an
#    emulated soapc executable (mpicc, libsoaprt_main.a,
#    libsoaprt_cuda_emu.a, -lm) stop with "no CUDA GPU available" on every
#    rank and status 1.
# 3. SOAPRT_EMU_GPUS=2 on 3 ranks: every rank stops with status 1 and says
#    that the node has fewer GPUs than ranks.
set -u
build=${1:?usage: run-cuda-emu-tests.sh BUILD_DIR}
dir="$build/unittests/Runtime"
test="$dir/soaprt_cuda_emu_runtime_test"
smoke="$dir/soaprt-cuda-smoke-emu"
status=0
mpirun="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

crashed() {
  grep -qi "segmentation\|signal\|core dumped\|MPI_ABORT" "$1"
}

# Each on 1 and 3 ranks, with communication deferred to its wait (the
# emulation's default) and run at once (SOAPRT_COMM_DEFER=0: the CUDA back
# end's asynchronous path).
for defer in default 0; do
  label=""
  [ "$defer" = 0 ] && label=", SOAPRT_COMM_DEFER=0"
  for np in 1 3; do
    if [ "$defer" = 0 ]; then
      SOAPRT_COMM_DEFER=0 $mpirun -x SOAPRT_COMM_DEFER -np $np "$test" \
        >"$out/log" 2>&1
    else
      $mpirun -np $np "$test" >"$out/log" 2>&1
    fi
    rc=$?
    if [ $rc -eq 0 ] &&
       grep -q "cuda_emu_runtime_test: all [0-9]* checks passed on $np rank" \
         "$out/log"; then
      echo "PASS: soaprt_cuda_emu_runtime_test on $np rank(s)$label"
    else
      cat "$out/log"
      echo "FAIL: soaprt_cuda_emu_runtime_test on $np rank(s)$label (status $rc)"
      status=1
    fi
  done
done

for prog in "$test" "$smoke"; do
  for np in 1 2; do
    SOAPRT_EMU_GPUS=0 $mpirun -x SOAPRT_EMU_GPUS -np $np "$prog" \
      >"$out/log" 2>&1
    rc=$?
    n=$(grep -c "soaprt: error: \[rank [0-9]*\] no CUDA GPU available" \
        "$out/log")
    if [ $rc -eq 1 ] && [ "$n" -eq $np ] && ! crashed "$out/log"; then
      echo "PASS: $(basename "$prog") with SOAPRT_EMU_GPUS=0 on $np rank(s)"
    else
      cat "$out/log"
      echo "FAIL: $(basename "$prog") with SOAPRT_EMU_GPUS=0 on $np rank(s)" \
           "(status $rc)"
      status=1
    fi
  done
done

SOAPRT_EMU_GPUS=2 $mpirun -x SOAPRT_EMU_GPUS -np 3 "$test" >"$out/log" 2>&1
rc=$?
n=$(grep -c "3 ranks run on this node but it has 2 CUDA GPUs" "$out/log")
if [ $rc -eq 1 ] && [ "$n" -eq 3 ] && ! crashed "$out/log"; then
  echo "PASS: 3 ranks on 2 emulated GPUs: clear error, status 1"
else
  cat "$out/log"
  echo "FAIL: 3 ranks on 2 emulated GPUs (status $rc)"
  status=1
fi
exit $status
