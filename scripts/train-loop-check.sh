#!/usr/bin/env bash
# Checks that a training step that updates its parameters in place trains:
# K runs of it (--iterations=K) must leave the parameters that K chained
# runs of the step that returns them leave.
#
#   scripts/train-loop-check.sh MODEL.mlir STRATEGY NRANKS [SOAPC OPTIONS...]
#
# Compiles MODEL's training step twice with soapc --target=cpu: returning
# the updated parameters (--train, single device: the reference) and
# updating them in place (--train --train-returns=outputs, STRATEGY on
# NRANKS devices). Makes inputs once (benchmarks/gpu/make-inputs.c: He-scaled
# weights), runs the reference K times, feeding each run's updated
# parameters to the next as .npy files, and the in-place program once with
# --iterations=K; compares its outputs (result*.npy, the last step's) and
# every updated parameter (input<i>.npy) with the reference's, relative
# error <= RTOL (default 1e-5). Exits non-zero on any mismatch or error.
#
# Environment: TARGET of the in-place program (cpu, the default; cuda;
# cuda-emulated: the CUDA lowering on the host emulation of the CUDA
# libraries), SOAP_BIN (folder with soapc and soap-npy-compare; default
# build/bin beside this script), ITERATIONS (K, default 3), SEED (inputs and
# random strategies, default 1), RTOL, CC (compiler for make-inputs), KEEP=1
# to keep the work folder. Extra arguments go to both soapc runs (e.g.
# --learning-rate=0.001).
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
MODEL=$1 STRATEGY=$2 NRANKS=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SOAP_BIN=${SOAP_BIN:-$ROOT/build/bin}
ITERATIONS=${ITERATIONS:-3} SEED=${SEED:-1} RTOL=${RTOL:-1e-5}
NAME=$(basename "$MODEL" .mlir)
# shellcheck source=scripts/test-setup.sh
source "$ROOT/scripts/test-setup.sh" train-loop-check
fail() { echo "train-loop-check: FAIL: $NAME: $*"; exit 1; }

COMMON=(--seed="$SEED" --quiet --train "$@")
"$SOAP_BIN/soapc" "$MODEL" "${COMMON[@]}" --devices=1 --strategy=single \
  --emit=mlir -o "$WORK/step.mlir" > /dev/null || fail "cannot compile the step"
"$SOAP_BIN/soapc" "$MODEL" "${COMMON[@]}" --devices=1 --strategy=single \
  --target=cpu --emit=exe -o "$WORK/reference" > /dev/null ||
  fail "cannot compile the reference"
"$SOAP_BIN/soapc" "$MODEL" "${COMMON[@]}" --train-returns=outputs \
  --devices="$NRANKS" --strategy="$STRATEGY" "${TARGET_ARGS[@]}" --emit=exe \
  -o "$WORK/in-place" > /dev/null ||
  fail "cannot compile the in-place step ($STRATEGY on $NRANKS devices)"

# Inputs of the step (the model's arguments, then one cotangent per result).
"${CC:-cc}" -O2 -o "$WORK/make-inputs" "$ROOT/benchmarks/gpu/make-inputs.c" -lm
python3 "$ROOT/benchmarks/gpu/input-spec.py" "$WORK/step.mlir" > "$WORK/spec"
"$WORK/make-inputs" "$WORK/spec" "$WORK/in" "$SEED" > /dev/null
NUM_INPUTS=$(grep -c . "$WORK/spec")

# The in-place program: K steps.
files() { for ((i = 0; i < NUM_INPUTS; i++)); do echo "$1/in$i.npy"; done; }
mapfile -t INPUTS < <(files "$WORK/in")
timeout 600 "${MPIRUN[@]}" "$WORK/in-place" --inputs "${INPUTS[@]}" \
  --iterations="$ITERATIONS" --quiet --output-dir="$WORK/actual" > /dev/null ||
  fail "the in-place run failed"
mapfile -t UPDATED < <(cd "$WORK/actual" && ls input*.npy 2> /dev/null |
  sed 's/input\([0-9]*\)\.npy/\1/' | sort -n)
NUM_RESULTS=$(cd "$WORK/actual" && ls result*.npy 2> /dev/null | wc -l)
[ "${#UPDATED[@]}" -gt 0 ] || fail "the in-place run updated no input"

# The reference: K chained steps, each fed the parameters the last returned
# (result NUM_RESULTS + j is the j-th updated parameter).
cp -r "$WORK/in" "$WORK/step0"
for ((k = 1; k <= ITERATIONS; k++)); do
  mapfile -t INPUTS < <(files "$WORK/step$((k - 1))")
  timeout 600 "$WORK/reference" --inputs "${INPUTS[@]}" --quiet \
    --output-dir="$WORK/out$k" > /dev/null || fail "reference step $k failed"
  cp -r "$WORK/step$((k - 1))" "$WORK/step$k"
  for j in "${!UPDATED[@]}"; do
    cp "$WORK/out$k/result$((NUM_RESULTS + j)).npy" "$WORK/step$k/in${UPDATED[$j]}.npy"
  done
done
[ -f "$WORK/out$ITERATIONS/result$((NUM_RESULTS + ${#UPDATED[@]} - 1)).npy" ] &&
  [ ! -f "$WORK/out$ITERATIONS/result$((NUM_RESULTS + ${#UPDATED[@]})).npy" ] ||
  fail "the reference returns another number of parameters than the in-place step updates"

status=0
compare() {
  local line
  line=$("$SOAP_BIN/soap-npy-compare" "$1" "$2" --rtol="$RTOL") || status=1
  echo "  ${line#"$WORK"/}"
}
for ((r = 0; r < NUM_RESULTS; r++)); do
  compare "$WORK/out$ITERATIONS/result$r.npy" "$WORK/actual/result$r.npy"
done
for i in "${UPDATED[@]}"; do
  compare "$WORK/step$ITERATIONS/in$i.npy" "$WORK/actual/input$i.npy"
done
# The parameters moved (a step that updated nothing would pass the above
# only if the reference did not either).
moved=0
for i in "${UPDATED[@]}"; do
  "$SOAP_BIN/soap-npy-compare" "$WORK/in/in$i.npy" "$WORK/actual/input$i.npy" \
    --rtol=0 > /dev/null 2>&1 || moved=1
done
[ "$moved" = 1 ] || { echo "train-loop-check: the parameters did not change"; status=1; }
if [ "$status" = 0 ]; then
  echo "train-loop-check: PASS: $NAME, $ITERATIONS in-place steps ($STRATEGY on $NRANKS ranks, $TARGET) = $ITERATIONS chained steps: $NUM_RESULTS output(s), ${#UPDATED[@]} parameter(s)"
else
  echo "train-loop-check: FAIL: $NAME ($STRATEGY on $NRANKS ranks)"
fi
exit "$status"
