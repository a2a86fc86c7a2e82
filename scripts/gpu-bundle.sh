#!/usr/bin/env bash
# Builds, on this (CPU) machine, everything scripts/gpu-check.sh needs on the
# GPU machine, which has no MLIR and no SOAP build: the folder travels with
# the working tree (name it in the run's carry list; it is git-ignored).
#
#   scripts/gpu-bundle.sh [BUNDLE_DIR]        (default: gpu-bundle/ in the repo)
#
# The bundle:
#   diff/NAME/     differential check of one small model: cpu (the CPU
#                  executable), cuda-fp32 and cuda-tf32 (soapc --target=cuda,
#                  without and with --allow-tf32), all from the same MLIR, and
#                  expected/result*.npy: what the CPU executable computes here
#                  under mpirun on fixed inputs, so that the GPU machine runs
#                  no CPU code. Models: test/Numerics/Inputs/*.mlir (inputs:
#                  the executables' own --random-inputs=SEED) and the zoo's
#                  alexnet, resnet101, inception_v3 at batch DIFF_BATCH
#                  (inputs: scaled random .npy files that bin/make-inputs
#                  writes from inputs.spec on both machines, checked by
#                  inputs.sha256; data scaled per sample).
#   diff/NAME-train/   the same for the training step of a small model
#                  (soapc --train --train-returns=gradients: the results, then
#                  dL/dx of every float argument for L = sum <cotangent,
#                  result>; the cotangents are arguments, so --random-inputs
#                  covers them): the models in TRAIN_DIFF_MODELS.
#   time/MODEL-bBATCH-PREC   CUDA executables for timing (PREC fp32 or tf32):
#                  the forward pass.
#   time/MODEL-bBATCH-PREC-train   the training step of the same model
#                  (soapc --train --train-returns=outputs: forward, backward,
#                  SGD update of the parameters in place on the GPU, like
#                  PyTorch's optimizer step; kernels as cubins, see
#                  TRAIN_CUDA_FORMAT); TRAIN_TIMING=0: none. Beside it
#                  NAME.report.json, soapc's report: the simulator's
#                  predicted time of the step (predicted_iteration_ms), which
#                  gpu-check compares with the measured one.
#   bin/           soap-npy-compare and make-inputs, linked statically.
#   Executables over GZIP_MIN_KIB are stored as NAME.gz (gpu-check unpacks).
#   manifest.tsv   what gpu-check.sh reads; MANIFEST.txt the human summary.
# A CUDA executable that soapc cannot build (no --target=cuda yet, or one
# model fails) is left out with its error in NAME.error; gpu-check reports it
# as missing.
#
# Environment: SOAP_BIN (folder with soapc and soap-models; default build/bin,
# else build-gpu/bin), SEED (inputs, default 1), DIFF_BATCH (zoo models in
# the differential check, default 2), DIFF_MODELS (default: the numerics
# inputs and "alexnet resnet101 inception_v3 mobilenet_v2"; .mlir paths or
# zoo names),
# TRAIN_DIFF_MODELS (training-step differential entries, default "small_mlp
# small_cnn strided_cnn inception_block transformer_block residual_bn
# constant_weights gelu_softmax scalar_loss grouped_convs nhwc_convs
# dilated_convs bf16_mlp": names of
# test/Numerics/Inputs/*.mlir or .mlir paths; "" for none; not
# strided_cnn_bf16: with seed 1's inputs cuDNN's once-rounded sums make a
# max pooling window pick another maximum than the CPU's bf16 partial sums,
# and its gradients differ by ~20%),
# HALF_DIFF_MODELS (16-bit entries checked against the model's f32 version
# on the same input values, as diff-test.sh REFERENCE=f32 does: the CPU's
# own 16-bit sums are far from cuBLAS's and cuDNN's at a zoo model's sizes;
# default "alexnet:bf16": zoo NAME:DTYPE at DIFF_BATCH, or 16-bit .mlir
# paths; named NAME_DTYPE or the file's name; "" for none),
# TIMING_MODELS (default "alexnet:256 resnet101:64 inception_v3:64": zoo
# names and batches, or .mlir paths; "" for none), TRAIN_TIMING (1, the default: also the training step of each
# TIMING_MODELS entry; 0: forward only), TRAIN_FLAGS (extra soapc flags of
# the timed training steps, e.g. --learning-rate=0.01; default none),
# TRAIN_CUDA_FORMAT (their --cuda-format when CUDA_FORMAT is unset; default
# cubin: a training step has ~1,000 kernels, which the driver would otherwise
# JIT-compile from PTX in the first iteration), OPT
# (-O level, default 3), MCPU (host code, default x86-64-v3: runs on the GPU
# machine's CPU too), CUDA_CHIP (default sm_90), CUDA_FORMAT
# (soapc --cuda-format: ptx, JIT-compiled there at start-up, soapc's
# default; cubin or fatbin, compiled here by ptxas), JOBS (parallel
# soapc runs, default 2), REF_TIMEOUT (seconds per CPU reference run,
# default 1800), MAX_MIB (size warning, default 60), GZIP_MIN_KIB
# (executables larger than this are stored gzipped, default 1024),
# FAKE_CUDA=1 (test mode: fill the CUDA slots with CPU builds, so that
# gpu-check.sh can be run end to end on a machine without a GPU),
# FAKE_CUDA=emulated (test mode: fill them with the CUDA lowering on the host
# emulation, soapc --target=cuda --cuda-host-emulation: gpu-check.sh with
# FAKE_CUDA=1 then checks, without a GPU, the very path of a GPU run except
# the PTX and the libraries; test/Runtime/gpu-harness.test), KEEP=1 (keep
# the work folder).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${1:-${BUNDLE:-$ROOT/gpu-bundle}}
if [ -z "${SOAP_BIN:-}" ]; then
  for d in "$ROOT/build/bin" "$ROOT/build-gpu/bin"; do
    if [ -x "$d/soapc" ] && [ -x "$d/soap-models" ]; then SOAP_BIN=$d; break; fi
  done
