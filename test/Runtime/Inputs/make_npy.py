"""make_npy.py OUT.npy DESCR D0xD1x... [fortran|nan]: a .npy file whose
element i is (i % 7) - 3, or NaN everywhere (no numpy needed)."""
import struct, sys

out, descr, shape = sys.argv[1], sys.argv[2], [int(d) for d in sys.argv[3].split("x")]
fortran = len(sys.argv) > 4 and sys.argv[4] == "fortran"
nan = len(sys.argv) > 4 and sys.argv[4] == "nan"
n = 1
for d in shape:
    n *= d
fmt = {"<f2": "e", "<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q"}[descr]
shape_text = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
    descr, "True" if fortran else "False", shape_text)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (n, fmt), *[float("nan") if nan else (i % 7) - 3 for i in range(n)]))
