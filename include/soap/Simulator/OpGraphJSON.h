//===- OpGraphJSON.h - OpGraph <-> JSON ---------------------------*- C++ -*-===//
//
// The op graph's file format (`soap-opt --soap-dump-graph=json`, the simulator
// benchmark, tests). Format:
//
//   {"name": "...",
//    "tensors": [{"name", "shape": [..], "element_bytes", "producer",
//                 "is_parameter", "is_output"}],
//    "nodes": [{"name", "kind", "extents": [..], "loops": "SAPR",
//               "flops", "bytes", "grouped_ops": [..],
//               "reduction_splittable" (only written when false),
//               "inputs":  [{"tensor": i, "dims": [{"terms": [[loop, coef]..],
//                                                   "constant": c,
//                                                   "whole": false}]}],
//               "outputs": [same as inputs]}]}
//
// `loops` has one letter per loop (S, A, P, R; see LoopKind.h). Unknown keys
// are errors. Optional on reading: "is_parameter", "is_output" (false),
// "flops", "bytes" (0), "grouped_ops" ([]), "constant" (0), "whole" (false),
// "terms" ([]). The reader validates the graph (OpGraph::validate()).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_OPGRAPHJSON_H
#define SOAP_SIMULATOR_OPGRAPHJSON_H

#include "soap/Simulator/OpGraph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace soap {

/// Pretty-printed JSON (2-space indent, fixed key order): stable output, so
/// the same graph always gives the same text. Doubles round-trip exactly.
std::string writeOpGraphJSON(const OpGraph &graph);

/// Parses and validates; the error names the offending field and its path,
/// e.g. "op graph: nodes[2].inputs[0]: missing field 'tensor'".
llvm::Expected<OpGraph> readOpGraphJSON(llvm::StringRef text);

} // namespace soap

#endif // SOAP_SIMULATOR_OPGRAPHJSON_H
