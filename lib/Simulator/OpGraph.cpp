//===- OpGraph.cpp - The compact, MLIR-free operator graph ----------------===//

#include "soap/Simulator/OpGraph.h"

#include <sstream>

using namespace soap;

std::vector<int32_t> OpGraph::consumers(int32_t t) const {
  std::vector<int32_t> result;
  for (int32_t n = 0, e = static_cast<int32_t>(nodes.size()); n < e; ++n)
    for (const Operand &in : nodes[n].inputs)
      if (in.tensor == t) {
        result.push_back(n);
        break;
      }
  return result;
}

bool OpGraph::writesOutput(int32_t n) const {
  for (const Operand &out : nodes[n].outputs)
    if (tensors[out.tensor].isOutput)
      return true;
  return false;
}

int64_t OpGraph::numParameters() const {
  int64_t total = 0;
  for (const Tensor &t : tensors)
    if (t.isParameter)
      total += t.numElements();
  return total;
}

std::string OpGraph::validate() const {
  std::ostringstream err;
  auto checkOperand = [&](const Node &node, const Operand &op,
                          int32_t nodeIndex, bool isOutput) -> bool {
    if (op.tensor < 0 || op.tensor >= static_cast<int32_t>(tensors.size())) {
      err << "node '" << node.name << "' refers to tensor #" << op.tensor
          << " which does not exist";
      return false;
    }
    const Tensor &t = tensors[op.tensor];
    if (op.dims.size() != t.shape.size()) {
      err << "node '" << node.name << "' indexes tensor '" << t.name
          << "' with " << op.dims.size() << " dimensions, but it has "
          << t.shape.size();
      return false;
    }
    for (const DimAccess &dim : op.dims)
      for (const LoopTerm &term : dim.terms)
        if (term.loop < 0 || term.loop >= node.numLoops()) {
          err << "node '" << node.name << "' indexes tensor '" << t.name
              << "' with loop #" << term.loop << " out of range";
          return false;
        }
    for (const LoopAt &at : op.onlyAt)
      if (isOutput || op.dims.empty() || at.loop < 0 ||
          at.loop >= node.numLoops()) {
        err << "node '" << node.name << "' reads tensor '" << t.name
            << "' only at loop #" << at.loop
            << (isOutput          ? ", but it writes it"
                : op.dims.empty() ? ", but it is a scalar"
                                  : ", out of range");
        return false;
      }
    if (isOutput && t.producer != nodeIndex) {
      err << "tensor '" << t.name << "' is written by node '" << node.name
          << "' but records producer #" << t.producer;
      return false;
    }
    if (!isOutput && t.producer >= nodeIndex) {
      err << "node '" << node.name << "' reads tensor '" << t.name
          << "' before it is produced";
      return false;
    }
    return true;
  };
  for (int32_t n = 0, e = static_cast<int32_t>(nodes.size()); n < e; ++n) {
    const Node &node = nodes[n];
    if (node.extents.size() != node.loopKinds.size()) {
      err << "node '" << node.name << "' has " << node.extents.size()
          << " extents but " << node.loopKinds.size() << " loop kinds";
      return err.str();
    }
    for (int64_t extent : node.extents)
      if (extent < 1) {
        err << "node '" << node.name << "' has a non-positive loop extent";
        return err.str();
      }
    if (node.savedBytes < 0) {
      err << "node '" << node.name << "' has negative saved bytes";
      return err.str();
    }
    for (const Operand &op : node.inputs)
      if (!checkOperand(node, op, n, false))
        return err.str();
    for (const Operand &op : node.outputs)
      if (!checkOperand(node, op, n, true))
        return err.str();
  }
  return std::string();
}
