#!/usr/bin/env python3
"""How far the simulator's communication count is from the program's.

    scripts/comm-check.py MODEL.mlir [--strategy=S] [--devices=N]
                          [--soap-bin=DIR] [--by-layer] [-- SOAPC-ARGS...]

Runs soapc MODEL --strategy=S --devices=N --emit=partitioned --report (and
any SOAPC-ARGS, e.g. --train --train-returns=outputs), then counts the bytes
the partitioned program's communication ops move, by the simulator's rule
(SimulationReport::communicationBytes): a transfer its region, an all-gather
or a reduce-scatter of a region over k devices (k - 1) x the region, an
all-reduce 2 (k - 1) x the region. It prints both counts, the program's by
op, the bytes of the transfers that gather the program's results to rank 0
(after its last computation; the simulator leaves them out), and the
difference without those. The simulator models one training iteration:
pass --train to compare it with the training step.

--by-layer also prints both counts per layer, largest difference first:
the simulator's from its trace (each task is named by the layer whose
input it moves, whose partial sums it combines or whose gradients it
sends back or synchronizes), the program's by the same rule read off the
op names (a layer's gradient ops are named "<layer>.grad..."): a transfer
or all-gather of the forward pass belongs to the next named op, one of
the backward pass and every reduction to the previous one.

Defaults: S random, N 4; DIR $SOAP_BIN, else build/bin beside this script.
Exits 0 when both counts were made (whatever they are), 2 on a usage or tool
error. Plain Python.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

COMM_OP = re.compile(
    r"(?:(%[\w.]+) = )?"
    r"soap\.(transfer|all_gather|reduce_scatter|all_reduce) (%[\w.]+(?:#\d+)?) "
    r"\[([\d, ]*)\] \[([\d, ]*)\](.*) : tensor<(?:\d+x)*(\w+)>")
RETURN = re.compile(r"^\s*(?:func\.)?return (%[^:]*):")
FUNC_RESULTS = re.compile(r"func\.func .*\) -> \((.*)\)\s*\{?\s*$")
ANY_COMM_OP = re.compile(r"soap\.(transfer|all_gather|reduce_scatter|all_reduce) ")


def element_bytes(element):
    """Bytes of one element of a builtin type: f32 4, bf16 2, i1 1, index 8."""
    if element == "index":
        return 8
    bits = re.search(r"(\d+)", element)
    if not bits:
        raise ValueError("unknown element type '%s'" % element)
    return (int(bits.group(1)) + 7) // 8


def updated_results(signature):
    """Which results of `signature` (a func.func line) update an argument in
    place (soap.updates_input): their transfers make parameters valid where
    they are read, they gather nothing."""
    m = FUNC_RESULTS.search(signature)
    if not m:
        return set()
    results, depth, part = [], 0, ""
    for ch in m.group(1):
        depth += ch in "<({["
        depth -= ch in ">)}]"
        if ch == "," and depth == 0:
            results.append(part)
            part = ""
        else:
            part += ch
    results.append(part)
    return {i for i, r in enumerate(results) if "soap.updates_input" in r}


def moved_bytes(match):
    """Of a COMM_OP match: its kind, the bytes it moves by the simulator's
    rule, and its region's bytes."""
    _, kind, _, _, sizes, rest, element = match.groups()
    region = element_bytes(element)
    for size in sizes.split(","):
        if size.strip():
            region *= int(size)
    devices = re.search(r"devices \[([\d, ]*)\]", rest)
    k = len(devices.group(1).split(",")) if devices else 2
    factor = {"transfer": 1, "all_gather": k - 1, "reduce_scatter": k - 1,
              "all_reduce": 2 * (k - 1)}
    return kind, factor[kind] * region, region


NAME = re.compile(r'soap\.name = "([^"]+)"')
GRAD_SUFFIX = re.compile(r"\.grad(\.\d+)?$")


def layer_of(name):
    """The layer an op named `name` belongs to, and whether it is a
    gradient op ("<layer>.grad", "<layer>.grad.N")."""
    if name is None:
        return None, False
    layer = GRAD_SUFFIX.sub("", name)
    return layer, layer != name


def program_bytes_by_layer(path, gather_lines):
    """The partitioned program's communication bytes per layer (see
    --by-layer), with the gather of results (the transfers on
    `gather_lines`, program_bytes) under "(results to rank 0)"."""
    with open(path) as f:
        lines = f.read().split("\n")
    previous = [None] * len(lines)
    following = [None] * len(lines)
    name = None
    for i, line in enumerate(lines):
        m = NAME.search(line)
        if m:
            name = m.group(1)
        previous[i] = name
    name = None
    for i in range(len(lines) - 1, -1, -1):
        m = NAME.search(lines[i])
        if m:
            name = m.group(1)
        following[i] = name
    backward = False
    per_layer = {}
    for i, line in enumerate(lines):
        m = NAME.search(line)
        if m and layer_of(m.group(1))[1]:
            backward = True
        m = COMM_OP.search(line)
        if not m:
            continue
        kind, moved, _ = moved_bytes(m)
        if i in gather_lines:
            layer = "(results to rank 0)"
        elif backward or kind in ("all_reduce", "reduce_scatter"):
            layer = layer_of(previous[i])[0]
        else:
            layer = layer_of(following[i])[0]
        layer = layer or "(unnamed)"
        per_layer[layer] = per_layer.get(layer, 0) + moved
    return per_layer


