#!/usr/bin/env bash
# Installs what is missing, builds, and runs SOAP on a bundled model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SOAP_BUILD_DIR:-$root/build}"

"$root/scripts/build.sh" soap-opt
model="${1:-$root/examples/resnet18.mlir}"
echo "== SOAP iteration-space analysis of $(basename "$model")"
echo "   (loop kinds: S sample, A attribute, P parameter, R reduction)"
"$build/bin/soap-opt" "$model" --soap-print-iteration-spaces -o /dev/null \
  | sed -E 's/ loc\([^)]*\)//' | sort | uniq -c | sort -rn | head -25
