//===- soap-npy-compare.cpp - Compare two .npy files ----------------------===//
//
// soap-npy-compare EXPECTED.npy ACTUAL.npy [--rtol=R]
// soap-npy-compare --print FILE.npy      (dtype, shape, one line per row)
// soap-npy-compare --to-f32 OUTDIR FILE.npy...
//
// --to-f32 writes each FILE to OUTDIR under its name with float16 and
// bfloat16 elements widened to float32 (exactly; other files copied): the
// inputs of a 16-bit model's f32 reference (scripts/diff-test.sh
// REFERENCE=f32, scripts/gpu-bundle.sh HALF_DIFF_MODELS). Exit 0, or 2 on
// errors.
//
// Same dtype and shape (except that float16, bfloat16, float32 and float64
// compare with each other: a float64 reference of a float32 program,
// scripts/diff-test.sh REFERENCE=f64; bfloat16 is '<u2', as libsoaprt
// writes it: numpy has none), then: integers and booleans must be
// equal; floats must satisfy max|actual - expected| <= R * max|expected| (R =
// 1e-5 by default), the error relative to the largest expected magnitude: a
// partitioned program sums split reductions in another order, which moves
// every element by a few ulps of the magnitudes summed, so elements that
// cancel to near zero must not be judged on their own scale. NaN and
// infinities must sit at the same positions in both, and some element must
// be finite (two all-NaN results agree on nothing). Prints one line; exit 0
// when they match, 1 when not, 2 on errors.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/soaprt_float16.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {
struct Npy {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

bool readNpy(const char *path, Npy &npy, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot open '") + path + "'";
    return false;
  }
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    error = std::string("'") + path + "' is not a .npy file";
    return false;
  }
  uint32_t headerLen = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char *>(len), magic[6] == 1 ? 2 : 4);
  headerLen = len[0] | (len[1] << 8) | (uint32_t(len[2]) << 16) |
              (uint32_t(len[3]) << 24);
  std::string header(headerLen, '\0');
  if (!in.read(&header[0], headerLen)) {
    error = std::string("'") + path + "': truncated header";
    return false;
  }
  size_t d = header.find("'descr'");
  if (d != std::string::npos) {
    size_t q1 = header.find('\'', d + 7), q2 = header.find('\'', q1 + 1);
    npy.descr = header.substr(q1 + 1, q2 - q1 - 1);
  }
  if (!npy.descr.empty() && npy.descr[0] == '=')
    npy.descr[0] = '<';
  size_t f = header.find("'fortran_order'");
  if (f != std::string::npos && header.compare(header.find(':', f) + 2, 4,
                                               "True") == 0) {
    error = std::string("'") + path + "' is in Fortran order";
    return false;
  }
  size_t s = header.find('(', header.find("'shape'"));
  size_t e = header.find(')', s);
  std::string dims = header.substr(s + 1, e - s - 1);
  for (const char *p = dims.c_str(); *p;) {
    if (*p == ' ' || *p == ',') {
      ++p;
      continue;
    }
    char *end;
    npy.shape.push_back(std::strtoll(p, &end, 10));
    p = end;
  }
  npy.data.assign(std::istreambuf_iterator<char>(in),
                  std::istreambuf_iterator<char>());
  return true;
}

