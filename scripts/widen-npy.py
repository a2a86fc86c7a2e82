#!/usr/bin/env python3
"""Writes .npy files with 16-bit floats widened to float32.

    scripts/widen-npy.py OUTDIR FILE.npy...

Each FILE is written to OUTDIR under its own name: '<u2' (bfloat16, as
libsoaprt and make-inputs write it: numpy has no bfloat16) and '<f2'
(float16) become '<f4' with the same values, exactly; anything else is
copied. For scripts/diff-test.sh REFERENCE=f32: a 16-bit model's f32
reference reads the 16-bit inputs' values. Plain Python, no numpy.
"""
import ast
import os
import struct
import sys


def read_npy(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    return header, data[start + length:]


def write_npy(path, descr, shape, payload):
    header = repr({"descr": descr, "fortran_order": False,
                   "shape": tuple(shape)}).encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header)
        f.write(payload)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    for path in argv[2:]:
        header, payload = read_npy(path)
        descr, shape = header["descr"], header["shape"]
        target = os.path.join(out, os.path.basename(path))
        if header.get("fortran_order"):
            raise ValueError("%s: Fortran order is not supported" % path)
        n = 1
        for d in shape:
            n *= d
        if descr == "<u2":  # bfloat16: the top half of a float32
            bits = struct.unpack("<%dH" % n, payload[:2 * n])
            widened = struct.pack("<%dI" % n, *[b << 16 for b in bits])
            write_npy(target, "<f4", shape, widened)
        elif descr == "<f2":
            values = struct.unpack("<%de" % n, payload[:2 * n])
            write_npy(target, "<f4", shape, struct.pack("<%df" % n, *values))
        else:
            with open(target, "wb") as f:
                f.write(open(path, "rb").read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
