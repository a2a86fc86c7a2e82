#!/usr/bin/env bash
# What keeping freed memory buys the CPU executables: the training step of
# zoo models run with glibc's defaults (SOAPRT_RETURN_FREED_MEMORY=1: large
# buffers mapped afresh, the heap trimmed, so every iteration faults in
# fresh pages) and as soaprt_main.c sets it up (freed memory kept in the
# process):
#
#   benchmarks/cpu-freed-memory.sh
#
# For each case (zoo model, batch, strategy, ranks) it builds one executable
# (--train --train-returns=outputs, machine p100-4x4, OpenBLAS calls where
# the build has them), then runs it ROUNDS times (default 3) each way,
# alternating, for ITERATIONS (default 3) iterations on the same He-scaled
# inputs with `mpirun -np RANKS`, and prints the fastest iteration of each
# way (ms) and the speedup. The results are the same either way (checked:
# soap-npy-compare --rtol=0 after one step). SOAP_BIN (default build/bin)
# has soapc, soap-models and soap-npy-compare; CASES overrides the list
# ("model:batch:strategy:ranks ...").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-"mlp:64:data-parallel:2 alexnet:8:data-parallel:2 mobilenet_v2:2:data-parallel:2 resnet101:2:data-parallel:2"}
source "$ROOT/benchmarks/cpu-common.sh"

# fastest A B: the smaller of two ms figures (A if B is empty).
fastest() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || a + 0 <= b + 0) print a; else print b }'
}

echo "CPU training step, freed memory returned (glibc defaults) vs kept (fastest of $ROUNDS x $ITERATIONS iterations, ms; $(nproc) cores; $(date -u +%F))"
echo
echo "| model | batch | strategy | ranks | returned ms | kept ms | speedup |"
echo "|---|---:|---|---:|---:|---:|---:|"
for case in $CASES; do
  IFS=: read -r model batch strategy ranks <<< "$case"
  "$BIN/soap-models" "$model" --batch="$batch" -o "$WORK/model.mlir"
  inputs "$WORK/model.mlir" "$WORK/in"
  soapc_quiet "$WORK/model.mlir" --quiet --machine=p100-4x4 \
    --strategy="$strategy" --devices="$ranks" --train \
    --train-returns=outputs --emit=exe -o "$WORK/step"
  returned="" kept=""
  for ((r = 0; r < ROUNDS; r++)); do
    returned=$(fastest "$(run "$WORK/step" "$ITERATIONS" "$WORK/timed" SOAPRT_RETURN_FREED_MEMORY=1)" "$returned")
    kept=$(fastest "$(run "$WORK/step" "$ITERATIONS" "$WORK/timed" SOAPRT_RETURN_FREED_MEMORY=0)" "$kept")
  done
  run "$WORK/step" 1 "$WORK/returned" SOAPRT_RETURN_FREED_MEMORY=1 > /dev/null
  run "$WORK/step" 1 "$WORK/kept" SOAPRT_RETURN_FREED_MEMORY=0 > /dev/null
  for f in "$WORK/returned"/*.npy; do
    "$BIN/soap-npy-compare" "$f" "$WORK/kept/$(basename "$f")" --rtol=0 > /dev/null ||
      { echo "cpu-freed-memory.sh: $model: $(basename "$f") differs" >&2; exit 1; }
  done
  speedup=$(awk -v a="$returned" -v b="$kept" 'BEGIN { printf "%.2fx", a / b }')
  echo "| $model | $batch | $strategy | $ranks | $returned | $kept | $speedup |"
done