fi
: "${SOAP_BIN:?set SOAP_BIN to the folder with soapc and soap-models}"
SOAP_BIN=$(cd "$SOAP_BIN" && pwd)
SEED=${SEED:-1}
DIFF_BATCH=${DIFF_BATCH:-2}
if [ -z "${DIFF_MODELS+x}" ]; then
  DIFF_MODELS="$(printf '%s ' "$ROOT"/test/Numerics/Inputs/*.mlir)alexnet resnet101 inception_v3 mobilenet_v2"
fi
TRAIN_DIFF_MODELS=${TRAIN_DIFF_MODELS-"small_mlp small_cnn strided_cnn inception_block transformer_block residual_bn constant_weights gelu_softmax scalar_loss grouped_convs nhwc_convs dilated_convs bf16_mlp"}
HALF_DIFF_MODELS=${HALF_DIFF_MODELS-"alexnet:bf16"}
TIMING_MODELS=${TIMING_MODELS-"alexnet:256 resnet101:64 inception_v3:64"}
TRAIN_TIMING=${TRAIN_TIMING:-1}
read -r -a TRAIN_FLAGS <<< "${TRAIN_FLAGS:-}"
TRAIN_CUDA_FORMAT=${TRAIN_CUDA_FORMAT-cubin}
OPT=${OPT:-3}
MCPU=${MCPU:-x86-64-v3}
CUDA_CHIP=${CUDA_CHIP:-sm_90}
CUDA_FORMAT=${CUDA_FORMAT:-}
JOBS=${JOBS:-2}
REF_TIMEOUT=${REF_TIMEOUT:-1800}
MAX_MIB=${MAX_MIB:-60}
GZIP_MIN_KIB=${GZIP_MIN_KIB:-1024}
FAKE_CUDA=${FAKE_CUDA:-0}
case $FAKE_CUDA in
  0 | 1 | emulated) ;;
  *) echo "gpu-bundle: FAKE_CUDA must be 0, 1 or emulated (got '$FAKE_CUDA')"; exit 1 ;;
esac
CC=${CC:-cc} CXX=${CXX:-c++}

for tool in soapc soap-models; do
  [ -x "$SOAP_BIN/$tool" ] || { echo "gpu-bundle: no $SOAP_BIN/$tool (set SOAP_BIN)"; exit 1; }
done
# Never wipe a folder that is not a bundle.
if [ -e "$BUNDLE" ] && [ ! -f "$BUNDLE/manifest.tsv" ] && [ -n "$(ls -A "$BUNDLE" 2>/dev/null)" ]; then
  echo "gpu-bundle: $BUNDLE exists and is not a bundle (no manifest.tsv); not touching it"
  exit 1
