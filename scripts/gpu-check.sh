#!/usr/bin/env bash
# The GPU check: run on the GPU machine, from the repository root, with the
# bundle that scripts/gpu-bundle.sh built on the CPU machine (no MLIR, no
# SOAP build and nothing to install there).
#
#   bash scripts/gpu-check.sh
#
# 1. Prints the GPU (nvidia-smi -L), driver, CUDA, cuBLAS/cuDNN/NCCL/MPI
#    versions and whether the CUDA executables find their shared libraries.
#    Then libsoaprt_cuda's own smoke model, if bundled (bin/soaprt-cuda-smoke:
#    hand-written kernels, cuBLAS, cuDNN, copies; it checks its results).
# 2. Differential check: runs every bundled CUDA executable (diff/NAME/
#    cuda-fp32, cuda-tf32) on the same inputs as the CPU reference results
#    computed at bundle time, and compares every result with
#    soap-npy-compare: relative error max|a-b|/max|a| <= RTOL_FP32 (1e-4:
#    strict fp32 sums in another order than the CPU) or RTOL_TF32 (2e-2:
#    TF32 tensor cores round the inputs of products to 10-bit mantissas);
#    a 16-bit model (bf16 or f16 tensors: manifest precision "half")
#    RTOL_HALF (2e-2: cuBLAS and cuDNN sum in fp32 and
#    round once, the CPU rounds every partial sum to the type, as the IR
#    says; ~1% measured on the host emulation).
#    The entries NAME-train are training steps (soapc --train
#    --train-returns=gradients: the results, then dL/dx of every float
#    argument; the cotangents are random inputs too), checked the same way.
#    Prints PASS/FAIL per model and precision with the measured error. After
#    a failed run it reruns once with SOAPRT_CUDA_SYNC=1, which makes the
#    runtime name the op that faulted.
# 3. Timing: each time/MODEL-bBATCH-PREC executable (forward pass) with
#    --iterations=ITERS, the median of the iterations after the first WARMUP;
#    then each time/MODEL-bBATCH-PREC-train executable (the training step:
#    forward, backward, SGD update of the parameters in place on the GPU, so
#    each iteration is one more step; manifest mode "train") with TRAIN_ITERS
#    and TRAIN_WARMUP, as it is much slower. Then
#    benchmarks/pytorch_reference.py times the same torchvision models:
#    forward in eval mode under no_grad, strict fp32 and TF32, and (unless
#    TORCH_TRAIN=0) a training step: forward, cross-entropy loss, backward,
#    SGD step (--train-only, ITERS and WARMUP as for the forward pass).
# 4. Prints the tables (markdown) and writes them to $OUT/gpu-table.md, the
#    whole output to $OUT/gpu-check.log and the numbers to
#    $OUT/gpu-results.json when OUT is set. The timing table has one row per
#    model, batch and precision: SOAP and PyTorch forward ms and their ratio,
#    then SOAP train ms, PyTorch train ms and "train SOAP/PyTorch". A second
#    table sets each measured training step beside the time soapc's
#    simulator predicted for it (the bundle's time/NAME-train.report.json),
#    the check of the cost model on a real GPU.
# Every step runs under `timeout`, within a total budget, so that a hang
# cannot eat the run; missing pieces (no CUDA executables in the bundle, no
# torch) are reported and skipped. Exit status: 1 if a differential check
# failed (mismatch, crash or timeout), 2 if none could run (e.g. the bundle
# has no CUDA executables), 0 otherwise.
#
# Environment: BUNDLE (default gpu-bundle/ in the repo), OUT, ITERS (default
# 20), WARMUP (default 5), TRAIN_ITERS (SOAP training steps, default 6),
# TRAIN_WARMUP (default 2), RTOL_FP32, RTOL_TF32, RTOL_HALF, BUDGET (seconds for the
# whole check, default 480), DIFF_TIMEOUT (per run, default 120),
# TIME_TIMEOUT (per run, forward or training step, default 120),
# TORCH_TIMEOUT (per PyTorch process, default 240), TORCH=0 (skip PyTorch), TORCH_TRAIN=0 (skip its training
# step), PYTHON (default python3), TORCH_DEVICE (default cuda; cpu for a dry
# run of the PyTorch step without a GPU), ONLY (regular expression: only the models whose name matches),
# MPIRUN (launcher, default "mpirun -np 1 --oversubscribe --bind-to none";
# "none" runs the executables directly), FAKE_CUDA=1 (test the harness on a
# machine without CUDA executables: run diff/NAME/cpu where a CUDA one is
# missing; a failing smoke model does not count; a bundle built with
# FAKE_CUDA=emulated holds CUDA executables that run on the host emulation:
# test/Runtime/gpu-harness.test runs this script on one), KEEP=1 (keep the
# work folder).
# No `set -e` / `set -u`: one failing step must not end the run before the
# tables are printed.
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
BUNDLE=${BUNDLE:-$ROOT/gpu-bundle}
ITERS=${ITERS:-20} WARMUP=${WARMUP:-5}
RTOL_FP32=${RTOL_FP32:-1e-4} RTOL_TF32=${RTOL_TF32:-2e-2} RTOL_HALF=${RTOL_HALF:-2e-2}
BUDGET=${BUDGET:-480}
DIFF_TIMEOUT=${DIFF_TIMEOUT:-120} TIME_TIMEOUT=${TIME_TIMEOUT:-120}
TORCH_TIMEOUT=${TORCH_TIMEOUT:-240}
TORCH=${TORCH:-1} TORCH_TRAIN=${TORCH_TRAIN:-1}
PYTHON=${PYTHON:-python3} TORCH_DEVICE=${TORCH_DEVICE:-cuda}
ONLY=${ONLY:-}
FAKE_CUDA=${FAKE_CUDA:-0}
TRAIN_ITERS=${TRAIN_ITERS:-6} TRAIN_WARMUP=${TRAIN_WARMUP:-2}
[ "$WARMUP" -ge "$ITERS" ] && WARMUP=$((ITERS - 1))
[ "$TRAIN_WARMUP" -ge "$TRAIN_ITERS" ] && TRAIN_WARMUP=$((TRAIN_ITERS - 1))
# Time kept back for the later steps while an earlier one runs.
RESERVE_TIME=60 RESERVE_TORCH=150

WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-gpu-check.XXXXXX")
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  LOG=$OUT/gpu-check.log
else
  LOG=$WORK/gpu-check.log
fi
exec > >(tee "$LOG") 2>&1
TEE_PID=$!
# shellcheck disable=SC2317
cleanup() {
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

section() { printf '\n=== %s (%d s) ===\n' "$1" "$SECONDS"; }
# Seconds left for a step that must leave `reserve` for later steps.
left() { echo $((BUDGET - SECONDS - ${1:-0})); }
# The timeout of a step: its own limit, or less if the budget says so.
limit() {
  local t=$1 l
  l=$(left "${2:-0}")
  [ "$l" -lt "$t" ] && t=$l
  echo "$t"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# A log without mpirun's banner about a failed rank.
strip_mpi() { grep -v -E -e '^-{20,}' -e 'mpirun (detected|noticed)' -e 'Process name:|Exit code:|Primary job|Per user-direction|the job to be terminated|The first process to do so' -e '^[[:space:]]*$'; }
# The executable at bundle path REL (unpacked if it was gzipped), or REL
# itself when there is none.
exe_of() {
  if [ -x "$WORK/exe/$1" ]; then echo "$WORK/exe/$1"; else echo "$BUNDLE/$1"; fi
}
selected() { [ -z "$ONLY" ] || [[ "$1" =~ $ONLY ]]; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One rank on one machine: shared memory and self only, so that Open MPI does
# not probe InfiniBand/UCX (slow start-up, warnings) on a GPU server.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
if [ -n "${MPIRUN:-}" ]; then
  read -r -a LAUNCH <<< "$MPIRUN"
else
  LAUNCH=(mpirun -np 1 --oversubscribe --bind-to none)
fi
[ "${LAUNCH[0]}" = none ] && LAUNCH=()
# run_exe SECONDS LOGFILE EXE ARGS...: the executable under the launcher.
run_exe() {
  local t=$1 log=$2
  shift 2
  timeout -k 10 "$t" "${LAUNCH[@]}" "$@" < /dev/null > "$log" 2>&1
}

echo "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname 2>/dev/null || cat /proc/sys/kernel/hostname), repo $(git rev-parse --short HEAD 2>/dev/null || echo '?'), bundle $BUNDLE, budget $BUDGET s"

# ---------------------------------------------------------------- 1. system
section "GPU, driver, libraries"
if command -v nvidia-smi > /dev/null; then
  timeout 30 nvidia-smi -L
  timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,memory.used,utilization.gpu,clocks.max.sm,power.limit --format=csv
  timeout 30 nvidia-smi | grep -m1 -o 'CUDA Version: *[0-9.]*' || true
  busy=$(timeout 30 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null)
  [ -n "$busy" ] && echo "gpu-check: WARNING: the GPU is in use (timings suffer):" && echo "$busy"
else
  echo "nvidia-smi: not found (no NVIDIA driver on this machine)"
fi
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(grep PRETTY_NAME /etc/os-release 2>/dev/null | cut -d'"' -f2); glibc $(ldd --version 2>/dev/null | head -1 | awk '{print $NF}')"
echo "libraries in the loader path:"
for lib in libcuda.so libcudart.so libcublas.so libcublasLt.so libcudnn.so libnccl.so libnvrtc.so libmpi.so; do
  paths=$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 ~ "^"l {print $NF}' | sort -u)
  if [ -z "$paths" ]; then
    echo "  $lib: not found"
  else
    for p in $paths; do echo "  $lib: $(readlink -f "$p")"; done | sort -u | head -3
  fi
done
if command -v dpkg-query > /dev/null; then
  echo "packages:"
  dpkg-query -W -f='${Package} ${Version}\n' 2>/dev/null |
    grep -E '^(libcudnn|cudnn|libnccl|libcublas|cuda-runtime|cuda-cudart|cuda-toolkit-[0-9]|nvidia-driver|libnvidia-compute|openmpi-bin|libopenmpi)' |
    sed 's/^/  /' | head -20
fi
echo "mpirun: $(mpirun --version 2>/dev/null | head -1 || echo 'not found')"
if [ ! -f "$BUNDLE/manifest.tsv" ]; then
  echo "gpu-check: no bundle at $BUNDLE (build it with scripts/gpu-bundle.sh and carry it)"
  HAVE_BUNDLE=0
else
  HAVE_BUNDLE=1
  echo "bundle:"
  awk -F'\t' '$1 == "meta" { printf "  %s: %s\n", $2, $3 }' "$BUNDLE/manifest.tsv"
  case $(awk -F'\t' '$1 == "meta" && $2 == "fake" { print $3 }' "$BUNDLE/manifest.tsv") in
    1) echo "  *** FAKE bundle: the 'CUDA' executables are CPU builds (harness test only) ***" ;;
    emulated) echo "  *** EMULATED bundle: the CUDA executables run on the host emulation of CUDA (harness test only) ***" ;;
  esac
  # Executables stored gzipped: unpacked into the work folder.
  mapfile -t packed < <(cd "$BUNDLE" && find diff time -type f -name '*.gz' 2>/dev/null | sort)
  for f in "${packed[@]}"; do
    mkdir -p "$WORK/exe/$(dirname "$f")"
    gunzip -c "$BUNDLE/$f" > "$WORK/exe/${f%.gz}" && chmod +x "$WORK/exe/${f%.gz}"
  done
  [ "${#packed[@]}" -gt 0 ] && echo "unpacked ${#packed[@]} gzipped executable(s)"
  # Shared libraries of the CUDA executables.
  mapfile -t cuda_exes < <(find "$BUNDLE/diff" "$BUNDLE/time" "$WORK/exe" -type f \( -name 'cuda-*' -o -name '*-fp32' -o -name '*-tf32' -o -name '*-train' \) ! -name '*.error' ! -name '*.gz' 2>/dev/null | sort)
  if [ "${#cuda_exes[@]}" -gt 0 ]; then
    missing=$(for e in "${cuda_exes[@]}"; do ldd "$e" 2>/dev/null | grep 'not found'; done | sort -u)
    echo "shared libraries of ${cuda_exes[0]#"$BUNDLE"/}:"
    ldd "${cuda_exes[0]}" 2>&1 | sed 's/ (0x[0-9a-f]*)//; s/^[[:space:]]*/  /'
    if [ -n "$missing" ]; then
      echo "gpu-check: WARNING: libraries not found for the CUDA executables:"
      echo "$missing"
    fi
  fi
fi
if [ "${#LAUNCH[@]}" -gt 0 ]; then
  if timeout 60 "${LAUNCH[@]}" /bin/true < /dev/null > "$WORK/mpi-probe.log" 2>&1; then
    echo "launcher: ${LAUNCH[*]}"
  else
    echo "gpu-check: '${LAUNCH[*]} /bin/true' fails; running the executables directly (MPI singleton):"
    tail -5 "$WORK/mpi-probe.log"
    LAUNCH=()
  fi
else
  echo "launcher: none (executables run directly)"
fi

# ----------------------------- 1b. libsoaprt_cuda's smoke model (if bundled)
smoke_failed=0
if [ -x "$BUNDLE/bin/soaprt-cuda-smoke" ]; then
  section "libsoaprt_cuda smoke model (PTX and cubin kernels, cuBLAS, cuDNN, copies)"
  mkdir -p "$WORK/smoke"
  timeout -k 10 120 "${LAUNCH[@]}" "$BUNDLE/bin/soaprt-cuda-smoke" \
    --output-dir="$WORK/smoke" --iterations=3 < /dev/null > "$WORK/smoke.log" 2>&1
  smoke_rc=$?
  cat "$WORK/smoke.log"
  if [ $smoke_rc -eq 0 ] && grep -q "checks passed" "$WORK/smoke.log"; then
    echo "smoke: PASS"
  elif [ "$FAKE_CUDA" = 1 ]; then
    echo "smoke: FAIL (status $smoke_rc; not counted: FAKE_CUDA=1, a machine without a GPU)"
  else
    echo "smoke: FAIL (status $smoke_rc)"
    smoke_failed=1
  fi
fi

# ----------------------------------------------------- 2. differential check
section "Differential check (CUDA vs CPU reference, same inputs)"
echo "tolerance: relative error max|a-b|/max|a| <= $RTOL_FP32 (strict fp32), <= $RTOL_TF32 (TF32), <= $RTOL_HALF (bf16 / f16 models)"
DIFF_TSV=$WORK/diff.tsv
: > "$DIFF_TSV"
syncs_left=3
if [ "$HAVE_BUNDLE" = 1 ]; then
  while IFS=$'\t' read -r _ name batch inputs seed precision; do
    selected "$name" || continue
    dir=$BUNDLE/diff/$name
    args=(--random-inputs="$seed")
    inputs_ok=1
    for prec in fp32 tf32; do
      exe=$(exe_of "diff/$name/cuda-$prec") note=""
      if [ "$precision" = half ]; then rtol=$RTOL_HALF
      elif [ "$prec" = fp32 ]; then rtol=$RTOL_FP32; else rtol=$RTOL_TF32; fi
      status="" maxrel="" secs=""
      if [ ! -x "$exe" ] && [ "$FAKE_CUDA" = 1 ] && [ -x "$(exe_of "diff/$name/cpu")" ]; then
        exe=$(exe_of "diff/$name/cpu") note="FAKE_CUDA: the CPU executable"
      fi
      if [ ! -x "$exe" ]; then
        status=MISSING
        note=$(grep -m1 . "$dir/cuda-$prec.error" 2>/dev/null || echo "not in the bundle")
        note=${note#MISSING: }
      elif [ ! -d "$dir/expected" ]; then
        status=MISSING note="no CPU reference results in the bundle"
      elif [ "$(left $((RESERVE_TIME + RESERVE_TORCH)))" -lt 10 ]; then
        status=SKIPPED note="no time left"
      fi
      # Scaled inputs: written once per model, checked against the bundle.
      if [ -z "$status" ] && [ "$inputs" = scaled ]; then
        if [ ! -d "$WORK/in-$name" ]; then
          if ! timeout 120 "$BUNDLE/bin/make-inputs" "$dir/inputs.spec" "$WORK/in-$name" "$seed" > "$WORK/make-inputs.log" 2>&1; then
            inputs_ok=0; cat "$WORK/make-inputs.log"
          elif ! (cd "$WORK/in-$name" && sha256sum --quiet -c "$dir/inputs.sha256") > "$WORK/sha.log" 2>&1; then
            inputs_ok=0; head -3 "$WORK/sha.log"
          fi
        fi
        if [ "$inputs_ok" = 0 ]; then
          status=ERROR note="the inputs written here differ from the ones the reference used"
        else
          n=$(grep -c . "$dir/inputs.spec")
          args=(--inputs)
          for ((i = 0; i < n; i++)); do args+=("$WORK/in-$name/in$i.npy"); done
        fi
      fi
      if [ -z "$status" ]; then
        actual=$WORK/out-$name-$prec
        t=$(limit "$DIFF_TIMEOUT" $((RESERVE_TIME + RESERVE_TORCH)))
        t0=$SECONDS
        run_exe "$t" "$WORK/diff-$name-$prec.log" "$exe" "${args[@]}" --quiet --output-dir="$actual"
        rc=$?
        secs=$((SECONDS - t0))
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
          status=TIMEOUT note="after $t s"
        elif [ "$rc" != 0 ]; then
          status=ERROR note="exit status $rc: $(grep -m1 -i 'error' "$WORK/diff-$name-$prec.log" || tail -1 "$WORK/diff-$name-$prec.log")"
        else
          status=PASS
          for expected in "$dir"/expected/result*.npy; do
            got=$actual/$(basename "$expected")
            if [ ! -f "$got" ]; then
              status=FAIL note="$(basename "$expected") missing"
              continue
            fi
            line=$("$BUNDLE/bin/soap-npy-compare" "$expected" "$got" --rtol="$rtol" 2>&1) || status=FAIL
            echo "    ${line#"$WORK"/}" >> "$WORK/diff-$name-$prec.compare"
            rel=$(sed -n 's/.*relative error max|a-b|\/max|a| = \([^ ]*\) .*/\1/p' <<< "$line")
            if [ -n "$rel" ] && { [ -z "$maxrel" ] || awk -v a="$rel" -v b="$maxrel" 'BEGIN { exit !(a + 0 > b + 0) }'; }; then
              maxrel=$rel
            fi
            [[ "$line" == *MISMATCH* && "$line" != *"relative error"* ]] && maxrel=${maxrel:-mismatch}
          done
          [[ "$status" = FAIL && -z "$note" ]] && note="over the tolerance"
        fi
      fi
      printf '  %-18s %-4s %-7s max rel err %-10s (rtol %s) %s%s\n' "$name" "$prec" "$status" \
        "${maxrel:--}" "$rtol" "${secs:+${secs} s }" "${note:+ $note}"
      if [ -f "$WORK/diff-$name-$prec.compare" ] && [ "$status" != PASS ]; then
        cat "$WORK/diff-$name-$prec.compare"
      fi
      if [ "$status" = ERROR ] && [ -f "$WORK/diff-$name-$prec.log" ]; then
        strip_mpi < "$WORK/diff-$name-$prec.log" | tail -8 | sed 's/^/    | /'
        if [ "$syncs_left" -gt 0 ] && [ "$(left $((RESERVE_TIME + RESERVE_TORCH)))" -gt 30 ]; then
          syncs_left=$((syncs_left - 1))
          echo "    rerun with SOAPRT_CUDA_SYNC=1:"
          SOAPRT_CUDA_SYNC=1 run_exe "$(limit "$DIFF_TIMEOUT" $((RESERVE_TIME + RESERVE_TORCH)))" \
            "$WORK/sync-$name-$prec.log" "$exe" "${args[@]}" --quiet --output-dir="$WORK/sync-out"
          strip_mpi < "$WORK/sync-$name-$prec.log" | tail -8 | sed 's/^/    | /'
        fi
      fi
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$batch" "$prec" "$status" "${maxrel:-}" "$rtol" "${secs:-}" "$note" >> "$DIFF_TSV"
      rm -rf "$WORK/out-$name-$prec"
    done
    rm -rf "$WORK/in-$name"
  done < <(awk -F'\t' '$1 == "diff"' "$BUNDLE/manifest.tsv")
fi

# ------------------------------------------------------------ 3a. SOAP timing
section "Timing: SOAP CUDA executables (forward: $ITERS iterations, median of the last $((ITERS - WARMUP)); training step: $TRAIN_ITERS, median of the last $((TRAIN_ITERS - TRAIN_WARMUP)))"
TIME_TSV=$WORK/time.tsv
: > "$TIME_TSV"
TORCH_MODELS=()
if [ "$HAVE_BUNDLE" = 1 ]; then
  # The 6th column (mode: forward or train) is missing in older bundles.
  while IFS=$'\t' read -r _ model batch prec path mode; do
    selected "$model" || continue
    mode=${mode:-forward}
    if [ "$mode" = train ]; then iters=$TRAIN_ITERS warmup=$TRAIN_WARMUP label="$model b$batch $prec train"
    else iters=$ITERS warmup=$WARMUP label="$model b$batch $prec"; fi
    # PyTorch times the zoo models only (torchvision), not .mlir files.
    [ "$batch" = file ] || [[ " ${TORCH_MODELS[*]} " == *" $model:$batch "* ]] || TORCH_MODELS+=("$model:$batch")
    exe=$(exe_of "$path") status="" med="" best="" n=0 skip=0 peak="" note=""
    if [ ! -x "$exe" ]; then
      status=MISSING note=$(grep -m1 . "$BUNDLE/$path.error" 2>/dev/null || echo "not in the bundle")
      note=${note#MISSING: }
    elif [ "$(left "$RESERVE_TORCH")" -lt 15 ]; then
      status=SKIPPED note="no time left"
    else
      t=$(limit "$TIME_TIMEOUT" "$RESERVE_TORCH")
      log=$WORK/time-$model-$batch-$prec-$mode.log
      t0=$SECONDS
      # No --quiet: it would hide the "peak device memory: X MiB" line.
      # --random-inputs covers a training step's cotangents too.
      run_exe "$t" "$log" "$exe" --random-inputs=1 --iterations="$iters" --output-dir="$WORK/time-out"
      rc=$?
      rm -rf "$WORK/time-out"
      mapfile -t times < <(sed -n 's/^iteration \([0-9]*\): \([0-9.]*\) ms.*/\2/p' "$log")
      n=${#times[@]}
      skip=$warmup
      [ "$n" -le "$skip" ] && skip=$((n > 1 ? 1 : 0))
      if [ "$n" -gt 0 ]; then
        med=$(printf '%s\n' "${times[@]:$skip}" | median)
        best=$(printf '%s\n' "${times[@]:$skip}" | sort -g | head -1)
      fi
      # The peak after the first iteration (cuDNN's algorithm search is in
      # the first), else the one line there is.
      peak=$( (grep -m1 'after the first iteration' "$log" || grep -i -m1 'peak' "$log") |
        sed 's/^[[:space:]]*//')
      if [ "$rc" = 0 ]; then status=OK
      elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status=TIMEOUT note="after $t s, $n iterations"
      else status=ERROR note="exit status $rc: $(grep -m1 -i error "$log" || tail -1 "$log")"; fi
      echo "  $label: $status in $((SECONDS - t0)) s; iterations (ms): ${times[*]:-none}"
      [ -n "$peak" ] && echo "    $peak"
      [ "$status" = ERROR ] && strip_mpi < "$log" | tail -5 | sed 's/^/    | /'
    fi
    [ "$status" = MISSING ] || [ "$status" = SKIPPED ] && echo "  $label: $status: $note"
    [ -n "$med" ] && echo "    median $med ms, min $best ms over $((n - skip)) iterations"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$model" "$batch" "$prec" "$mode" "$status" "$med" "$best" "$((n - skip > 0 ? n - skip : 0))" "$peak" "$note" >> "$TIME_TSV"
  done < <(awk -F'\t' '$1 == "time"' "$BUNDLE/manifest.tsv")
fi
if [ "${#TORCH_MODELS[@]}" = 0 ]; then
  for m in alexnet:256 resnet101:64 inception_v3:64; do
    selected "${m%%:*}" && TORCH_MODELS+=("$m")
  done
fi

# --------------------------------------------------------- 3b. PyTorch timing
section "Timing: PyTorch reference (benchmarks/pytorch_reference.py)"
TORCH_LOG=$WORK/torch.log
: > "$TORCH_LOG"
if [ "$TORCH" != 1 ]; then
  echo "skipped (TORCH=$TORCH)"
elif [ "${#TORCH_MODELS[@]}" = 0 ]; then
  echo "skipped (no model selected)"
else
  models=$(printf '%s\n' "${TORCH_MODELS[@]}" | cut -d: -f1 | paste -sd,)
  batches=$(printf '%s\n' "${TORCH_MODELS[@]}" | cut -d: -f2 | paste -sd,)
  common=(--model "$models" --batch "$batches" --precision "fp32,tf32" --iters $((ITERS - WARMUP)) --warmup "$WARMUP" --device "$TORCH_DEVICE")
  modes=(forward)
  [ "$TORCH_TRAIN" = 1 ] && modes+=(train)
  for mode in "${modes[@]}"; do
    t=$(limit "$TORCH_TIMEOUT" 5)
    if [ "$t" -lt 30 ]; then
      echo "PyTorch $mode: skipped (no time left)"
      continue
    fi
    extra=()
    [ "$mode" = train ] && extra=(--train-only)
    echo "python3 benchmarks/pytorch_reference.py ${common[*]}${extra[*]:+ ${extra[*]}} (timeout $t s)"
    timeout -k 10 "$t" "$PYTHON" "$ROOT/benchmarks/pytorch_reference.py" "${common[@]}" "${extra[@]}" < /dev/null 2>&1 |
      tee -a "$TORCH_LOG"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "PyTorch $mode: TIMEOUT after $t s (the results above are kept)"
    if grep -q '"error": "cannot import\|"error": "no CUDA' "$TORCH_LOG"; then break; fi
  done
fi

# ----------------------------------------------------------------- 4. tables
section "Results"
FAKE=$(awk -F'\t' '$1 == "meta" && $2 == "fake" { print $3 }' "$BUNDLE/manifest.tsv" 2>/dev/null)
TABLE=$WORK/gpu-table.md
python3 - "$DIFF_TSV" "$TIME_TSV" "$TORCH_LOG" "$TABLE" "${OUT:-}" "$ITERS" "$WARMUP" "${FAKE:-0}" "$FAKE_CUDA" "$TRAIN_ITERS" "$TRAIN_WARMUP" "$BUNDLE" <<'PY' || { echo "(python3 failed: the raw results)"; cat "$DIFF_TSV" "$TIME_TSV"; grep '^RESULT' "$TORCH_LOG"; }
import json, os, sys
diff_tsv, time_tsv, torch_log, table, out, iters, warmup, fake, fake_cuda, \
    train_iters, train_warmup, bundle = sys.argv[1:13]

def rows(path, n):
    result = []
    for line in open(path):
        cells = line.rstrip("\n").split("\t")
        result.append(cells + [""] * (n - len(cells)))
    return result

def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None

diff = rows(diff_tsv, 8)
# model batch precision mode status median min iterations peak note
timing = rows(time_tsv, 10)
torch_info, torch = {}, {}
for line in open(torch_log):
    if line.startswith("INFO "):
        torch_info = json.loads(line[5:])
    elif line.startswith("RESULT "):
        r = json.loads(line[7:])
        if "model" in r:
            torch[(r["model"], str(r["batch"]), r["precision"], r["mode"])] = r

md = []
if fake == "emulated":
    md.append("**EMULATED run: the CUDA executables ran on the host emulation of "
              "CUDA, cuBLAS, cuDNN and NCCL (harness test only; no GPU times).**\n")
elif fake == "1" or fake_cuda == "1":
    md.append("**FAKE run: the 'CUDA' executables are CPU builds (harness test only).**\n")
md.append("### Differential check: SOAP CUDA vs SOAP CPU\n")
md.append("Same inputs; relative error max|a-b|/max|a| over every result. NAME-train: "
          "the training step (soapc --train --train-returns=gradients): the results "
          "and dL/dx of every float argument.\n")
md.append("| model | batch | precision | status | max rel err | rtol | s | note |")
md.append("|---|---:|---|---|---:|---:|---:|---|")
for name, batch, prec, status, rel, rtol, secs, note in diff:
    md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, batch, prec, "**%s**" % status if status not in ("PASS",) else status,
        rel or "-", rtol, secs or "-", note.replace("|", "/")[:120]))
if not diff:
    md.append("| (no differential check in the bundle) | | | | | | | |")

md.append("\n### Timing on %s: median ms; forward pass: %d iterations after %d warm-up, "
          "SOAP training step: %d after %d\n"
          % (torch_info.get("gpu", "the GPU"), int(iters) - int(warmup), int(warmup),
             int(train_iters) - int(train_warmup), int(train_warmup)))
if torch_info:
    md.append("PyTorch %s, torchvision %s, CUDA %s, cuDNN %s, %s; torchvision models, "
              "weights=None, forward: eval mode, torch.no_grad(), cudnn.benchmark; "
              "train: train mode, forward + cross-entropy loss + backward + SGD step "
              "(%d iterations after %d warm-up).\n" % (
                  torch_info.get("torch"), torch_info.get("torchvision"),
                  torch_info.get("cuda"), torch_info.get("cudnn"), torch_info.get("gpu"),
                  int(iters) - int(warmup), int(warmup)))
md.append("| model | batch | precision | SOAP ms | PyTorch ms | SOAP/PyTorch "
          "| SOAP train ms | PyTorch train ms | train SOAP/PyTorch "
          "| SOAP peak memory (fwd / train) | PyTorch peak MiB (fwd / train) | SOAP status |")
md.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|")
keys = []
for model, batch, prec, *_ in timing:
    if (model, batch, prec) not in keys:
        keys.append((model, batch, prec))
for (model, batch, prec, mode) in torch:
    if (model, batch, prec) not in keys:
        keys.append((model, batch, prec))
# (model, batch, precision, mode) -> row; mode "" (an old bundle) is forward.
soap = {(r[0], r[1], r[2], r[3] or "forward"): r for r in timing}
results = {"differential": [], "timing": [], "torch": torch_info,
           "iterations": {"forward": [int(iters), int(warmup)],
                          "soap_train": [int(train_iters), int(train_warmup)]}}
for name, batch, prec, status, rel, rtol, secs, note in diff:
    results["differential"].append({"model": name, "batch": batch, "precision": prec,
                                    "mode": "train" if name.endswith("-train") else "forward",
                                    "status": status, "max_rel_err": num(rel),
                                    "rtol": num(rtol), "seconds": num(secs), "note": note})

def ms(x):
    return "%.2f" % x if x else "-"

def torch_cell(r):
    if r.get("median_ms"):
        return "%.2f" % r["median_ms"]
    return r.get("error", "-")[:40] if r else "-"

def peak_of(r):
    peak = r[8] if r else ""
    for word in ("soaprt:", "peak device memory after the first iteration:",
                 "peak device memory:", "peak memory:"):
        peak = peak.replace(word, "").strip() if peak.lower().startswith(word) else peak
    peak = peak.replace("library workspaces: ", "workspaces ")
    return peak.replace("|", "/")[:40]

def simulated(model, batch, prec):
    """The simulator's predicted training step (gpu-bundle: soapc --report)."""
    path = os.path.join(bundle, "time", "%s-b%s-%s-train.report.json" % (model, batch, prec))
    try:
        report = json.load(open(path))
        return report["predicted_iteration_ms"], report.get("machine", "?")
    except (OSError, ValueError, KeyError):
        return None, None

def status_of(r):
    return (r[4] + (": " + r[9] if r[9] else "")) if r else "not built"

sim_rows, sim_machine = [], None
for key in keys:
    model, batch, prec = key
    predicted, machine = simulated(model, batch, prec)
    s = soap.get(key + ("forward",))
    st = soap.get(key + ("train",))
    fwd = torch.get((model, batch, prec, "forward"), {})
    train = torch.get((model, batch, prec, "train"), {})
    soap_ms = num(s[5]) if s else None
    soap_train_ms = num(st[5]) if st else None
    torch_ms = fwd.get("median_ms")
    torch_train_ms = train.get("median_ms")
    ratio = soap_ms / torch_ms if soap_ms and torch_ms else None
    train_ratio = soap_train_ms / torch_train_ms if soap_train_ms and torch_train_ms else None
    status = status_of(s)
    if st:
        status += "; train " + status_of(st)
    peaks = "%s / %s" % (peak_of(s) or "-", peak_of(st) or "-") if st else (peak_of(s) or "-")
    torch_peaks = "%s / %s" % (fwd.get("peak_mem_mib") or "-", train.get("peak_mem_mib") or "-") \
        if train else "%s" % (fwd.get("peak_mem_mib") or "-")
    md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        model, batch, prec, ms(soap_ms), torch_cell(fwd),
        "%.2fx" % ratio if ratio else "-",
        ms(soap_train_ms), torch_cell(train),
        "%.2fx" % train_ratio if train_ratio else "-",
        peaks, torch_peaks, status.replace("|", "/")[:120]))
    results["timing"].append({"model": model, "batch": int(batch) if batch.isdigit() else batch, "precision": prec,
                              "soap_ms": soap_ms, "soap_min_ms": num(s[6]) if s else None,
                              "soap_iterations": int(s[7]) if s and s[7] else 0,
                              "soap_status": s[4] if s else "not built",
                              "soap_peak": s[8] if s else "",
                              "soap_train_ms": soap_train_ms,
                              "soap_train_min_ms": num(st[6]) if st else None,
                              "soap_train_iterations": int(st[7]) if st and st[7] else 0,
                              "soap_train_status": st[4] if st else "not built",
                              "soap_train_peak": st[8] if st else "",
                              "torch_forward": fwd or None, "torch_train": train or None,
                              "ratio": ratio, "train_ratio": train_ratio,
                              "soap_train_simulated_ms": predicted})
    if predicted is not None:
        sim_machine = sim_machine or machine
        sim_rows.append("| %s | %s | %s | %s | %.3f | %s |" % (
            model, batch, prec, ms(soap_train_ms), predicted,
            "%.2fx" % (soap_train_ms / predicted) if soap_train_ms and predicted else "-"))
