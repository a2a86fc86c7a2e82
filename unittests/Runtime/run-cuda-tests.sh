#!/bin/sh
# Tests of libsoaprt_cuda that build with the project:
#   run-cuda-tests.sh BUILD_DIR [--gpu|--no-gpu]
# (build first: ninja -C BUILD_DIR soaprt_cuda_mock_test soaprt_cuda_smoke)
#
# 1. soaprt_cuda_mock_test: the copy / cuBLAS / cuDNN layout logic against
#    the host emulation of the libraries (any machine; the whole runtime on
#    the emulation: run-cuda-emu-tests.sh).
# 2. soaprt-cuda-smoke, a hand-written one-device model linked like a soapc
#    executable. Without a GPU (--no-gpu, or no nvidia-smi listing one) it
#    must print "no CUDA GPU available" and exit with status 1, on one rank
#    and on two, without crashing. With a GPU (--gpu) it must pass all its
#    checks (kernels from PTX and cubin, cuBLAS, cuDNN, copies, memory).
set -u
build=${1:?usage: run-cuda-tests.sh BUILD_DIR [--gpu|--no-gpu]}
mode=${2:-auto}
dir="$build/unittests/Runtime"
status=0

if "$dir/soaprt_cuda_mock_test"; then :; else
  echo "FAIL: soaprt_cuda_mock_test"; status=1
fi

if [ "$mode" = auto ]; then
  if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then mode=--gpu; else mode=--no-gpu; fi
fi
mpirun="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ "$mode" = --gpu ]; then
  $mpirun -np 1 "$dir/soaprt-cuda-smoke" --output-dir="$out" --iterations=3 \
    >"$out/log" 2>&1
  rc=$?
  cat "$out/log"
  if [ $rc -eq 0 ] && grep -q "soaprt-cuda-smoke: all .* checks passed" "$out/log" &&
     grep -q "peak device memory" "$out/log"; then
    echo "PASS: soaprt-cuda-smoke on the GPU"
  else
    echo "FAIL: soaprt-cuda-smoke on the GPU (status $rc)"; status=1
  fi
else
  for np in 1 2; do
    $mpirun -np $np "$dir/soaprt-cuda-smoke" >"$out/log" 2>&1
    rc=$?
    n=$(grep -c "soaprt: error: \[rank [0-9]*\] no CUDA GPU available" "$out/log")
    if [ $rc -eq 1 ] && [ "$n" -eq $np ] &&
       ! grep -qi "segmentation\|signal\|core dumped\|MPI_ABORT" "$out/log"; then
      echo "PASS: soaprt-cuda-smoke without a GPU, $np rank(s): clear error, status 1"
    else
      cat "$out/log"
      echo "FAIL: soaprt-cuda-smoke without a GPU, $np rank(s) (status $rc)"; status=1
    fi
  done
fi
exit $status
