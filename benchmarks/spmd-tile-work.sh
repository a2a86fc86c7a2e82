#!/usr/bin/env bash
# How much work and memory each device spends on one partitioned training
# step's forward pass, beyond its own tiles:
#
#   benchmarks/spmd-tile-work.sh [MODEL] [STRATEGY] [RANKS]
#
# (defaults: alexnet data-parallel 4; BATCH=8, ITERS=5, SOAP_BIN=build/bin).
# Prints, for the SPMD program soapc makes:
#  - fill/pad elements: the elements that linalg.fill and tensor.pad ops
#    write, summed over the partitioned program's ops (every rank runs its
#    own branch, so divide by RANKS for one device's share);
#  - cpu ms: the median per-iteration time of the CPU executable on RANKS
#    MPI ranks (--iterations=ITERS);
#  - emulated peak MiB: the peak device memory of the CUDA lowering run
#    under the host emulation (skipped without libsoaprt_cuda_emu);
#  - the simulator's predicted peak memory per device (a training step:
#    parameters, gradients and kept activations; the program runs forward).
# The numbers for the README and issue notes come from here; nothing is
# timed inside a test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=${1:-alexnet} STRATEGY=${2:-data-parallel} RANKS=${3:-4}
BATCH=${BATCH:-8} ITERS=${ITERS:-5}
BIN=${SOAP_BIN:-$ROOT/build/bin}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-tile-work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun -np "$RANKS" --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

"$BIN/soap-models" "$MODEL" --batch="$BATCH" -o "$WORK/model.mlir"
common=(--devices="$RANKS" --strategy="$STRATEGY")
"$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --emit=partitioned \
  -o "$WORK/spmd.mlir" > "$WORK/summary.txt"
predicted=$(sed -n 's/^peak memory per device: \(.*\) of .*/\1/p' \
  "$WORK/summary.txt")

# Elements written by fills (-> tensor<...>) and pads (to tensor<...>).
elements=$(python3 - "$WORK/spmd.mlir" <<'EOF'
import re, sys
total = 0
for line in open(sys.argv[1]):
    m = (re.search(r"linalg\.fill .*-> tensor<([0-9x]+)x[a-z]", line) or
         re.search(r"^\s*\} : tensor<[^>]*> to tensor<([0-9x]+)x[a-z]", line))
    if m:
        n = 1
        for d in m.group(1).split("x"):
            n *= int(d)
        total += n
print(total)
EOF
)

"$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --emit=exe \
  -o "$WORK/cpu" > /dev/null
cpu_ms=$("${MPIRUN[@]}" "$WORK/cpu" --random-inputs=1 --iterations="$ITERS" \
  --output-dir="$WORK/out-cpu" --quiet |
  sed -n 's/^iteration [0-9]*: \([0-9.]*\) ms$/\1/p' | sort -n |
  awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "n/a")}')

peak=n/a
if "$BIN/soapc" "$WORK/model.mlir" "${common[@]}" --target=cuda \
    --cuda-host-emulation --emit=exe -o "$WORK/emu" > /dev/null 2>&1; then
  peak=$("${MPIRUN[@]}" "$WORK/emu" --random-inputs=1 \
    --output-dir="$WORK/out-emu" |
    sed -n 's/^peak device memory: \([0-9.]*\) MiB$/\1/p')
fi

printf '%-12s %-14s %5s %5s %16s %10s %18s %14s\n' model strategy ranks \
  batch "fill/pad elems" "cpu ms" "emulated peak MiB" "predicted"
printf '%-12s %-14s %5s %5s %16s %10s %18s %14s\n' "$MODEL" "$STRATEGY" \
  "$RANKS" "$BATCH" "$elements" "$cpu_ms" "$peak" "$predicted"
