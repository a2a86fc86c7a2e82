#!/usr/bin/env bash
# How much work and memory each device spends on one partitioned step
# (the forward pass; with TRAIN=1 the training step, soapc --train), and how
# long the CUDA lowering takes:
#
#   benchmarks/spmd-tile-work.sh [MODEL] [STRATEGY] [RANKS]
#
# (defaults: alexnet data-parallel 4; BATCH=8, ITERS=5, SOAP_BIN=build/bin).
# Prints, for the SPMD program soapc makes:
#  - fill/pad elems: the elements that linalg.fill and tensor.pad ops write,
#    summed over the partitioned program (every rank runs its own tiles, so
#    divide by RANKS for one device's share);
#  - kernels/rank, threads/rank: the generated CUDA kernel launches of one
#    step and their threads (blocks x block size), averaged over the ranks;
#  - lowering s: seconds soap-lower-to-cuda takes up to the kernels (no
#    NVVM);
#  - cpu ms: the median per-iteration time of the CPU executable on RANKS
#    MPI ranks (--iterations=ITERS);
#  - emu MiB: the peak device memory of the CUDA executable run under the
#    host emulation, in its second iteration (n/a without
#    libsoaprt_cuda_emu), and ws MiB: the library workspaces in it (cuBLAS's
#    fixed 32 MiB, cuDNN's): the rest is the program's buffers;
#  - predicted: the simulator's peak memory per device (a training step:
#    parameters, and activations and gradients while the step's order of
#    tasks keeps them alive).
# RUN=0 skips running the executables (the static figures only); TRAIN=1
# compiles the training step (forward, backward, SGD update) instead of the
# forward pass (TRAIN_RETURNS: its --train-returns, default parameters;
# outputs: the parameters updated in place).
# The README's and issue notes' figures come from here; nothing is timed
# inside a test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=${1:-alexnet} STRATEGY=${2:-data-parallel} RANKS=${3:-4}
BATCH=${BATCH:-8} ITERS=${ITERS:-5} RUN=${RUN:-1} TRAIN=${TRAIN:-0}
BIN=${SOAP_BIN:-$ROOT/build/bin}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-tile-work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun -np "$RANKS" --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

"$BIN/soap-models" "$MODEL" --batch="$BATCH" -o "$WORK/model.mlir"
common=(--devices="$RANKS" --strategy="$STRATEGY")
[ "$TRAIN" = 1 ] && common+=(--train --train-returns="${TRAIN_RETURNS:-parameters}")
"$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --emit=partitioned \
  -o "$WORK/spmd.mlir" > "$WORK/summary.txt"
predicted=$(sed -n 's/^peak memory per device: \(.*\) of .*/\1/p' \
  "$WORK/summary.txt" | tr -d ' ')

cat > "$WORK/count.py" <<'EOF'
import re, sys
kind, path, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "fills":
    total = 0
    for line in open(path):
        m = (re.search(r"linalg\.fill .*-> tensor<([0-9x]+)x[a-z]", line) or
             re.search(r"^\s*\} : tensor<[^>]*> to tensor<([0-9x]+)x[a-z]",
                       line))
        if m:
            n = 1
            for d in m.group(1).split("x"):
                n *= int(d)
            total += n
    print(total)
else:
    launches = threads = 0
    for line in open(path):
        m = re.search(r"gpu\.launch_func .*blocks in \(%c(\d+), %c1, %c1\) "
                      r"threads in \(%c(\d+),", line)
        if m:
            launches += 1
            threads += int(m.group(1)) * int(m.group(2))
    print(launches // ranks, threads // ranks)
EOF
elements=$(python3 "$WORK/count.py" fills "$WORK/spmd.mlir" "$RANKS")

start=$(date +%s.%N)
"$BIN/soap-opt" "$WORK/spmd.mlir" --soap-lower-to-cuda="to-llvm=false" \
  -o "$WORK/cuda.mlir"
lower_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
read -r launches threads < <(python3 "$WORK/count.py" kernels \
  "$WORK/cuda.mlir" "$RANKS")

cpu_ms=n/a peak=n/a workspaces=n/a
if [ "$RUN" = 1 ]; then
  "$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --emit=exe \
    -o "$WORK/cpu" > /dev/null
  cpu_ms=$("${MPIRUN[@]}" "$WORK/cpu" --random-inputs=1 \
    --iterations="$ITERS" --output-dir="$WORK/out-cpu" --quiet |
    sed -n 's/^iteration [0-9]*: \([0-9.]*\) ms$/\1/p' | sort -n |
    awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "n/a")}')
  if "$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --target=cuda \
      --cuda-host-emulation --emit=exe -o "$WORK/emu" > /dev/null 2>&1; then
    "${MPIRUN[@]}" "$WORK/emu" --random-inputs=1 --iterations=2 \
      --output-dir="$WORK/out-emu" > "$WORK/emu.log"
    line='^peak device memory after the first iteration: \([0-9.]*\) MiB'
    line+=' (library workspaces: \([0-9.]*\) MiB)$'
    peak=$(sed -n "s/$line/\1/p" "$WORK/emu.log")
    workspaces=$(sed -n "s/$line/\2/p" "$WORK/emu.log")
  fi
fi

format='%-12s %-14s %5s %5s %14s %12s %14s %10s %8s %8s %7s %10s\n'
# shellcheck disable=SC2059
printf "$format" model strategy ranks batch "fill/pad elems" "kernels/rank" \
  "threads/rank" "lowering s" "cpu ms" "emu MiB" "ws MiB" predicted
# shellcheck disable=SC2059
printf "$format" "$MODEL" "$STRATEGY" "$RANKS" "$BATCH" "$elements" \
  "$launches" "$threads" "$(printf '%.1f' "$lower_s")" "$cpu_ms" "$peak" \
  "$workspaces" "$predicted"
