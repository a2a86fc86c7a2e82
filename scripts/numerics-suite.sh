#!/usr/bin/env bash
# Checked numerics (issue 6): for one model, compile the unpartitioned
# program (one device) and partitioned programs under data parallelism, the
# expert strategy, a searched strategy and N random strategies on 2 and 4
# ranks; run each on the same random inputs and compare every result with
# the reference (relative error max|a-b|/max|a| <= RTOL). Then assert that the
# strategies tested split Sample, Attribute, Parameter and Reduction loops
# (each kind the model has) and placed layers on disjoint device subsets.
#
#   scripts/numerics-suite.sh MODEL.mlir [soapc options, e.g. --batch=4]
#
# Environment: SOAP_BIN (folder with soapc and soap-npy-compare; default
# build/bin), RANKS (default "2 4"), RANDOM_STRATEGIES (default 20), RTOL
# (default 1e-5), OPT (LLVM -O level of the executables, default 0: the
# numerics do not depend on it and compiling is faster), KINDS (the loop
# kinds that must be covered; default every kind the model has).
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
MODEL=$1
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SOAP_BIN:-$ROOT/build/bin}
RANKS=${RANKS:-"2 4"}
RANDOM_STRATEGIES=${RANDOM_STRATEGIES:-20}
RTOL=${RTOL:-1e-5}
OPT=${OPT:-0}
NAME=$(basename "$MODEL" .mlir)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-numerics.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Open MPI's session directory in the work folder: concurrent runs (lit's
# workers) sharing /tmp/ompi.* race on creating and removing it
# ("orte_session_dir failed").
MPIRUN=(mpirun --oversubscribe --mca orte_tmpdir_base "$WORK")
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
COMMON=(--machine=p100-4x4 --target=cpu --emit=exe -O"$OPT" --quiet "$@")

"$BIN/soapc" "$MODEL" "${COMMON[@]}" --devices=1 --strategy=single \
  -o "$WORK/reference" > /dev/null
"$WORK/reference" --random-inputs=7 --quiet --output-dir="$WORK/expected"
# The layers' names, for a strategy that places whole layers round-robin on
# the devices (operation parallelism: layers on disjoint devices).
"$BIN/soapc" "$MODEL" --machine=p100-4x4 --quiet "$@" --devices=1 \
  --strategy=single --strategy-out="$WORK/single.json" > /dev/null

failures=0 checked=0
for ranks in $RANKS; do
  python3 - "$WORK/single.json" "$ranks" > "$WORK/placed-$ranks.json" <<'PY'
import json, sys
strategy = json.load(open(sys.argv[1]))
for i, node in enumerate(strategy["nodes"]):
    node["devices"] = [i % int(sys.argv[2])]
json.dump(strategy, sys.stdout, indent=1)
PY
  strategies="data-parallel expert search $WORK/placed-$ranks.json"
  for seed in $(seq 1 "$RANDOM_STRATEGIES"); do
    strategies="$strategies random:$seed"
  done
  for spec in $strategies; do
    kind=${spec%%:*}
    seed=${spec#*:}
    [ "$seed" = "$spec" ] && seed=1
    tag="$NAME $(basename "$kind" .json) seed=$seed ranks=$ranks"
    report="$WORK/report-$ranks-$(basename "$kind" .json)-$seed.json"
    if ! "$BIN/soapc" "$MODEL" "${COMMON[@]}" --devices="$ranks" \
        --strategy="$kind" --seed="$seed" --search-proposals=300 \
        --report="$report" -o "$WORK/partitioned" > "$WORK/compile.log" 2>&1; then
      echo "FAIL (compile): $tag"
      tail -5 "$WORK/compile.log"
      failures=$((failures + 1))
      continue
    fi
    rm -rf "$WORK/actual"
    if ! "${MPIRUN[@]}" -np "$ranks" "$WORK/partitioned" --random-inputs=7 \
        --quiet --output-dir="$WORK/actual" > "$WORK/run.log" 2>&1; then
      echo "FAIL (run): $tag"
      tail -5 "$WORK/run.log"
      failures=$((failures + 1))
      continue
    fi
    for expected in "$WORK"/expected/result*.npy; do
      actual=$WORK/actual/$(basename "$expected")
      if ! "$BIN/soap-npy-compare" --rtol="$RTOL" "$expected" "$actual" \
          > "$WORK/compare.log" 2>&1; then
        echo "FAIL (numerics): $tag: $(cat "$WORK/compare.log")"
        failures=$((failures + 1))
      fi
    done
    checked=$((checked + 1))
  done
done

# Coverage: every loop kind the model splits somewhere, and subsets.
python3 - "$WORK" "${KINDS:-}" <<'PY' || failures=$((failures + 1))
import glob, json, sys
kinds_present, kinds_split = set(), set()
subsets = disjoint = False
for path in glob.glob(sys.argv[1] + "/report-*.json"):
    report = json.load(open(path))
    devices = report["devices"]
    placements = []
    for op in report["ops"]:
        for kind, degree in zip(op["loops"], op["degrees"]):
            kinds_present.add(kind)
            if degree > 1:
                kinds_split.add(kind)
        used = set(op["devices"])
        placements.append(used)
        if len(used) < devices:
            subsets = True
    for i, a in enumerate(placements):
        for b in placements[i + 1:]:
            if not a & b:
                disjoint = True
required = set(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else kinds_present
missing = sorted((kinds_present & required) - kinds_split)
print("coverage: split loop kinds %s of %s; layers on device subsets: %s; "
      "on disjoint subsets: %s" % ("".join(sorted(kinds_split)),
                                   "".join(sorted(kinds_present)),
                                   subsets, disjoint))
if missing or not subsets or not disjoint:
    print("FAIL (coverage): no tested strategy splits %s%s%s" % (
        ",".join(missing) or "-",
        "" if subsets else "; no layer on a device subset",
        "" if disjoint else "; no layers on disjoint subsets"))
    sys.exit(1)
PY

echo "$NAME: $checked partitioned programs checked against the reference, $failures failures"
[ "$failures" = 0 ]
