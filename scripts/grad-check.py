#!/usr/bin/env python3
"""Finite-difference check of the gradients of soapc's training step.

    scripts/grad-check.py MODEL.mlir [--strategy=S] [--ranks=N] [--seed=K]
                          [--eps=E] [--rtol=R] [--soap-bin=DIR] [--keep]

Compiles MODEL with soapc --target=cpu --emit=exe on machine p100-4x4 twice:
the forward program (--strategy=single, one device; FWD) and the training
step (--train --train-returns=gradients --strategy=S --devices=N; TRAIN,
run under mpirun -np N when N > 1). TRAIN takes the model's arguments and
one cotangent c_i per model result f_i, and returns the f_i followed by the
gradient g_k of L = sum_i <c_i, f_i> for each floating-point argument x_k.

On deterministic random inputs (uniform in [-1, 1), rank >= 2 parameters
scaled by 1/sqrt(fan-in); integer arguments, e.g. token ids, in [0, 1000))
and cotangents, it checks that TRAIN's f_i equal FWD's (max|a-b|/max|a| <=
1e-4), and for each float argument k, along a random direction v_k (scaled
like x_k), that the analytic a = <g_k, v_k> matches the central difference
fd = (L(x_k + E v_k) - L(x_k - E v_k)) / 2E of FWD runs:
rel-err = |a - fd| / max(|a|, |fd|, 3e-6 M / E) <= R, M = sum_i sum|c_i f_i|.
The last term is a floor for the f32 rounding noise of the difference
(observed: |a - fd| ~ 1e-8 M / E, at most 3e-8 M / E). E trades that noise
for the error of steps across ReLU and max-pool kinks, which grows with E:
on small_mlp, E = 1e-2 or 1e-3 is off by up to 10-60%, 1e-4..3e-4 by ~1%.
Defaults: S single, N 1, K 1, E 2e-4, R 2e-2; DIR $SOAP_BIN, else build/bin
beside this script. Exits 0 on PASS, 1 on FAIL, 2 on a usage or tool error.
--keep keeps (and prints) the work folder. Plain Python, no numpy.
"""
import argparse
import array
import math
import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

# MLIR element type -> (.npy descr, array typecode)
DTYPES = {"f32": ("<f4", "f"), "f64": ("<f8", "d"),
          "i32": ("<i4", "i"), "i64": ("<i8", "q")}
FLOATS = ("f32", "f64")
MACHINE = "--machine=p100-4x4"


class ToolError(Exception):
    pass


# ------------------------------------------------------------------ .npy

