#!/usr/bin/env bash
# How long soapc takes to compile a training step into an executable:
#
#   benchmarks/compile-time.sh [BASELINE_SOAPC]
#
# For each case (zoo model, batch, strategy, devices, target) it times
# `soapc --train --emit=exe` (wall seconds, one run each) and prints the
# executable's size and the functions LLVM compiled (--target=cpu: the
# internal ones, outlined loop nests and merged rank bodies; --target=cuda:
# the kernels in the PTX). With
# BASELINE_SOAPC (another build's soapc, e.g. one made before a change) the
# same cases run with it too, for a speedup column. SOAP_BIN (default
# build/bin) has soapc and soap-models; CASES overrides the list
# ("model:batch:strategy:devices:target ..."). Machine p100-4x4, the
# training step with in-place updates (--train-returns=outputs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SOAP_BIN:-$ROOT/build/bin}
BASELINE=${1:-}
CASES=${CASES:-"alexnet:16:data-parallel:4:cpu alexnet:64:data-parallel:16:cpu resnet101:8:data-parallel:4:cpu resnet101:8:data-parallel:4:cuda inception_v3:1:single:1:cpu"}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-compile-time.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# compile SOAPC MODEL.mlir STRATEGY DEVICES TARGET OUT: seconds on stdout.
compile() {
  local start end
  start=$(date +%s.%N)
  "$1" "$2" --quiet --machine=p100-4x4 --strategy="$3" --devices="$4" \
    --target="$5" --train --train-returns=outputs --emit=exe -o "$6" \
    > "$WORK/soapc.log" 2>&1 || { cat "$WORK/soapc.log" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.1f", $2 - $1}'
}

# functions TARGET OUT.mlir-input...: the functions LLVM compiles.
functions() {
  local soapc=$1 model=$2 strategy=$3 devices=$4 target=$5
  if [ "$target" = cuda ]; then
    "$soapc" "$model" --quiet --machine=p100-4x4 --strategy="$strategy" \
      --devices="$devices" --target=cuda --train --train-returns=outputs \
      --emit=ptx -o "$WORK/k.ptx" > /dev/null 2>&1
    grep -c '^\.visible \.entry' "$WORK/k.ptx"
  else
    "$soapc" "$model" --quiet --machine=p100-4x4 --strategy="$strategy" \
      --devices="$devices" --target=cpu --train --train-returns=outputs \
      --emit=llvm -o "$WORK/l.mlir" > /dev/null 2>&1
    grep -c 'llvm.func internal @' "$WORK/l.mlir"
  fi
}

echo "soapc compile time (wall seconds, one run; $(nproc) cores; $(date -u +%F))"
echo
if [ -n "$BASELINE" ]; then
  echo "| model | batch | strategy | devices | target | baseline s | s | speedup | baseline functions | functions | baseline exe MB | exe MB |"
  echo "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
else
  echo "| model | batch | strategy | devices | target | s | functions | exe MB |"
  echo "|---|---:|---|---:|---|---:|---:|---:|"
fi
for case in $CASES; do
  IFS=: read -r model batch strategy devices target <<< "$case"
  "$BIN/soap-models" "$model" --batch="$batch" -o "$WORK/$model.mlir"
  m="$WORK/$model.mlir"
  t=$(compile "$BIN/soapc" "$m" "$strategy" "$devices" "$target" "$WORK/exe")
  mb=$(du -m --apparent-size "$WORK/exe" | cut -f1)
  f=$(functions "$BIN/soapc" "$m" "$strategy" "$devices" "$target")
  if [ -n "$BASELINE" ]; then
    bt=$(compile "$BASELINE" "$m" "$strategy" "$devices" "$target" "$WORK/exe")
    bmb=$(du -m --apparent-size "$WORK/exe" | cut -f1)
    bf=$(functions "$BASELINE" "$m" "$strategy" "$devices" "$target")
    speedup=$(echo "$bt $t" | awk '{printf "%.2fx", $1 / $2}')
    echo "| $model | $batch | $strategy | $devices | $target | $bt | $t | $speedup | $bf | $f | $bmb | $mb |"
  else
    echo "| $model | $batch | $strategy | $devices | $target | $t | $f | $mb |"
  fi
done
