#!/usr/bin/env bash
# What OpenBLAS buys the CPU target: the training step of zoo models with
# matmuls and convolutions as generated loops (soapc --cpu-blas=false) and
# as OpenBLAS GEMMs (convolutions and filter gradients: im2col + GEMM;
# input gradients: GEMM + col2im; depthwise ones: the runtime's direct loops)
# (--cpu-blas, the default where the build found OpenBLAS):
#
#   benchmarks/cpu-blas.sh
#
# For each case (zoo model, batch, strategy, ranks) it builds both
# executables (--train --train-returns=outputs, machine p100-4x4), runs each
# for ITERATIONS (default 3) iterations on the same inputs with
# `mpirun -np RANKS`, and prints the fastest iteration of each (ms; the first
# touches every buffer), the speedup, and how far the two programs' results
# (the step's outputs and its updated parameters) are apart (soap-npy-compare:
# max|a-b| / max|a| over every file) after one step, in f32 and, for the
# same model with every f32 made f64, in f64: float32 rounding apart
# (e.g. a ReLU whose input is within rounding of zero taking the other
# branch in the backward pass) moves the f32 results, a wrong result moves
# both. The inputs are He-scaled (benchmarks/gpu/make-inputs.c, built with
# CC), the same files for both executables, data scaled per sample.
# ITERATIONS must be 2 or more (a run of one iteration prints no
# time per iteration). SOAP_BIN (default build/bin) has soapc,
# soap-models and soap-npy-compare; CASES overrides the list
# ("model:batch:strategy:ranks ...").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CASES=${CASES:-"mlp:64:data-parallel:2 mlp:64:expert:2 rnnlm:4:data-parallel:2 alexnet:8:data-parallel:2 mobilenet_v2:2:data-parallel:2"}
source "$ROOT/benchmarks/cpu-common.sh"

# build SRC MODE EXE: compiles SRC's step (MODE loops or blas) for the
# case's strategy and ranks.
build() {
  local flag=--cpu-blas
  [ "$2" = loops ] && flag=--cpu-blas=false
  soapc_quiet "$1" --quiet --machine=p100-4x4 --strategy="$strategy" \
    --devices="$ranks" --train --train-returns=outputs "$flag" --emit=exe \
    -o "$3"
}

# apart DIR1 DIR2: the largest max|a-b| / max|a| over their .npy files.
apart() {
  for f in "$1"/*.npy; do
    "$BIN/soap-npy-compare" "$f" "$2/$(basename "$f")" --rtol=1 2>&1 || true
  done | grep -o 'max|a-b|/max|a| = [0-9.e+-]*' |
    awk '{ v = $NF + 0; if (v > m) m = v } END { printf "%.1e", m }'
}

echo "CPU training step, matmuls and convolutions as loops vs OpenBLAS (fastest of $ITERATIONS iterations, ms; $(nproc) cores; $(date -u +%F))"
echo
echo "| model | batch | strategy | ranks | loops ms | OpenBLAS ms | speedup | f32 results apart | f64 results apart |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
for case in $CASES; do
  IFS=: read -r model batch strategy ranks <<< "$case"
  "$BIN/soap-models" "$model" --batch="$batch" -o "$WORK/f32.mlir"
  sed 's/f32/f64/g' "$WORK/f32.mlir" > "$WORK/f64.mlir"
  inputs "$WORK/f32.mlir" "$WORK/in32"
  build "$WORK/f32.mlir" loops "$WORK/loops"
  build "$WORK/f32.mlir" blas "$WORK/blas"
  ms_loops=$(run "$WORK/loops" "$ITERATIONS" "$WORK/timed")
  ms_blas=$(run "$WORK/blas" "$ITERATIONS" "$WORK/timed")
  run "$WORK/loops" 1 "$WORK/loops32" > /dev/null
  run "$WORK/blas" 1 "$WORK/blas32" > /dev/null
  inputs "$WORK/f64.mlir" "$WORK/in64"
  build "$WORK/f64.mlir" loops "$WORK/loops"
  build "$WORK/f64.mlir" blas "$WORK/blas"
  run "$WORK/loops" 1 "$WORK/loops64" > /dev/null
  run "$WORK/blas" 1 "$WORK/blas64" > /dev/null
  speedup=$(awk -v a="$ms_loops" -v b="$ms_blas" 'BEGIN { printf "%.1fx", a / b }')
  echo "| $model | $batch | $strategy | $ranks | $ms_loops | $ms_blas | $speedup | $(apart "$WORK/loops32" "$WORK/blas32") | $(apart "$WORK/loops64" "$WORK/blas64") |"
done