def write_npy(path, dtype, shape, values):
    descr, code = DTYPES[dtype]
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    data = array.array(code, values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
        f.write(header.encode("latin1"))
        f.write(data.tobytes())


def read_npy(path):
    """Returns (dtype, shape, array) of a C-order .npy file of a DTYPES type."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        raise ToolError("%s is not a .npy file" % path)
    size, start = ((int.from_bytes(raw[8:10], "little"), 10) if raw[6] == 1 else
                   (int.from_bytes(raw[8:12], "little"), 12))
    header = raw[start:start + size].decode("latin1")
    descr = re.search(r"'descr':\s*'([^']*)'", header).group(1).replace("=", "<")
    shape = [int(d) for d in re.findall(r"\d+", re.search(
        r"'shape':\s*\(([^)]*)\)", header).group(1))]
    dtype = [t for t, (d, _) in DTYPES.items() if d == descr]
    if not dtype or "True" in re.search(r"'fortran_order':\s*(\w+)", header).group(1):
        raise ToolError("%s: unsupported layout %s" % (path, header.strip()))
    data = array.array(DTYPES[dtype[0]][1])
    data.frombytes(raw[start + size:])
    if sys.byteorder != "little":
        data.byteswap()
    if len(data) != math.prod(shape):
        raise ToolError("%s: %d elements for shape %s" % (path, len(data), shape))
    return dtype[0], shape, data


# ------------------------------------------------------------ signature

def split_top(text):
    """Splits at commas outside (), <>, {}, [] and strings."""
    parts, depth, cur, in_str = [], 0, "", False
    for i, c in enumerate(text):
        if in_str:
            in_str = not (c == '"' and text[i - 1] != "\\")
        elif c == '"':
            in_str = True
        elif c in "(<{[":
            depth += 1
        elif c in ")>}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += c
    return parts + [cur] if cur.strip() else parts


def tensor_type(text, what):
    t = re.match(r"\s*tensor<([0-9x]*)([a-z]\w*)>", text)
    if not t or t.group(2) not in DTYPES:
        raise ToolError("%s is not a static tensor of %s: %s"
                        % (what, "/".join(DTYPES), text.strip()[:80]))
    return t.group(2), [int(d) for d in t.group(1).split("x") if d]


def signature(mlir_text):
    """(argument types, result types, which arguments are {soap.parameter})
    of the one public func.func; a type is (dtype, shape)."""
    for m in re.finditer(r"func\.func\s+(private\s+)?@[\w.$-]+\s*\(", mlir_text):
        if not m.group(1):
            break
    else:
        raise ToolError("no public func.func")
    i, depth, in_str = m.end(), 1, False
    while depth:  # to the parenthesis that closes the argument list
        c = mlir_text[i]
        if in_str:
            in_str = not (c == '"' and mlir_text[i - 1] != "\\")
        elif c == '"':
            in_str = True
        elif c in "()":
            depth += 1 if c == "(" else -1
        i += 1
    args = split_top(mlir_text[m.end():i - 1])
    params = ["soap.parameter" in a for a in args]
    args = [tensor_type(re.sub(r"^\s*%[\w$.-]+\s*:", "", a), "argument %d" % n)
            for n, a in enumerate(args)]
    rest = mlir_text[i:].lstrip()
    if not rest.startswith("->"):
        return args, [], params
    rest = rest[2:].lstrip()
    if rest.startswith("("):  # (T {attrs}, T ...)
        depth, j = 0, 0
        for j, c in enumerate(rest):
            depth += (c in "(<{[") - (c in ")>}]")
            if depth == 0:
                break
        results = split_top(rest[1:j])
    else:
        results = [rest]
    return args, [tensor_type(r, "result %d" % n) for n, r in enumerate(results)], params


def shape_text(t):
    return "x".join(map(str, t[1] + [t[0]]))


# ---------------------------------------------------------------- tools

def run(cmd, log, timeout=600):
    with open(log, "w") as out:
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except (OSError, subprocess.TimeoutExpired) as e:
            rc = str(e)
    if rc != 0:
        with open(log) as f:
            tail = f.read()[-3000:].rstrip()
        raise ToolError("%s failed (%s)%s" % (" ".join(cmd), rc, tail and ":\n" + tail))


def execute(exe, inputs, work, name, mpirun=()):
    """Runs exe on the lists of values `inputs` (list of (type, values));
    returns its results as a list of (dtype, shape, array)."""
    paths = []
    for n, (t, values) in enumerate(inputs):
        paths.append(os.path.join(work, "%s.in%d.npy" % (name, n)))
        write_npy(paths[-1], t[0], t[1], values)
    out = os.path.join(work, name + ".out")
    shutil.rmtree(out, ignore_errors=True)
    run(list(mpirun) + [exe, "--inputs"] + paths + ["--output-dir=" + out, "--quiet"],
        os.path.join(work, name + ".log"))
    results = []
    while os.path.exists(os.path.join(out, "result%d.npy" % len(results))):
        results.append(read_npy(os.path.join(out, "result%d.npy" % len(results))))
    return results


def check_results(results, types, what):
    if len(results) != len(types):
        raise ToolError("%s wrote %d results, expected %d"
                        % (what, len(results), len(types)))
    for n, (t, r) in enumerate(zip(types, results)):
        if (r[0], r[1]) != t:
            raise ToolError("%s result %d is %s, expected %s"
                            % (what, n, shape_text((r[0], r[1])), shape_text(t)))


def dot(a, b):
    return math.fsum(map(operator.mul, a, b))


def rel_diff(a, b):
    top = max(map(abs, a), default=0.0)
    diff = max(map(abs, map(operator.sub, a, b)), default=0.0)
    return diff / top if top else diff


# ----------------------------------------------------------------- main

def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__.lstrip())
        return 2
    p = argparse.ArgumentParser(usage="\n".join(__doc__.splitlines()[2:4]).strip())
    p.add_argument("model")
    p.add_argument("--strategy", default="single")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eps", type=float, default=2e-4)
    p.add_argument("--rtol", type=float, default=2e-2)
    p.add_argument("--soap-bin", default=os.environ.get("SOAP_BIN") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "bin"))
    p.add_argument("--keep", action="store_true")
    o = p.parse_args()
    name = os.path.basename(o.model)
    work = tempfile.mkdtemp(prefix="soap-grad-check.")
    if o.keep:
        print("grad-check: work folder", work)
    try:
        return check(o, name, work)
    except ToolError as e:
        print("grad-check: error: %s: %s" % (name, e))
        return 2
    finally:
        if not o.keep:
            shutil.rmtree(work, ignore_errors=True)


def check(o, name, work):
    soapc = os.path.join(o.soap_bin, "soapc")
    model = os.path.abspath(o.model)
    single = [MACHINE, "--devices=1", "--strategy=single", "--quiet"]
    run([soapc, model, "--emit=mlir", "-o", os.path.join(work, "model.mlir")] + single,
        os.path.join(work, "mlir.log"))
    with open(os.path.join(work, "model.mlir")) as f:
        arg_types, res_types, params = signature(f.read())
    fwd, train = os.path.join(work, "fwd"), os.path.join(work, "train")
    common = ["--target=cpu", "--emit=exe", "--seed=%d" % o.seed]
    run([soapc, model, "-o", fwd] + common + single, os.path.join(work, "fwd-build.log"))
    run([soapc, model, "-o", train, "--train", "--train-returns=gradients", MACHINE,
         "--devices=%d" % o.ranks, "--strategy=" + o.strategy, "--quiet"] + common,
        os.path.join(work, "train-build.log"))
    mpirun = []
    if o.ranks > 1:
        mpirun = ["mpirun", "-np", str(o.ranks), "--oversubscribe"]
        mpirun += ["--allow-run-as-root"] if os.getuid() == 0 else []

    rng = random.Random(o.seed)

    def uniform(t, scale=1.0):
        n, code = math.prod(t[1]), DTYPES[t[0]][1]
        if t[0] not in FLOATS:  # e.g. token ids: in [0, 1000) like --random-inputs
            return array.array(code, [rng.randrange(1000) for _ in range(n)])
        return array.array(code, [scale * rng.uniform(-1, 1) for _ in range(n)])

    def fan_in_scale(t, param):
        shape = t[1]
        if not param or len(shape) < 2:  # data, biases, scales
            return 1.0
        # [in, out] matmul weights; [out, in, kh, kw] filters
        return 1 / math.sqrt(shape[0] if len(shape) == 2 else math.prod(shape[1:]))

    scales = [fan_in_scale(t, p) for t, p in zip(arg_types, params)]
    xs = [uniform(t, s) for t, s in zip(arg_types, scales)]
    cs = [uniform(t) if t[0] in FLOATS else array.array(DTYPES[t[0]][1], [0]) * math.prod(t[1])
          for t in res_types]
    floats = [k for k, t in enumerate(arg_types) if t[0] in FLOATS]

    def forward(values, tag):
        results = execute(fwd, list(zip(arg_types, values)), work, tag)
        check_results(results, res_types, "FWD")
        return results

    def loss(results):
        return math.fsum(dot(c, r[2]) for c, t, r in zip(cs, res_types, results)
                         if t[0] in FLOATS)

    # The training step, and its model results against the forward program's.
    got = execute(train, list(zip(arg_types + res_types, xs + cs)), work, "train", mpirun)
    check_results(got, res_types + [arg_types[k] for k in floats], "TRAIN")
    base = forward(xs, "fwd")
    magnitude = math.fsum(math.fsum(map(abs, map(operator.mul, c, r[2])))
                          for c, r in zip(cs, base))
    failures = []
    worst = max((rel_diff(b[2], g[2]) for b, g in zip(base, got)), default=0.0)
    print("results: TRAIN vs FWD max relative error %.2e" % worst)
    if not worst <= 1e-4:
        failures.append("results")

    # One directional derivative per float argument.
    floor = 3e-6 * magnitude / o.eps
    print("finite-difference noise floor: %.2e" % floor)
    for n, k in enumerate(floats):
        v = uniform(arg_types[k], scales[k])
        plus, minus = list(xs), list(xs)
        code = DTYPES[arg_types[k][0]][1]
        plus[k] = array.array(code, [x + o.eps * d for x, d in zip(xs[k], v)])
        minus[k] = array.array(code, [x - o.eps * d for x, d in zip(xs[k], v)])
        # The direction the rounded arguments actually differ in.
        v = [(a - b) / (2 * o.eps) for a, b in zip(plus[k], minus[k])]
        fd = (loss(forward(plus, "plus")) - loss(forward(minus, "minus"))) / (2 * o.eps)
        analytic = dot(got[len(res_types) + n][2], v)
        err = abs(analytic - fd) / max(abs(analytic), abs(fd), floor)
        print("arg %d %s: analytic=%.6e finite-difference=%.6e rel-err=%.2e%s"
              % (k, shape_text(arg_types[k]), analytic, fd, err,
                 "" if err <= o.rtol else "  FAIL"))
        if not err <= o.rtol:
            failures.append("arg %d" % k)

    what = "%s (%d arguments), strategy %s on %d rank(s)" % (
        name, len(floats), o.strategy, o.ranks)
    if failures:
        print("grad-check: FAIL: %s: %s" % (what, ", ".join(failures)))
        return 1
    print("grad-check: PASS: %s" % what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
