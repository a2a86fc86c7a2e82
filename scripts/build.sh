#!/usr/bin/env bash
# Configures (once) and builds SOAP in ./build. Used by test.sh and demo.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SOAP_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build"
fi
ninja -C "$build" "$@"