fi
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/diff" "$BUNDLE/time"
BUNDLE=$(cd "$BUNDLE" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-gpu-bundle.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "gpu-bundle: work folder $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
LOG=$BUNDLE/build.log
: > "$LOG"
START=$(date +%s)
say() { echo "gpu-bundle: $*" | tee -a "$LOG"; }

MPIRUN=(mpirun -np 1 --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
COMMON=(--machine=h200-1 --devices=1 --strategy=single --emit=exe -O"$OPT" --quiet)

# --- Tools for the GPU machine: static, so only the kernel matters there. ---
"$CXX" -O2 -std=c++17 -static -s -o "$BUNDLE/bin/soap-npy-compare" \
  "$ROOT/tools/soap-npy-compare/soap-npy-compare.cpp"
"$CC" -O2 -ffp-contract=off -static -s -o "$BUNDLE/bin/make-inputs" \
  "$ROOT/benchmarks/gpu/make-inputs.c" -lm
for b in soap-npy-compare make-inputs; do
  say "bin/$b: $(ldd "$BUNDLE/bin/$b" 2>&1 | sed -n '1s/^[[:space:]]*//p')"
done

# --- libsoaprt_cuda's own smoke model (kernels from PTX and cubin, cuBLAS,
# cuDNN, copies, memory; checks its results): gpu-check runs it first. ------
SMOKE=$(dirname "$SOAP_BIN")/unittests/Runtime/soaprt-cuda-smoke
if [ -x "$SMOKE" ]; then
  cp "$SMOKE" "$BUNDLE/bin/soaprt-cuda-smoke"
  say "bin/soaprt-cuda-smoke: from $SMOKE"
else
  say "bin/soaprt-cuda-smoke: not built ($SMOKE; ninja soaprt_cuda_smoke)"
fi

# --- Does soapc build CUDA executables? Probe on the smallest model. --------
PROBE=$ROOT/test/Numerics/Inputs/small_mlp.mlir
CUDA_OK=0 TF32_OK=0 CUDA_FLAGS=() CUDA_STATUS=""
if [ "$FAKE_CUDA" = 1 ]; then
  CUDA_OK=1 TF32_OK=1 CUDA_STATUS="FAKE: the CUDA slots hold CPU executables (FAKE_CUDA=1)"
elif [ "$FAKE_CUDA" = emulated ]; then
  CUDA_OK=1 TF32_OK=1 CUDA_STATUS="EMULATED: the CUDA slots hold soapc --target=cuda --cuda-host-emulation builds (FAKE_CUDA=emulated)"
else
  CUDA_FLAGS=(--cuda-chip="$CUDA_CHIP" --mcpu="$MCPU")
  [ -n "$CUDA_FORMAT" ] && CUDA_FLAGS+=(--cuda-format="$CUDA_FORMAT")
  if "$SOAP_BIN/soapc" "$PROBE" "${COMMON[@]}" --target=cuda "${CUDA_FLAGS[@]}" \
      -o "$WORK/probe" > "$WORK/probe.log" 2>&1; then
    CUDA_OK=1
  fi
  if [ "$CUDA_OK" = 1 ]; then
    if "$SOAP_BIN/soapc" "$PROBE" "${COMMON[@]}" --target=cuda "${CUDA_FLAGS[@]}" \
        --allow-tf32 -o "$WORK/probe" > "$WORK/probe-tf32.log" 2>&1; then
      TF32_OK=1
      CUDA_STATUS="soapc --target=cuda ${CUDA_FLAGS[*]} (with and without --allow-tf32)"
    else
      CUDA_STATUS="soapc --target=cuda ${CUDA_FLAGS[*]}; --allow-tf32 fails: $(grep -m1 error "$WORK/probe-tf32.log" || tail -1 "$WORK/probe-tf32.log")"
    fi
  else
    CUDA_STATUS="MISSING: soapc --target=cuda ${CUDA_FLAGS[*]} --emit=exe fails: $(grep -m1 error "$WORK/probe.log" || tail -1 "$WORK/probe.log")"
  fi
fi
say "CUDA: $CUDA_STATUS"

# --- Compile jobs (JOBS at a time). -----------------------------------------
# compile SRC OUT KIND [FLAG...]: KIND cpu | fp32 | tf32; the FLAGs go to
# soapc after the target's (e.g. --train). Writes OUT, or OUT.error.
compile() {
  local src=$1 out=$2 kind=$3 flags=()
  shift 3
  case $kind in
    # --cpu-blas=false: the GPU machine has no Debian OpenBLAS to load, and a
    # static one would add 25 MB to each executable (the carry holds 64 MiB).
    cpu) flags=(--target=cpu --cpu-blas=false --mcpu="$MCPU") ;;
    fp32|tf32)
      if [ "$FAKE_CUDA" = 1 ]; then
        flags=(--target=cpu --cpu-blas=false --mcpu="$MCPU")
      elif [ "$FAKE_CUDA" = emulated ]; then
        flags=(--target=cuda --cuda-host-emulation --mcpu="$MCPU")
        [ "$kind" = tf32 ] && flags+=(--allow-tf32)
      else
        flags=(--target=cuda "${CUDA_FLAGS[@]}")
        [ "$kind" = tf32 ] && flags+=(--allow-tf32)
      fi ;;
  esac
  flags+=("$@")
  local t0 log=$WORK/compile.$$.$RANDOM.log
  t0=$(date +%s)
  if "$SOAP_BIN/soapc" "$src" "${COMMON[@]}" "${flags[@]}" -o "$out" > "$log" 2>&1; then
    echo "compiled ${out#"$BUNDLE"/} ($(( $(date +%s) - t0 )) s): soapc $(basename "$src") ${flags[*]}" >> "$LOG"
  else
    { echo "soapc $src ${COMMON[*]} ${flags[*]} -o $out failed:"; tail -20 "$log"; } > "$out.error"
    rm -f "$out"
    echo "FAILED ${out#"$BUNDLE"/}: $(grep -m1 error "$log" || tail -1 "$log")" >> "$LOG"
  fi
  rm -f "$log"
}
run_job() {
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  compile "$@" &
}

