#!/usr/bin/env bash
# How well the generated kernels' memory accesses coalesce, measured on the
# host emulation (no GPU needed):
#
#   benchmarks/kernel-coalescing.sh [MODEL | FILE.mlir] [BATCH]
#
# (defaults: resnet101, batch 2; a FILE.mlir is taken as it is, e.g.
# benchmarks/inputs/bn-scale-grads-b64.mlir with TRAIN=0; TRAIN=1 the training step, TRAIN=0 the
# forward pass; ROWS=12 kernels listed; SOAP_BIN=build/bin). It compiles the
# model for one GPU with `soapc --target=cuda --cuda-host-emulation
# --cuda-emulation-profile`, runs one step on random inputs, and prints the
# access profile (lib/Runtime/emulation/kernel_profile.c): for all
# generated kernels together and the kernels with the most sector traffic,
# the 32-byte sectors their warp-wide requests touch, sectors per request
# (4 for 32 consecutive floats) and coalescing (the fewest sectors that
# hold the bytes / the sectors touched). cuBLAS and cuDNN calls are not in
# it. Counts, not time: what a GPU makes of them needs a GPU run. The
# training step of resnet101 at batch 2 compiles in ~7 minutes and runs in
# ~3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=${1:-resnet101} BATCH=${2:-2}
TRAIN=${TRAIN:-1} ROWS=${ROWS:-12}
BIN=${SOAP_BIN:-$ROOT/build/bin}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-coalescing.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [[ "$MODEL" == *.mlir ]]; then
  cp "$MODEL" "$WORK/model.mlir" # a module of its own (BATCH unused)
else
  "$BIN/soap-models" "$MODEL" --batch="$BATCH" -o "$WORK/model.mlir"
fi
train=()
[ "$TRAIN" = 1 ] && train=(--train --train-returns=outputs)
"$BIN/soapc" "$WORK/model.mlir" --quiet --devices=1 --strategy=single \
  "${train[@]}" --target=cuda --cuda-host-emulation --cuda-emulation-profile \
  --emit=exe -o "$WORK/model" > /dev/null
(cd "$WORK" && SOAPRT_EMU_GPUS=1 SOAPRT_EMU_PROFILE="$WORK/profile.tsv" \
  ./model --random-inputs=1 --output-dir="$WORK/out" > "$WORK/run.log" 2>&1) ||
  { cat "$WORK/run.log"; exit 1; }
label="$MODEL, batch $BATCH"
[[ "$MODEL" == *.mlir ]] && label="$MODEL"
echo "$label$([ "$TRAIN" = 1 ] && echo ", training step" || echo ", forward"), generated kernels on the host emulation"
python3 - "$WORK/profile.tsv" "$ROWS" <<'PY'
import sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
head, rows = lines[0], lines[1:]
print(f"{'sectors':>11} {'requests':>10} {'sect/req':>8} {'coalescing':>10} {'launches':>8} {'threads':>9}  kernel")
for r in rows[: 1 + int(sys.argv[2])]:
    print(f"{int(r[0]):11} {int(r[1]):10} {r[2]:>8} {r[3]:>10} {int(r[5]):8} {int(r[6]):9}  {r[7]}")
PY
