//===- OpGraphPrinter.h - OpGraph as text and Graphviz ----------*- C++ -*-===//
//
// Human-readable forms of the op graph (`soap-opt --soap-dump-graph`, and
// `=dot`). The JSON form is in OpGraphJSON.h.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_OPGRAPHPRINTER_H
#define SOAP_SIMULATOR_OPGRAPHPRINTER_H

#include "soap/Simulator/OpGraph.h"

#include <string>

namespace soap {

/// One line per tensor access, e.g. `(d0, d4, d2*2 + d5 - 3)`.
std::string formatAccess(const Operand &operand);

/// The graph as text: a header, then per node its loops, FLOPs, bytes,
/// inputs and outputs with their accesses, and the grouped ops.
std::string printOpGraphText(const OpGraph &graph);

/// The graph as a Graphviz digraph (nodes = ops, edges = tensors).
std::string printOpGraphDot(const OpGraph &graph);

} // namespace soap

#endif // SOAP_SIMULATOR_OPGRAPHPRINTER_H
