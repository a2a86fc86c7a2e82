#!/usr/bin/env bash
# Differential test of a partitioned program against the unpartitioned one.
#
#   scripts/diff-test.sh MODEL STRATEGY NRANKS [SOAPC OPTIONS...]
#
# MODEL: a .mlir file, or a soap-models name (mlp, transformer, ...).
# STRATEGY: anything soapc's --strategy takes (data-parallel, expert, random,
# search, FILE.json). Compiles the model twice with soapc --target=cpu
# --emit=exe: with --strategy=single on one device (the reference) and with
# STRATEGY on NRANKS devices; runs both on the same random inputs (the
# reference alone, the partitioned one under mpirun -np NRANKS) and compares
# every result with soap-npy-compare (relative error max|a-b|/max|a| <= RTOL,
# default 1e-5; integers exactly), and every input the program updates in
# place (input<i>.npy: a training step with --train-returns=outputs).
# Exits non-zero on any mismatch or error.
#
# TARGET (default cpu) is the code generation target of the program under
# test (the reference is always the CPU target): cpu, cuda (one GPU per
# rank), or cuda-emulated (the CUDA lowering with its kernels run as host
# loops over a host emulation of CUDA, cuBLAS, cuDNN and NCCL: checks the
# CUDA back end on a machine without a GPU).
#
# Environment: SOAP_BIN (folder with soapc, soap-models, soap-npy-compare;
# default build/bin beside this script, the folder scripts/build.sh makes), MACHINE (default
# p100-4x4), BATCH (soap-models batch, default 4), SEED (inputs and random
# strategies, default 1), RTOL, TIMEOUT (seconds per run, default 600),
# ITERATIONS (runs of the program, default 1: with in-place updates, that
# many training steps),
# SCALED_INPUTS=1 (He-scaled .npy inputs from benchmarks/gpu/make-inputs.c,
# built here with CC, instead of the executables' --random-inputs: small
# biases, data scaled per sample), REFERENCE=f64 (the
# reference is the model with every f32 in its text made f64, on the same
# input values widened: tells a wrong result from float32 rounding, e.g. a
# ReLU whose input is within rounding of zero taking the other branch; for
# models whose text names f32 only as a type), REFERENCE=f32 (with
# SCALED_INPUTS=1: a bf16 / f16 model's reference is its f32 version,
# soap-change-float-type, on its input values widened, soap-npy-compare --to-f32:
# the IR's 16-bit arithmetic rounds every partial sum, which at a zoo
# model's sizes is far from what cuBLAS and cuDNN compute), KEEP=1 to keep
# the work folder.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
MODEL=$1 STRATEGY=$2 NRANKS=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SOAP_BIN:-}" ] && [ -x "$ROOT/build/bin/soapc" ] &&
  [ -x "$ROOT/build/bin/soap-npy-compare" ]; then
  SOAP_BIN=$ROOT/build/bin
fi
: "${SOAP_BIN:?set SOAP_BIN to the folder with soapc and soap-npy-compare}"
MACHINE=${MACHINE:-p100-4x4} BATCH=${BATCH:-4} SEED=${SEED:-1}
RTOL=${RTOL:-1e-5} TIMEOUT=${TIMEOUT:-600} ITERATIONS=${ITERATIONS:-1}

# shellcheck source=scripts/test-setup.sh
source "$ROOT/scripts/test-setup.sh" diff-test

if [[ "$MODEL" == *.mlir ]]; then
  SRC=$MODEL
else
  SRC=$WORK/$MODEL.mlir
  "$SOAP_BIN/soap-models" "$MODEL" --batch="$BATCH" -o "$SRC"
fi
NAME=$(basename "$SRC" .mlir)

REF_SRC=$SRC
case "${REFERENCE:=same}" in
  same) ;;
  f64)
    REF_SRC=$WORK/$NAME.f64.mlir
    sed 's/f32/f64/g' "$SRC" > "$REF_SRC" ;;
  f32)
    # A bf16 / f16 model's f32 version (soap-change-float-type), on the
    # same input values widened: sums without 16-bit partial sums.
    [ "${SCALED_INPUTS:-0}" = 1 ] ||
      { echo "diff-test: REFERENCE=f32 needs SCALED_INPUTS=1 (input files to widen)"; exit 2; }
    REF_SRC=$WORK/$NAME.f32.mlir
    "$SOAP_BIN/soap-opt" "$SRC" --soap-change-float-type="from=bf16,f16 to=f32" \
      -o "$REF_SRC" ||
      { echo "diff-test: FAIL: cannot make the f32 reference"; exit 1; } ;;
  *) echo "diff-test: unknown REFERENCE=$REFERENCE (same, f64 or f32)"; exit 2 ;;
esac

COMMON=(--machine="$MACHINE" --seed="$SEED" --emit=exe --quiet "$@")
"$SOAP_BIN/soapc" "$REF_SRC" "${COMMON[@]}" --target=cpu --devices=1 --strategy=single \
  -o "$WORK/reference" > "$WORK/reference.log" ||
  { cat "$WORK/reference.log"; echo "diff-test: FAIL: cannot compile the reference"; exit 1; }
