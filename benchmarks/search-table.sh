#!/usr/bin/env bash
# The paper's evaluation in simulation (issue 5), from one command:
#   benchmarks/search-table.sh [BUILD_DIR] [soap-search-table flags...]
# e.g. benchmarks/search-table.sh build --budget=30   (the README table)
#      benchmarks/search-table.sh build --quick
# Builds soap-models, soap-opt and soap-search-table in BUILD_DIR (default
# build), dumps the zoo's op graphs at the models' default batch sizes (the
# paper's: 64, AlexNet 256) to $SOAP_GRAPH_DIR (default a temporary directory;
# graphs already there are reused) and prints the
# table of data-parallel, expert and found iteration times on p100-4x4 and
# k80-16x4.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build"
if [[ $# -gt 0 && "$1" != --* ]]; then
  build="$1"
  shift
fi
[[ "$build" = /* ]] || build="$root/$build"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" >/dev/null
fi
ninja -C "$build" soap-models soap-opt soap-search-table >/dev/null

graphs="${SOAP_GRAPH_DIR:-}"
if [[ -z "$graphs" ]]; then
  graphs="$(mktemp -d)"
  trap 'rm -rf "$graphs"' EXIT
fi
mkdir -p "$graphs"
for model in alexnet inception_v3 resnet101 mobilenet_v2 rnntc rnnlm nmt transformer; do
  if [[ ! -s "$graphs/$model.json" ]]; then
    # Imported as soapc imports it (soap-import: the transformer's fused
    # q/k/v projection in parts, the attention's heads a loop of their own).
    "$build/bin/soap-models" "$model" |
      "$build/bin/soap-opt" --soap-import --soap-dump-graph=json -o /dev/null \
        >"$graphs/$model.json"
  fi
done
exec "$build/benchmarks/soap-search-table" --graphs="$graphs" "$@"
