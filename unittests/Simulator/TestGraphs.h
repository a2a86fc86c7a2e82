//===- TestGraphs.h - Small op graphs the simulator tests share -----------===//
//
// Graphs that both the simulator's exact tests (SimulatorTest.cpp, at sizes
// whose bytes are easy to count) and the delta-simulation walks
// (DeltaSimulationTest.cpp, small) use.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_UNITTESTS_SIMULATOR_TESTGRAPHS_H
#define SOAP_UNITTESTS_SIMULATOR_TESTGRAPHS_H

#include "soap/Simulator/GraphBuilder.h"

#include <string>
#include <vector>

namespace soap {

/// fc0: x[rows, in] w0[in, hidden] -> y, read by three projections q, k, v
/// (y wi, wi[hidden, out]) summed into the output: attention's inputs.
inline OpGraph sharedProjectionsGraph(int64_t rows, int64_t in, int64_t hidden,
                                      int64_t out) {
  GraphBuilder b("qkv");
  int32_t x = b.input("x", {rows, in});
  int32_t y = b.matmul("fc0", x, b.parameter("w0", {in, hidden}));
  std::vector<int32_t> outs;
  for (const char *name : {"q", "k", "v"})
    outs.push_back(
        b.matmul(name, y, b.parameter(std::string("w") + name, {hidden, out})));
  b.markOutput(b.elementwise("sum", "linalg.generic.add", outs));
  return b.take();
}

/// fc0: x[rows, in] w0[in, hidden] -> y, read by three elementwise ops (a
/// layer norm's sum, variance and normalization) added into the output.
inline OpGraph normReadersGraph(int64_t rows, int64_t in, int64_t hidden) {
  GraphBuilder b("norm");
  int32_t x = b.input("x", {rows, in});
  int32_t y = b.matmul("fc0", x, b.parameter("w0", {in, hidden}));
  std::vector<int32_t> outs;
  for (const char *name : {"sum", "var", "norm"})
    outs.push_back(b.elementwise(name, "linalg.generic.relu", {y}));
  b.markOutput(b.elementwise("out", "linalg.generic.add", outs));
  return b.take();
}

} // namespace soap

#endif // SOAP_UNITTESTS_SIMULATOR_TESTGRAPHS_H