if not keys:
    md.append("| (nothing timed) | | | | | | | | | | | |")
md.append("\nSOAP ms: the per-iteration wall time the executable prints (host clock around "
          "one run of the model, device synchronized); PyTorch ms: the same, around one "
          "forward call followed by torch.cuda.synchronize(). SOAP train ms: the same for "
          "the training step (soapc --train: forward, backward of L = sum <cotangent, "
          "result>, SGD update of the parameters in place on the GPU: --train-returns=outputs); PyTorch train ms: forward, "
          "cross-entropy loss, backward, optimizer.step() and zero_grad(), synchronized.")
sim_md = []
if sim_rows:
    sim_md.append("\n### The simulator's prediction of the training step\n")
    sim_md.append("SOAP train ms (measured, above) against the iteration time soapc's "
                  "simulator predicted for it on the machine file it compiled for (%s; "
                  "--report predicted_iteration_ms; its cost model does not model TF32, "
                  "so both precisions share one prediction).\n" % sim_machine)
    sim_md.append("| model | batch | precision | measured ms | simulated ms | measured/simulated |")
    sim_md.append("|---|---:|---|---:|---:|---:|")
    sim_md.extend(sim_rows)
md.extend(sim_md)
text = "\n".join(md) + "\n"
open(table, "w").write(text)
print(text)
if out:
    open(os.path.join(out, "gpu-table.md"), "w").write(text)
    json.dump(results, open(os.path.join(out, "gpu-results.json"), "w"), indent=1)