# --- Differential models: MLIR, input specs, compile. -----------------------
MANIFEST=$BUNDLE/manifest.tsv
{
  printf 'meta\tcreated\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf 'meta\tcommit\t%s%s\n' "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  printf 'meta\tcuda\t%s\n' "$CUDA_STATUS"
  printf 'meta\tfake\t%s\n' "$FAKE_CUDA"
  printf 'meta\tseed\t%s\n' "$SEED"
  printf 'meta\tflags\t%s\n' "${COMMON[*]} --mcpu=$MCPU; cuda: ${CUDA_FLAGS[*]:-}"
  printf 'meta\ttrain\t%s\n' "diff/*-train: --train --train-returns=gradients; time/*-train: $([ "$TRAIN_TIMING" = 1 ] && echo "--train --train-returns=outputs${TRAIN_FLAGS[*]:+ ${TRAIN_FLAGS[*]}}${TRAIN_CUDA_FORMAT:+ (cuda: --cuda-format=$TRAIN_CUDA_FORMAT unless CUDA_FORMAT)}" || echo "none (TRAIN_TIMING=$TRAIN_TIMING)")"
} > "$MANIFEST"

DIFF_NAMES=()
# diff_entry NAME SRC INPUTS BATCH [FLAG...]: the manifest row and the three
# compile jobs of diff/NAME (the FLAGs go to every slot's soapc). Called as
# `REF_SRC=FILE diff_entry ...`, the CPU reference compiles FILE instead (a
# 16-bit model's f32 version; its inputs are widened: REF_WIDEN).
declare -A REF_WIDEN=()
diff_entry() {
  local name=$1 src=$2 inputs=$3 batch=$4 dir=$BUNDLE/diff/$1
  shift 4
  mkdir -p "$dir"
  if [ "$inputs" = scaled ]; then
    python3 "$ROOT/benchmarks/gpu/input-spec.py" "$src" > "$dir/inputs.spec"
  fi
  # The tolerance class: half where the model has bf16 or f16 tensors.
  local precision=full
  grep -qE 'tensor<([0-9]+x)*b?f16>' "$src" && precision=half
  printf 'diff\t%s\t%s\t%s\t%s\t%s\n' "$name" "$batch" "$inputs" "$SEED" \
    "$precision" >> "$MANIFEST"
  DIFF_NAMES+=("$name")
  if [ -n "${REF_SRC:-}" ]; then
    REF_WIDEN[$name]=1
    run_job "$REF_SRC" "$dir/cpu" cpu "$@"
  else
    run_job "$src" "$dir/cpu" cpu "$@"
  fi
  if [ "$CUDA_OK" = 1 ]; then
    run_job "$src" "$dir/cuda-fp32" fp32 "$@"
    if [ "$TF32_OK" = 1 ]; then run_job "$src" "$dir/cuda-tf32" tf32 "$@"
    else echo "$CUDA_STATUS" > "$dir/cuda-tf32.error"; fi
  else
    echo "$CUDA_STATUS" > "$dir/cuda-fp32.error"
    echo "$CUDA_STATUS" > "$dir/cuda-tf32.error"
  fi
}
for model in $DIFF_MODELS; do
  if [[ "$model" == *.mlir ]]; then
    diff_entry "$(basename "$model" .mlir)" "$model" random -
  else
    src=$WORK/$model-b$DIFF_BATCH.mlir
    "$SOAP_BIN/soap-models" "$model" --batch="$DIFF_BATCH" -o "$src"
    diff_entry "$model" "$src" scaled "$DIFF_BATCH"
  fi
