#!/usr/bin/env python3
"""write_npy.py OUT.npy D0xD1x... SEED: a float32 .npy of that shape with
values uniform in [-1, 1) from SEED (plain Python, no numpy)."""
import random
import struct
import sys

out, shape, seed = sys.argv[1], [int(d) for d in sys.argv[2].split("x")], int(sys.argv[3])
count = 1
for d in shape:
    count *= d
rng = random.Random(seed)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
    ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
    f.write(header.encode())
    f.write(struct.pack("<%df" % count, *(rng.uniform(-1, 1) for _ in range(count))))