def simulator_bytes_by_layer(trace_path):
    """The simulator's communication bytes per layer, from its trace (task
    names "<layer> <kind>")."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    per_layer = {}
    for event in events:
        moved = event.get("args", {}).get("bytes", 0)
        if event.get("ph") != "X" or not moved:
            continue
        layer = event["name"].split(" ")[0]
        per_layer[layer] = per_layer.get(layer, 0) + moved
    return per_layer


def program_bytes(path):
    """Bytes per communication op kind of the partitioned program, and the
    bytes of the transfers that gather its results to rank 0 (after its last
    computation, to device 0, on the way to a result that is not an updated
    parameter), which the simulator leaves out, and their line numbers."""
    counts = {"transfer": 0, "all_gather": 0, "reduce_scatter": 0,
              "all_reduce": 0}
    ops = {kind: 0 for kind in counts}
    transfers = {}  # result -> (source, to device, bytes, line)
    last_computation = 0  # the line of the last scf.if or linalg op
    updated, returned = set(), []
    with open(path) as f:
        for number, line in enumerate(f):
            if "func.func" in line:
                updated = updated_results(line)
            ret = RETURN.search(line)
            if ret:
                returned = [v.strip() for v in ret.group(1).split(",")]
                continue
            m = COMM_OP.search(line)
            if not m:
                if ANY_COMM_OP.search(line):
                    raise ValueError("cannot read: " + line.strip())
                if re.search(r"\b(scf\.if|linalg\.)", line):
                    last_computation = number
                continue
            result, kind, source, _, _, rest, _ = m.groups()
            kind, moved, region = moved_bytes(m)
            counts[kind] += moved
            ops[kind] += 1
            to = re.search(r"\bto (\d+)", rest)
            if kind == "transfer" and result and to:
                transfers[result] = (source, int(to.group(1)), region,
                                     number)
    gathered, gather_lines = 0, set()
    for i, value in enumerate(returned):
        if i in updated:
            continue
        while value in transfers:
            source, to, region, number = transfers.pop(value)
            if to == 0 and number > last_computation:
                gathered += region
                gather_lines.add(number)
            value = source
    return counts, ops, gathered, gather_lines


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--strategy", default="random")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--soap-bin", default=os.environ.get("SOAP_BIN"))
    parser.add_argument("--by-layer", action="store_true")
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = parser.parse_args(argv)
    args.soapc_args = extra
    soap_bin = args.soap_bin or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin")
    soapc = os.path.join(soap_bin, "soapc")
    if not os.access(soapc, os.X_OK):
        print("comm-check: no soapc at %s (set --soap-bin or SOAP_BIN)" %
              soapc, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="comm-check.") as work:
        program = os.path.join(work, "partitioned.mlir")
        report = os.path.join(work, "report.json")
        trace = os.path.join(work, "trace.json")
        command = [soapc, args.model, "--quiet",
                   "--strategy=" + args.strategy,
                   "--devices=%d" % args.devices, "--emit=partitioned",
                   "-o", program, "--report=" + report] + args.soapc_args
        if args.by_layer:
            command.append("--trace=" + trace)
        run = subprocess.run(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            print("comm-check: soapc failed:\n" + run.stderr, file=sys.stderr)
            return 2
        with open(report) as f:
            summary = json.load(f)
        simulated = summary["communication_bytes"]
        try:
            counts, ops, gathered, gather_lines = program_bytes(program)
            if args.by_layer:
                program_layers = program_bytes_by_layer(program, gather_lines)
                simulator_layers = simulator_bytes_by_layer(trace)
        except ValueError as error:
            print("comm-check: %s" % error, file=sys.stderr)
            return 2
    total = sum(counts.values())
    name = os.path.basename(args.model)
    print("comm-check: %s, strategy %s on %d devices" %
          (name, os.path.basename(args.strategy), summary["devices"]))
    print("  simulator: %d bytes" % simulated)
    print("  program: %d bytes (%s)" % (total, ", ".join(
        "%s %d in %d" % (kind, counts[kind], ops[kind])
        for kind in counts if ops[kind])))
    print("  of which gathering the results to rank 0: %d bytes "
          "(the simulator leaves that out)" % gathered)
    difference = total - gathered - simulated
    print("  difference, without it: %+d bytes (%+.1f%% of the simulator's)" %
          (difference, 100.0 * difference / simulated if simulated else 0.0))
    if args.by_layer:
        layers = set(program_layers) | set(simulator_layers)
        rows = sorted(layers, key=lambda l: (
            -abs(program_layers.get(l, 0) - simulator_layers.get(l, 0)), l))
        width = max([len("layer")] + [len(l) for l in rows])
        print("  by layer:")
        print("    %-*s %12s %12s %12s" % (width, "layer", "simulator",
                                          "program", "difference"))
        for layer in rows:
            sim, prog = simulator_layers.get(layer, 0), program_layers.get(
                layer, 0)
            print("    %-*s %12d %12d %+12d" % (width, layer, sim, prog,
                                              prog - sim))
    return 0


if __name__ == "__main__":
    sys.exit(main())