done
# 16-bit models against their f32 versions (scaled inputs, widened for the
# reference).
for spec in $HALF_DIFF_MODELS; do
  if [[ "$spec" == *.mlir ]]; then
    src=$spec name=$(basename "$spec" .mlir) batch=-
  else
    model=${spec%%:*} dtype=${spec#*:} name=${spec%%:*}_${spec#*:} batch=$DIFF_BATCH
    src=$WORK/$name-b$DIFF_BATCH.mlir
    "$SOAP_BIN/soap-models" "$model" --batch="$DIFF_BATCH" --dtype="$dtype" -o "$src"
  fi
  ref=$WORK/$name.f32.mlir
  "$SOAP_BIN/soap-opt" "$src" --soap-change-float-type="from=bf16,f16 to=f32" \
    -o "$ref"
  REF_SRC=$ref diff_entry "$name" "$src" scaled "$batch"
done
# Training steps of small models on random inputs (the zoo models would need
# scaled inputs for the cotangents too: not covered).
for model in $TRAIN_DIFF_MODELS; do
  src=$model
  [[ "$model" == *.mlir ]] || src=$ROOT/test/Numerics/Inputs/$model.mlir
  if [ ! -f "$src" ]; then
    say "FAIL: $model-train: no $src (TRAIN_DIFF_MODELS takes names of test/Numerics/Inputs/*.mlir or .mlir paths)"
    TRAIN_DIFF_FAILED=1
    continue
  fi
  diff_entry "$(basename "$src" .mlir)-train" "$src" random - --train --train-returns=gradients
done

# --- Timing executables (CUDA only). ----------------------------------------
# Manifest rows: time MODEL BATCH PREC PATH MODE, MODE forward or train. All
# forward rows come first: gpu-check times them in this order, so that a
# short budget cuts the training steps, not the forward passes.
TIME_MODES=(forward)
[ "$TRAIN_TIMING" = 1 ] && TIME_MODES+=(train)
# An entry is ZOO_MODEL:BATCH, or a .mlir file (batch "file": as written).
timing_entry() {
  case $1 in
    *.mlir) model=$(basename "$1" .mlir) batch=file ;;
    *) model=${1%%:*} batch=${1#*:} ;;
  esac
}
for spec in $TIMING_MODELS; do
  timing_entry "$spec"
  if [ "$batch" = file ]; then
    cp "$spec" "$WORK/$model-b$batch.mlir"
  else
    "$SOAP_BIN/soap-models" "$model" --batch="$batch" -o "$WORK/$model-b$batch.mlir"
  fi