PY

# ---------------------------------------------------------------- exit status
failed=$(awk -F'\t' '$4 == "FAIL" || $4 == "ERROR" || $4 == "TIMEOUT"' "$DIFF_TSV" | wc -l)
passed=$(awk -F'\t' '$4 == "PASS"' "$DIFF_TSV" | wc -l)
missing=$(awk -F'\t' '$4 == "MISSING" || $4 == "SKIPPED"' "$DIFF_TSV" | wc -l)
if [ "$failed" -gt 0 ] || [ "$smoke_failed" = 1 ]; then
  status=1 verdict="FAIL: $failed differential check(s) failed, $passed passed, $missing missing or skipped; smoke model $([ "$smoke_failed" = 1 ] && echo failed || echo ok)"
elif [ "$passed" = 0 ]; then
  status=2 verdict="NOTHING CHECKED: no differential check could run ($missing missing or skipped)"
else
  status=0 verdict="PASS: $passed differential check(s) passed, $missing missing or skipped"
fi
[ -n "${OUT:-}" ] && echo "gpu-check: wrote $OUT/gpu-table.md, $OUT/gpu-results.json, $OUT/gpu-check.log"
echo "gpu-check: $verdict ($SECONDS s)"
# Let tee write the last lines to the log before the script ends.
exec > /dev/null 2>&1
wait "$TEE_PID" 2>/dev/null
exit "$status"
