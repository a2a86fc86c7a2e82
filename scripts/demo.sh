#!/usr/bin/env bash
# Installs what is missing, builds, and runs SOAP's main job on a bundled
# default: search a strategy for Inception-v3 (batch 64) on the paper's 16-GPU
# P100 cluster (4 nodes x 4 P100, NVLink inside a node, 100 Gb/s InfiniBand
# between), print the summary, and write the report and the timeline trace.
#
#   scripts/demo.sh [MODEL.mlir|ZOO-NAME] [extra soapc options]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SOAP_BUILD_DIR:-$root/build}"
out="${SOAP_DEMO_OUT:-$root/demo-out}"

"$root/scripts/build.sh" soapc soap-models soap-opt
mkdir -p "$out"

model="${1:-inception_v3}"
shift || true
if [ ! -f "$model" ]; then
  "$build/bin/soap-models" "$model" -o "$out/$model.mlir"
  model="$out/$model.mlir"
fi
name="$(basename "$model" .mlir)"

"$build/bin/soapc" "$model" --machine=p100-4x4 --search-budget="${SOAP_DEMO_BUDGET:-20}" \
  --report="$out/$name.report.json" --trace="$out/$name.trace.json" \
  --strategy-out="$out/$name.strategy.json" "$@"
echo
echo "report:   $out/$name.report.json"
echo "strategy: $out/$name.strategy.json"
echo "trace:    $out/$name.trace.json (open in https://ui.perfetto.dev or chrome://tracing)"