done
for mode in "${TIME_MODES[@]}"; do
  for spec in $TIMING_MODELS; do
    timing_entry "$spec"
    src=$WORK/$model-b$batch.mlir
    for prec in fp32 tf32; do
      exe=$BUNDLE/time/$model-b$batch-$prec extra=()
      if [ "$mode" = train ]; then
        # The simulator's prediction of the step (soapc --report:
        # predicted_iteration_ms), which gpu-check sets beside the time.
        exe+=-train extra=(--train --train-returns=outputs "${TRAIN_FLAGS[@]}" --report="$exe.report.json")
        if [ -z "$CUDA_FORMAT" ] && [ -n "$TRAIN_CUDA_FORMAT" ] && [ "$FAKE_CUDA" = 0 ]; then
          extra+=(--cuda-format="$TRAIN_CUDA_FORMAT")
        fi
      fi
      printf 'time\t%s\t%s\t%s\t%s\t%s\n' "$model" "$batch" "$prec" "time/$(basename "$exe")" "$mode" >> "$MANIFEST"
      if [ "$CUDA_OK" = 1 ] && { [ "$prec" = fp32 ] || [ "$TF32_OK" = 1 ]; }; then
        run_job "$src" "$exe" "$prec" "${extra[@]}"
      else
        echo "$CUDA_STATUS" > "$exe.error"
      fi
    done
  done
done
wait

# --- CPU references: run each CPU executable here on the fixed inputs. ------
FAILED=${TRAIN_DIFF_FAILED:-0}
for name in "${DIFF_NAMES[@]}"; do
  dir=$BUNDLE/diff/$name
  if [ ! -x "$dir/cpu" ]; then
    say "FAIL: $name: the CPU executable did not compile: $(sed -n 2p "$dir/cpu.error")"
    FAILED=1
    continue
  fi
  args=(--random-inputs="$SEED")
  if [ -f "$dir/inputs.spec" ]; then
    "$BUNDLE/bin/make-inputs" "$dir/inputs.spec" "$WORK/in-$name" "$SEED" > /dev/null
    n=$(grep -c . "$dir/inputs.spec")
    args=(--inputs)
    for ((i = 0; i < n; i++)); do args+=("$WORK/in-$name/in$i.npy"); done
    names=()
    for ((i = 0; i < n; i++)); do names+=("in$i.npy"); done
    (cd "$WORK/in-$name" && sha256sum "${names[@]}") > "$dir/inputs.sha256"
    if [ -n "${REF_WIDEN[$name]:-}" ]; then # the f32 reference: values widened
      mkdir -p "$WORK/wide-$name"
      "$BUNDLE/bin/soap-npy-compare" --to-f32 "$WORK/wide-$name" "$WORK/in-$name"/in*.npy
      args=(--inputs)
      for ((i = 0; i < n; i++)); do args+=("$WORK/wide-$name/in$i.npy"); done
    fi
  fi
  t0=$(date +%s)
  if ! timeout -k 10 "$REF_TIMEOUT" "${MPIRUN[@]}" "$dir/cpu" "${args[@]}" --quiet \
      --output-dir="$dir/expected" > "$WORK/ref-$name.log" 2>&1; then
    say "FAIL: $name: the CPU reference run failed:"
    tail -5 "$WORK/ref-$name.log" | tee -a "$LOG"
    FAILED=1
  fi
  rm -rf "$WORK/in-$name"
  for r in "$dir"/expected/result*.npy; do
    [ -f "$r" ] || continue
    # A reference with NaN/inf would make the comparison meaningless.
    line=$("$BUNDLE/bin/soap-npy-compare" "$r" "$r")
    magnitude=$(sed -n 's/.*max|a| = \([^,]*\).*/\1/p' <<< "$line")
    nonfinite=$(sed -n 's/.*, \([0-9]*\) non-finite.*/\1/p' <<< "$line")
    say "reference $name/$(basename "$r"): max|value| = $magnitude${nonfinite:+, $nonfinite NON-FINITE values} ($(( $(date +%s) - t0 )) s)"
  done
done

# --- Compress the larger executables (embedded PTX compresses ~10x). --------
find "$BUNDLE/diff" "$BUNDLE/time" -type f -size +"${GZIP_MIN_KIB}"k \
    ! -name '*.npy' ! -name '*.error' ! -name '*.spec' ! -name '*.sha256' ! -name '*.json' \
    -exec gzip -9 -n {} +

