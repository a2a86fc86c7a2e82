#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the lit suite
# (check-soap) and the GoogleTest unit tests (ctest).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SOAP_BUILD_DIR:-$root/build}"

"$root/scripts/build.sh"
echo "== lit: check-soap"
ninja -C "$build" check-soap
echo "== unit tests: ctest"
(cd "$build" && ctest --output-on-failure)
