# What the CPU benchmarks (cpu-blas.sh, cpu-freed-memory.sh) share; sourced
# with ROOT (the checkout) set. Sets BIN (SOAP_BIN, default build/bin:
# soapc, soap-models, soap-npy-compare) and ITERATIONS (default 3, at least
# 2: a run of one iteration prints no time per iteration); makes WORK
# (removed at exit) with the input maker in it, MPIRUN, and the helpers
# below.
BIN=${SOAP_BIN:-$ROOT/build/bin}
ITERATIONS=${ITERATIONS:-3}
if [ "$ITERATIONS" -lt 2 ]; then
  echo "$(basename "$0"): ITERATIONS must be 2 or more" >&2
  exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-cpu-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"${CC:-cc}" -O2 -o "$WORK/make-inputs" "$ROOT/benchmarks/gpu/make-inputs.c" -lm
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

# soapc_quiet ARGS...: soapc, its log shown only if it fails.
soapc_quiet() {
  "$BIN/soapc" "$@" > "$WORK/soapc.log" 2>&1 || { cat "$WORK/soapc.log" >&2; exit 1; }
}

# inputs SRC DIR: He-scaled inputs for SRC's training step (the same for
# every strategy) in DIR; their paths in INPUTS.
inputs() {
  soapc_quiet "$1" --quiet --machine=p100-4x4 --train --train-returns=outputs \
    --devices=1 --strategy=single --emit=mlir -o "$WORK/signature.mlir"
  python3 "$ROOT/benchmarks/gpu/input-spec.py" "$WORK/signature.mlir" > "$WORK/spec"
  rm -rf "$2"
  "$WORK/make-inputs" "$WORK/spec" "$2" 1 > /dev/null
  INPUTS=()
  local i n
  n=$(grep -c . "$WORK/spec")
  for ((i = 0; i < n; i++)); do INPUTS+=("$2/in$i.npy"); done
}

# run EXE ITERATIONS OUTDIR [VAR=VALUE ...]: runs EXE on INPUTS with
# `mpirun -np $ranks` (the variables set on every rank) and prints the
# fastest iteration's ms (nothing for one iteration: one step, whose
# results OUTDIR then holds; later steps start from parameters the earlier
# ones updated, which an f32 rounding difference can have moved far).
run() {
  local exe=$1 iterations=$2 out=$3 env=() var
  shift 3
  for var in "$@"; do env+=(-x "$var"); done
  rm -rf "$out"
  "${MPIRUN[@]}" "${env[@]}" -np "$ranks" "$exe" --inputs "${INPUTS[@]}" \
    --iterations="$iterations" --output-dir="$out" > "$WORK/run.log" 2>&1 ||
    { cat "$WORK/run.log" >&2; exit 1; }
  { grep -o 'iteration [0-9]*: [0-9.]* ms' "$WORK/run.log" || true; } |
    awk '{ ms = $3 + 0; if (best == "" || ms < best) best = ms } END { printf "%.0f", best }'
}
