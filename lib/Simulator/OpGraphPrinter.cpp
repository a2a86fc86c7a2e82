//===- OpGraphPrinter.cpp - OpGraph as text and Graphviz ------------------===//

#include "soap/Simulator/OpGraphPrinter.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

using namespace soap;

static std::string formatDim(const DimAccess &dim) {
  if (dim.whole)
    return "*";
  std::ostringstream os;
  bool first = true;
  for (const LoopTerm &term : dim.terms) {
    int64_t c = term.coefficient;
    if (!first)
      os << (c < 0 ? " - " : " + ");
    else if (c < 0)
      os << "-";
    int64_t mag = c < 0 ? -c : c;
    os << "d" << term.loop;
    if (mag != 1)
      os << "*" << mag;
    first = false;
  }
  if (first)
    os << dim.constant;
  else if (dim.constant > 0)
    os << " + " << dim.constant;
  else if (dim.constant < 0)
    os << " - " << -dim.constant;
  return os.str();
}

std::string soap::formatAccess(const Operand &operand) {
  std::string text = "(";
  for (size_t i = 0; i < operand.dims.size(); ++i) {
    if (i)
      text += ", ";
    text += formatDim(operand.dims[i]);
  }
  text += ")";
  for (const LoopAt &at : operand.onlyAt)
    text +=
        " if d" + std::to_string(at.loop) + " = " + std::to_string(at.index);
  return text;
}

static std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += "x";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

/// Compact engineering notation: 1.2G, 345M, 12k, 7.
static std::string formatCount(double value) {
  const char *suffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (value >= 1000.0 && i < 5) {
    value /= 1000.0;
    ++i;
  }
  char buffer[32];
  if (i == 0)
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3g%s", value, suffix[i]);
  return buffer;
}

std::string soap::printOpGraphText(const OpGraph &graph) {
  std::ostringstream os;
  int64_t params = 0, paramTensors = 0;
  for (const Tensor &t : graph.tensors)
    if (t.isParameter) {
      params += t.numElements();
      ++paramTensors;
    }
  double flops = 0;
  for (const Node &n : graph.nodes)
    flops += n.flops;
  os << "graph @" << graph.name << ": " << graph.nodes.size() << " nodes, "
     << graph.tensors.size() << " tensors, " << params << " parameters in "
     << paramTensors << " tensors, " << formatCount(flops)
     << " forward FLOPs\n";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &n = graph.nodes[i];
    os << "node " << i << " \"" << n.name << "\" " << n.kind << " loops=[";
    for (size_t l = 0; l < n.extents.size(); ++l) {
      if (l)
        os << ", ";
      os << loopKindLetter(n.loopKinds[l]) << ":" << n.extents[l];
    }
    os << "] flops=" << formatCount(n.flops)
       << " bytes=" << formatCount(n.bytes);
    if (n.contraction)
      os << " contraction";
    os << "\n";
    auto printOperand = [&](const char *dir, const Operand &op) {
      const Tensor &t = graph.tensors[op.tensor];
      os << "  " << dir << " " << t.name << " " << formatShape(t.shape);
      if (t.isParameter)
        os << " param";
      else if (std::string(dir) == "in" && t.producer >= 0)
        os << " from " << t.producer;
      else if (std::string(dir) == "in")
        os << " input";
      if (t.isOutput)
        os << " result";
      os << " " << formatAccess(op) << "\n";
    };
    for (const Operand &op : n.inputs)
      printOperand("in", op);
    for (const Operand &op : n.outputs)
      printOperand("out", op);
    if (n.groupedOps.size() > 1) {
      os << "  group";
      for (const std::string &g : n.groupedOps)
        os << " " << g;
      os << "\n";
    }
    if (n.savedBytes)
      os << "  saved inside for the backward pass: " << n.savedBytes
         << " bytes\n";
  }
  return os.str();
}

static std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string soap::printOpGraphDot(const OpGraph &graph) {
  std::ostringstream os;
  os << "digraph \"" << escape(graph.name) << "\" {\n";
  os << "  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const Tensor &tensor = graph.tensors[t];
    if (tensor.producer >= 0)
      continue;
    os << "  t" << t << " [shape=" << (tensor.isParameter ? "note" : "ellipse")
       << ", label=\"" << escape(tensor.name) << "\\n"
       << formatShape(tensor.shape) << "\"];\n";
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &n = graph.nodes[i];
    os << "  n" << i << " [label=\"" << escape(n.name) << "\\n" << escape(n.kind)
       << "\\n";
    for (size_t l = 0; l < n.extents.size(); ++l)
      os << (l ? " " : "") << loopKindLetter(n.loopKinds[l]) << ":"
         << n.extents[l];
    os << "\"];\n";
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const Operand &op : graph.nodes[i].inputs) {
      const Tensor &t = graph.tensors[op.tensor];
      if (t.producer >= 0)
        os << "  n" << t.producer << " -> n" << i << " [label=\""
           << formatShape(t.shape) << "\"];\n";
      else
        os << "  t" << op.tensor << " -> n" << i << ";\n";
    }
  os << "}\n";
  return os.str();
}
