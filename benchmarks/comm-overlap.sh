#!/usr/bin/env bash
# How much computation each communication of a partitioned CUDA program can
# run beside (soap-cuda-async-communication):
#
#   benchmarks/comm-overlap.sh [MODEL] [STRATEGY] [RANKS]
#
# (defaults: alexnet data-parallel 4; BATCH=16; TRAIN=1 compiles the training
# step with --train-returns=outputs, TRAIN=0 the forward pass; MACHINE, a
# soapc --machine, default soapc's; SOAP_BIN=build/bin). For each rank and each kind of communication (the
# gradient all-reduces, the transfers) it prints how many start, in how
# many NCCL groups (buckets of all-reduces started together), and how
# many of the rank's compute ops (kernel launches and cuBLAS / cuDNN calls)
# are issued between a start and the wait that covers it: that work runs
# while the communication is in flight. Before the pass every one of them
# was 0 (the rank's one stream ran communication in line). A count of ops,
# not of time: the time it hides needs a GPU run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODEL=${1:-alexnet} STRATEGY=${2:-data-parallel} RANKS=${3:-4}
BATCH=${BATCH:-16} TRAIN=${TRAIN:-1} MACHINE=${MACHINE:-}
BIN=${SOAP_BIN:-$ROOT/build/bin}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-comm-overlap.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

"$BIN/soap-models" "$MODEL" --batch="$BATCH" -o "$WORK/model.mlir"
train=()
[ "$TRAIN" = 1 ] && train=(--train --train-returns=outputs)
[ -n "$MACHINE" ] && train+=(--machine="$MACHINE")
"$BIN/soapc" "$WORK/model.mlir" --quiet --devices="$RANKS" \
  --strategy="$STRATEGY" "${train[@]}" --target=cuda --cuda-host-emulation \
  --emit=obj -o "$WORK/out.o" \
  --mlir-print-ir-after=soap-cuda-async-communication \
  --mlir-disable-threading 2> "$WORK/after.mlir" > /dev/null
echo "$MODEL, batch $BATCH, $STRATEGY on $RANKS ranks$([ "$TRAIN" = 1 ] && echo ", training step")${MACHINE:+, $MACHINE}"
python3 - "$WORK/after.mlir" <<'PY'
import re, sys
func, rows, pending, ops = None, [], [], 0
groups, group = {}, None  # NCCL groups (buckets) per kind; the open one
def flush():
    if func is None:
        return
    for kind in ("all_reduce", "transfer"):
        spans = sorted(s for k, s in done if k == kind)
        if spans:
            rows.append((func, kind, len(spans), groups.get(kind, 0),
                         spans[0], spans[len(spans) // 2], spans[-1], ops))
for line in open(sys.argv[1]):
    m = re.match(r"\s*func\.func (?:private )?@(\S+)\(", line)
    if m:
        flush()
        func, pending, done, ops = m.group(1), [], [], 0
        groups, group = {}, None
        continue
    if func is None:
        continue
    if "call @soaprt_comm_group_begin" in line:
        group = set()
        continue
    if "call @soaprt_comm_group_end" in line:
        for kind in group or ():
            groups[kind] = groups.get(kind, 0) + 1
        group = None
        continue
    m = re.search(r"(%\d+) = call @soaprt_(transfer|all_reduce)_start", line)
    if m:
        pending.append((m.group(1), m.group(2), ops))
        if group is not None:
            group.add(m.group(2))
        continue
    m = re.search(r"call @soaprt_comm_wait\((%\d+)\)", line)
    if m:
        i = [p[0] for p in pending].index(m.group(1))
        done += [(k, ops - at) for _, k, at in pending[: i + 1]]
        pending = pending[i + 1 :]
        continue
    if "gpu.launch_func" in line or re.search(r"call @soaprt_cuda_(matmul|conv)", line):
        ops += 1
flush()
print(f"{'function':28} {'kind':10} {'starts':>6} {'groups':>6} {'beside: min':>11} {'median':>6} {'max':>5} {'of ops':>6}")
for r in rows:
    print(f"{r[0]:28} {r[1]:10} {r[2]:6} {r[3]:6} {r[4]:11} {r[5]:6} {r[6]:5} {r[7]:6}")
PY
