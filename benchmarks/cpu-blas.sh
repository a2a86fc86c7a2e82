#!/usr/bin/env bash
# What OpenBLAS buys the CPU target: the training step of zoo models with
# matmuls as generated loops (soapc --cpu-blas=false) and as OpenBLAS GEMMs
# (--cpu-blas, the default where the build found OpenBLAS):
#
#   benchmarks/cpu-blas.sh
#
# For each case (zoo model, batch, strategy, ranks) it builds both
# executables (--train --train-returns=outputs, machine p100-4x4), runs each
# for ITERATIONS (default 3) iterations on the same random inputs with
# `mpirun -np RANKS`, and prints the fastest iteration of each (ms; the first
# touches every buffer), the speedup, and how far the two programs' results
# (the step's outputs and its updated parameters) are apart (soap-npy-compare:
# max|a-b| / max|a| over every file). SOAP_BIN (default build/bin) has soapc,
# soap-models and soap-npy-compare; CASES overrides the list
# ("model:batch:strategy:ranks ...").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SOAP_BIN:-$ROOT/build/bin}
ITERATIONS=${ITERATIONS:-3}
CASES=${CASES:-"mlp:64:data-parallel:2 mlp:64:expert:2 rnnlm:4:data-parallel:2 alexnet:8:data-parallel:2"}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-cpu-blas.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

# run EXE RANKS OUTDIR: the fastest iteration's ms on stdout.
run() {
  "${MPIRUN[@]}" -np "$2" "$1" --random-inputs=1 --iterations="$ITERATIONS" \
    --output-dir="$3" > "$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; return 1; }
  grep -o 'iteration [0-9]*: [0-9.]* ms' "$WORK/run.log" |
    awk '{ ms = $3 + 0; if (best == "" || ms < best) best = ms } END { printf "%.0f", best }'
}

echo "CPU training step, matmuls as loops vs OpenBLAS (fastest of $ITERATIONS iterations, ms; $(nproc) cores; $(date -u +%F))"
echo
echo "| model | batch | strategy | ranks | loops ms | OpenBLAS ms | speedup | results apart |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
for case in $CASES; do
  IFS=: read -r model batch strategy ranks <<< "$case"
  "$BIN/soap-models" "$model" --batch="$batch" -o "$WORK/$model.mlir"
  for mode in loops blas; do
    flag=--cpu-blas
    [ "$mode" = loops ] && flag=--cpu-blas=false
    "$BIN/soapc" "$WORK/$model.mlir" --quiet --machine=p100-4x4 \
      --strategy="$strategy" --devices="$ranks" --train \
      --train-returns=outputs "$flag" --emit=exe -o "$WORK/$mode" \
      > "$WORK/soapc.log" 2>&1 || { cat "$WORK/soapc.log" >&2; exit 1; }
    rm -rf "$WORK/out-$mode"
    declare "ms_$mode=$(run "$WORK/$mode" "$ranks" "$WORK/out-$mode")"
  done
  apart=$(for f in "$WORK"/out-loops/*.npy; do
            "$BIN/soap-npy-compare" "$f" "$WORK/out-blas/$(basename "$f")" --rtol=1 2>&1 || true
          done | grep -o 'max|a-b|/max|a| = [0-9.e+-]*' |
          awk '{ v = $NF + 0; if (v > m) m = v } END { printf "%.1e", m }')
  speedup=$(awk -v a="$ms_loops" -v b="$ms_blas" 'BEGIN { printf "%.1fx", a / b }')
  echo "| $model | $batch | $strategy | $ranks | $ms_loops | $ms_blas | $speedup | $apart |"
done