# --- Summary. ---------------------------------------------------------------
# size FILE: "N KiB" of FILE or FILE.gz, or nothing when neither exists.
size() {
  if [ -f "$1" ]; then echo "$(du -k "$1" | cut -f1) KiB"
  elif [ -f "$1.gz" ]; then echo "$(du -k "$1.gz" | cut -f1) KiB gzipped"
  fi
}
# predicted_ms REPORT: the simulator's predicted iteration time in REPORT
# (soapc --report), rounded, or nothing.
predicted_ms() {
  if [ -f "$1" ]; then
    python3 -c 'import json, sys; print("%.3f" % json.load(open(sys.argv[1]))["predicted_iteration_ms"])' "$1" 2>/dev/null || true
  fi
}
{
  echo "SOAP GPU bundle, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "soapc: $SOAP_BIN/soapc ${COMMON[*]} --mcpu=$MCPU"
  echo "CUDA: $CUDA_STATUS"
  echo "seed $SEED; run it there with: bash scripts/gpu-check.sh"
  echo
  echo "differential check (CPU reference results bundled):"
  for name in "${DIFF_NAMES[@]}"; do
    dir=$BUNDLE/diff/$name
    row="  $name:"
    for slot in cpu cuda-fp32 cuda-tf32; do
      sz=$(size "$dir/$slot")
      row+=" $slot ${sz:-MISSING};"
    done
    row+=" $(find "$dir/expected" -name 'result*.npy' 2>/dev/null | wc -l) result(s)"
    [ -f "$dir/inputs.spec" ] && row+=", scaled inputs ($(grep -c . "$dir/inputs.spec") .npy)"
    echo "$row"
  done
  echo "timing executables (-train: the training step, soapc --train${TRAIN_FLAGS[*]:+ ${TRAIN_FLAGS[*]}}):"
  awk -F'\t' '$1 == "time" { print $5 }' "$MANIFEST" | while read -r rel; do
    exe=$BUNDLE/$rel
    sz=$(size "$exe")
    predicted=$(predicted_ms "$exe.report.json")
    if [ -n "$sz" ]; then echo "  $rel $sz${predicted:+ (simulated: $predicted ms)}"
    else echo "  $rel MISSING: $(grep -m1 . "$exe.error" 2>/dev/null | sed 's/^MISSING: //' | cut -c1-160)"; fi
  done
  [ -z "$TIMING_MODELS" ] && echo "  (none: TIMING_MODELS is empty)"
  # Shared libraries of one CUDA executable (the GPU machine has cuBLAS,
  # cuDNN, NCCL and OpenMPI in its loader path).
  one=$(find "$BUNDLE/diff" "$BUNDLE/time" -type f \( -name cuda-fp32 -o -name cuda-fp32.gz -o -name '*-fp32' -o -name '*-fp32.gz' \) | awk 'NR == 1')
  if [ -n "$one" ]; then
    echo "shared libraries of ${one#"$BUNDLE"/}:"
    if [[ "$one" == *.gz ]]; then gunzip -c "$one" > "$WORK/ldd-probe"; chmod +x "$WORK/ldd-probe"; one=$WORK/ldd-probe; fi
    ldd "$one" | sed 's/ (0x[0-9a-f]*)//; s/^[[:space:]]*/  /'
  fi
} > "$BUNDLE/MANIFEST.txt"
cat "$BUNDLE/MANIFEST.txt"
KIB=$(du -sk "$BUNDLE" | cut -f1)
echo
echo "gpu-bundle: $BUNDLE: $((KIB / 1024)) MiB ($KIB KiB), $(find "$BUNDLE" -type f | wc -l) files, built in $(( $(date +%s) - START )) s"
echo "gpu-bundle: largest files:"
# No `head` in these pipelines: under pipefail a writer killed by SIGPIPE
# would end the script (set -e) before its verdict.
find "$BUNDLE" -type f -printf '%s %P\n' | sort -rn | awk 'NR <= 8 { printf "  %8.1f KiB  %s\n", $1 / 1024, $2 }'
if [ "$KIB" -gt $((MAX_MIB * 1024)) ]; then
  echo "gpu-bundle: WARNING: over $MAX_MIB MiB: the run carries at most 64 MiB in all"
fi
if [ "$FAILED" != 0 ]; then
  echo "gpu-bundle: FAIL: some CPU references are missing (see above)"
  exit 1
fi
echo "gpu-bundle: done; on the GPU machine: bash scripts/gpu-check.sh (carry ${BUNDLE#"$ROOT"/})"
