#!/usr/bin/env python3
"""Lists the entry-function arguments of an MLIR model for make-inputs.

    python3 benchmarks/gpu/input-spec.py MODEL.mlir [ENTRY] > SPEC.txt

One line per argument, in order: "INDEX DTYPE SHAPE ROLE NAME" (DTYPE f32,
f64, i32, i64, ...; SHAPE dimensions joined by 'x' or "scalar"; ROLE "param"
for a {soap.parameter} argument, "data" otherwise; NAME its loc("...") name
or "-"), e.g.
    0 f32 2x3x224x224 data input
    1 f32 64x3x11x11 param features.0.weight
ENTRY defaults to the first public func.func. Plain Python, no numpy.
"""
import re
import sys


def split_top(text):
    """Splits at commas outside (), <>, {}, [] and strings."""
    parts, depth, cur, in_str = [], 0, [], False
    for i, c in enumerate(text):
        if in_str:
            cur.append(c)
            if c == '"' and text[i - 1] != "\\":
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "(<{[":
            depth += 1
        elif c in ")>}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    text = open(argv[1]).read()
    entry = argv[2] if len(argv) == 3 else None
    for m in re.finditer(r"func\.func\s+(private\s+)?@([\w.$-]+)\s*\(", text):
        if m.group(1) or (entry and m.group(2) != entry):
            continue
        break
    else:
        sys.stderr.write("input-spec: no public entry function in %s\n" % argv[1])
        return 1
    # The argument list: up to the matching parenthesis (strings skipped).
    i, depth, in_str = m.end(), 1, False
    while depth:
        c = text[i]
        if in_str:
            in_str = not (c == '"' and text[i - 1] != "\\")
        elif c == '"':
            in_str = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    args = split_top(text[m.end():i - 1])
    for index, arg in enumerate(args):
        t = re.search(r"tensor<([^>]*)>", arg)
        if not t:
            sys.stderr.write("input-spec: argument %d is not a tensor: %s\n"
                             % (index, arg.strip()[:80]))
            return 1
        dims = t.group(1).split("x")
        dtype, shape = dims[-1], dims[:-1]
        if any(not d.isdigit() for d in shape):
            sys.stderr.write("input-spec: argument %d has a dynamic shape\n" % index)
            return 1
        role = "param" if "soap.parameter" in arg else "data"
        name = re.search(r'loc\("([^"]*)"', arg)
        name = re.sub(r"\s", "_", name.group(1)) if name else "-"
        print(index, dtype, "x".join(shape) or "scalar", role, name or "-")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