int64_t elementSize(const std::string &descr) {
  return descr.size() >= 3 ? std::atoi(descr.c_str() + 2) : 0;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

/// Whether `descr` holds floats: numpy's '<f2', '<f4', '<f8', and '<u2',
/// which libsoaprt writes bfloat16 as (numpy has no bfloat16; soaprt writes
/// no other type as '<u2': i16 is '<i2').
bool isFloat(const std::string &descr) {
  return descr == "<f2" || descr == "<f4" || descr == "<f8" || descr == "<u2";
}

/// Float element i of `data` in `descr` (isFloat).
double loadFloat(const std::string &descr, const char *data, int64_t i) {
  int64_t width = elementSize(descr);
  const char *p = data + i * width;
  if (width == 2) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return descr == "<u2" ? soaprt_bf16_to_float(h) // bfloat16
                          : soaprt_half_to_float(h);
  }
  if (width == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

/// Writes `npy` to `path` with its 16-bit float elements as float32.
bool writeAsF32(const Npy &npy, const std::string &path, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  bool widen = npy.descr == "<u2" || npy.descr == "<f2";
  std::string dims;
  for (int64_t d : npy.shape)
    dims += std::to_string(d) + ", ";
  if (npy.shape.size() > 1)
    dims.resize(dims.size() - 2);
  else if (!npy.shape.empty())
    dims.resize(dims.size() - 1); // "(n,)"
  std::string header = "{'descr': '" + (widen ? "<f4" : npy.descr) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  uint16_t headerLen = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {char(headerLen & 0xff), char(headerLen >> 8)};
  out.write(len, 2);
  out << header;
  if (!widen) {
    out.write(npy.data.data(), std::streamsize(npy.data.size()));
  } else {
    for (size_t i = 0; i + 1 < npy.data.size(); i += 2) {
      float v = float(loadFloat(npy.descr, npy.data.data(), int64_t(i / 2)));
      out.write(reinterpret_cast<const char *>(&v), 4);
    }
  }
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

template <typename T>
double load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return double(v);
}
} // namespace

int main(int argc, char **argv) {
  double rtol = 1e-5;
  bool print = false;
  std::vector<const char *> files;
  if (argc >= 3 && !std::strcmp(argv[1], "--to-f32")) {
    std::string dir = argv[2];
    for (int i = 3; i < argc; ++i) {
      Npy npy;
      std::string error, name = argv[i];
      name = name.substr(name.find_last_of('/') + 1);
      if (!readNpy(argv[i], npy, error) ||
          !writeAsF32(npy, dir + "/" + name, error)) {
        std::fprintf(stderr, "soap-npy-compare: error: %s\n", error.c_str());
        return 2;
      }
    }
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--print"))
      print = true;
    else if (!std::strncmp(argv[i], "--rtol=", 7))
      rtol = std::atof(argv[i] + 7);
    else if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: soap-npy-compare EXPECTED.npy ACTUAL.npy "
                  "[--rtol=R]\n");
      return 0;
    } else
      files.push_back(argv[i]);
  }
  if (print && files.size() == 1) {
    Npy npy;
    std::string error;
    if (!readNpy(files[0], npy, error)) {
      std::fprintf(stderr, "soap-npy-compare: error: %s\n", error.c_str());
      return 2;
    }
    int64_t size = elementSize(npy.descr), n = 1;
    for (int64_t d : npy.shape)
      n *= d;
    if (size <= 0 || int64_t(npy.data.size()) < n * size) {
      std::fprintf(stderr, "soap-npy-compare: error: bad data\n");
      return 2;
    }
    std::printf("%s %s\n", npy.descr.c_str(), shapeString(npy.shape).c_str());
    int64_t row = npy.shape.empty() ? 1 : npy.shape.back();
    for (int64_t i = 0; i < n; ++i) {
      const char *p = &npy.data[i * size];
      double v = isFloat(npy.descr) ? loadFloat(npy.descr, npy.data.data(), i)
                 : size == 8        ? load<int64_t>(p)
                 : size == 4        ? load<int32_t>(p)
                 : size == 2        ? load<int16_t>(p)
                                    : load<int8_t>(p);
      std::printf("%s%.9g", i % row ? " " : "", v);
      if ((i + 1) % row == 0)
        std::printf("\n");
    }
    return 0;
  }
  if (files.size() != 2) {
    std::fprintf(stderr, "usage: soap-npy-compare EXPECTED.npy ACTUAL.npy "
                         "[--rtol=R]\n");
    return 2;
  }
  Npy expected, actual;
  std::string error;
  if (!readNpy(files[0], expected, error) ||
      !readNpy(files[1], actual, error)) {
    std::fprintf(stderr, "soap-npy-compare: error: %s\n", error.c_str());
    return 2;
  }
  const char *name = files[1];
  bool bothFloat = isFloat(expected.descr) && isFloat(actual.descr);
  if ((expected.descr != actual.descr && !bothFloat) ||
      expected.shape != actual.shape) {
    std::printf("%s: MISMATCH: expected %s %s, got %s %s\n", name,
                expected.descr.c_str(), shapeString(expected.shape).c_str(),
                actual.descr.c_str(), shapeString(actual.shape).c_str());
    return 1;
  }
  int64_t size = elementSize(expected.descr);
  int64_t actualSize = elementSize(actual.descr);
  int64_t n = 1;
  for (int64_t d : expected.shape)
    n *= d;
  if (size <= 0 || int64_t(expected.data.size()) < n * size ||
      int64_t(actual.data.size()) < n * actualSize) {
    std::fprintf(stderr,
                 "soap-npy-compare: error: unsupported dtype '%s' or "
                 "truncated data\n",
                 expected.descr.c_str());
    return 2;
  }
  std::string what = expected.descr +
                     (actual.descr != expected.descr ? " vs " + actual.descr
                                                      : std::string()) +
                     " " + shapeString(expected.shape);
  if (!isFloat(expected.descr)) {
    int64_t different = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(&expected.data[i * size], &actual.data[i * size],
                      size_t(size)) != 0) {
        if (first < 0)
          first = i;
        ++different;
      }
    if (different) {
      std::printf("%s: MISMATCH: %s, %lld of %lld elements differ (first at "
                  "flat index %lld)\n",
                  name, what.c_str(), (long long)different, (long long)n,
                  (long long)first);
      return 1;
    }
    std::printf("%s: OK: %s, all %lld elements equal\n", name, what.c_str(),
                (long long)n);
    return 0;
  }
  auto value = [&](const Npy &npy, int64_t i) {
    return loadFloat(npy.descr, npy.data.data(), i);
  };
  if (size != 2 && size != 4 && size != 8) {
    std::fprintf(stderr, "soap-npy-compare: error: unsupported dtype '%s'\n",
                 expected.descr.c_str());
    return 2;
  }
  double maxDiff = 0, maxRef = 0;
  int64_t worst = -1, nonFinite = 0, nonFiniteMismatch = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = value(expected, i), b = value(actual, i);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      ++nonFinite;
      bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same && nonFiniteMismatch++ == 0)
        worst = i;
      continue;
    }
    maxRef = std::fmax(maxRef, std::fabs(a));
    double diff = std::fabs(a - b);
    if (diff > maxDiff) {
      maxDiff = diff;
      if (!nonFiniteMismatch)
        worst = i;
    }
  }
  // NaN where NaN is expected everywhere (a model that overflowed on both
  // targets) is no agreement: nothing was compared.
  if (n > 0 && nonFinite == n && nonFiniteMismatch == 0) {
    std::printf("%s: MISMATCH: %s, all %lld elements NaN or infinite in "
                "both: nothing compared\n",
                name, what.c_str(), (long long)n);
    return 1;
  }
  double rel = maxDiff == 0 ? 0 : maxRef > 0 ? maxDiff / maxRef : INFINITY;
  bool ok = nonFiniteMismatch == 0 && rel <= rtol;
  std::printf("%s: %s: %s, relative error max|a-b|/max|a| = %.3g (bound "
              "%.3g), max|a-b| = %.3g, max|a| = %.3g",
              name, ok ? "OK" : "MISMATCH", what.c_str(), rel, rtol, maxDiff,
              maxRef);
  if (nonFinite)
    std::printf(", %lld non-finite (%lld at different positions)",
                (long long)nonFinite, (long long)nonFiniteMismatch);
  if (!ok && worst >= 0)
    std::printf(", worst at flat index %lld: expected %.9g, got %.9g",
                (long long)worst, value(expected, worst),
                value(actual, worst));
  std::printf("\n");
  return ok ? 0 : 1;
}