"$SOAP_BIN/soapc" "$SRC" "${COMMON[@]}" "${TARGET_ARGS[@]}" --devices="$NRANKS" \
  --strategy="$STRATEGY" --strategy-out="$WORK/strategy.json" \
  -o "$WORK/partitioned" > "$WORK/partitioned.log" ||
  { cat "$WORK/partitioned.log"; echo "diff-test: FAIL: cannot compile $STRATEGY on $NRANKS devices"; exit 1; }

INPUTS=(--random-inputs="$SEED")
REF_INPUTS=("${INPUTS[@]}")
# scaled_inputs SOURCE DIR: writes DIR/in<i>.npy for the arguments of SOURCE
# as compiled (with --train: the step's, cotangents included) and prints
# their paths.
scaled_inputs() {
  "$SOAP_BIN/soapc" "$1" --machine="$MACHINE" --seed="$SEED" --quiet "${SOAPC_ARGS[@]}" \
    --devices=1 --strategy=single --emit=mlir -o "$2.mlir" > /dev/null ||
    { echo "diff-test: FAIL: cannot write the program's signature" >&2; return 1; }
  python3 "$ROOT/benchmarks/gpu/input-spec.py" "$2.mlir" > "$2.spec"
  "$WORK/make-inputs" "$2.spec" "$2" "$SEED" > /dev/null
  local i n
  n=$(grep -c . "$2.spec")
  for ((i = 0; i < n; i++)); do echo "$2/in$i.npy"; done
}
if [ "${SCALED_INPUTS:-0}" = 1 ]; then
  "${CC:-cc}" -O2 -o "$WORK/make-inputs" "$ROOT/benchmarks/gpu/make-inputs.c" -lm
  SOAPC_ARGS=("$@")
  mapfile -t FILES < <(scaled_inputs "$SRC" "$WORK/inputs") && [ "${#FILES[@]}" -gt 0 ] || exit 1
  INPUTS=(--inputs "${FILES[@]}")
  REF_INPUTS=("${INPUTS[@]}")
  if [ "$REFERENCE" = f64 ]; then # the same values, widened
    mapfile -t FILES < <(scaled_inputs "$REF_SRC" "$WORK/ref-inputs") && [ "${#FILES[@]}" -gt 0 ] || exit 1
    REF_INPUTS=(--inputs "${FILES[@]}")
  elif [ "$REFERENCE" = f32 ]; then # the 16-bit values, widened to f32
    mkdir -p "$WORK/ref-inputs"
    "$SOAP_BIN/soap-npy-compare" --to-f32 "$WORK/ref-inputs" "${FILES[@]}" ||
      { echo "diff-test: FAIL: cannot widen the inputs"; exit 1; }
    REF_INPUTS=(--inputs)
    for f in "${FILES[@]}"; do REF_INPUTS+=("$WORK/ref-inputs/$(basename "$f")"); done
  fi
fi

INPUTS+=(--iterations="$ITERATIONS")
REF_INPUTS+=(--iterations="$ITERATIONS")
timeout "$TIMEOUT" "$WORK/reference" "${REF_INPUTS[@]}" --quiet \
  --output-dir="$WORK/expected" > /dev/null ||
  { echo "diff-test: FAIL: the reference run failed"; exit 1; }
timeout "$TIMEOUT" "${MPIRUN[@]}" "$WORK/partitioned" "${INPUTS[@]}" \
  --quiet --output-dir="$WORK/actual" > /dev/null ||
  { echo "diff-test: FAIL: the partitioned run failed"; exit 1; }

status=0 count=0 updated=0
for expected in "$WORK"/expected/result*.npy "$WORK"/expected/input*.npy; do
  [ -f "$expected" ] || continue # no updated inputs
  actual=$WORK/actual/$(basename "$expected")
  case $(basename "$expected") in
    result*) count=$((count + 1)) ;;
    *) updated=$((updated + 1)) ;;
  esac
  if [ ! -f "$actual" ]; then
    echo "diff-test: $(basename "$expected") is missing from the partitioned run"
    status=1
    continue
  fi
  line=$("$SOAP_BIN/soap-npy-compare" "$expected" "$actual" --rtol="$RTOL") || status=1
  echo "  ${line#"$WORK"/actual/}"
done
if [ "$count" = 0 ] && [ "$updated" = 0 ]; then
  echo "diff-test: FAIL: the reference wrote no results"
  exit 1
fi
if [ "$status" = 0 ]; then
  what="$count result(s)"
  [ "$updated" = 0 ] || what+=" and $updated updated input(s)"
  [ "$ITERATIONS" = 1 ] || what+=" after $ITERATIONS runs"
  echo "diff-test: PASS: $NAME, $STRATEGY on $NRANKS ranks ($TARGET), $what match the single-device run$(case $REFERENCE in f64|f32) echo " in $REFERENCE" ;; esac)"
else
  echo "diff-test: FAIL: $NAME, $STRATEGY on $NRANKS ranks ($TARGET); the strategy:"
  cat "$WORK/strategy.json"
fi
exit "$status"
