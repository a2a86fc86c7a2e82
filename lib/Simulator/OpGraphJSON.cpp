//===- OpGraphJSON.cpp - OpGraph <-> JSON ---------------------------------===//

#include "soap/Simulator/OpGraphJSON.h"

#include "JSONUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace soap;
using namespace soap::jsonutil;
using llvm::StringRef;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static void writeOperand(json::OStream &j, const Operand &op) {
  j.object([&] {
    j.attribute("tensor", op.tensor);
    j.attributeArray("dims", [&] {
      for (const DimAccess &dim : op.dims)
        j.object([&] {
          j.attributeArray("terms", [&] {
            for (const LoopTerm &term : dim.terms)
              j.array([&] {
                j.value(term.loop);
                j.value(term.coefficient);
              });
          });
          j.attribute("constant", dim.constant);
          j.attribute("whole", dim.whole);
        });
    });
    if (!op.onlyAt.empty())
      j.attributeArray("only_at", [&] {
        for (const LoopAt &at : op.onlyAt)
          j.array([&] {
            j.value(at.loop);
            j.value(at.index);
          });
      });
  });
}

std::string soap::writeOpGraphJSON(const OpGraph &graph) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    json::OStream j(os, /*IndentSize=*/2);
    j.object([&] {
      j.attribute("name", graph.name);
      j.attributeArray("tensors", [&] {
        for (const Tensor &t : graph.tensors)
          j.object([&] {
            j.attribute("name", t.name);
            j.attributeArray("shape", [&] {
              for (int64_t d : t.shape)
                j.value(d);
            });
            j.attribute("element_bytes", t.elementBytes);
            j.attribute("producer", t.producer);
            j.attribute("is_parameter", t.isParameter);
            j.attribute("is_output", t.isOutput);
          });
      });
      j.attributeArray("nodes", [&] {
        for (const Node &n : graph.nodes)
          j.object([&] {
            j.attribute("name", n.name);
            j.attribute("kind", n.kind);
            j.attributeArray("extents", [&] {
              for (int64_t e : n.extents)
                j.value(e);
            });
            std::string loops;
            for (LoopKind k : n.loopKinds)
              loops.push_back(loopKindLetter(k));
            j.attribute("loops", loops);
            j.attribute("flops", n.flops);
            j.attribute("bytes", n.bytes);
            if (n.contraction)
              j.attribute("contraction", true);
            if (!n.reductionSplittable)
              j.attribute("reduction_splittable", false);
            if (n.savedBytes)
              j.attribute("saved_bytes", n.savedBytes);
            j.attributeArray("grouped_ops", [&] {
              for (const std::string &g : n.groupedOps)
                j.value(g);
            });
            j.attributeArray("inputs", [&] {
              for (const Operand &op : n.inputs)
                writeOperand(j, op);
            });
            j.attributeArray("outputs", [&] {
              for (const Operand &op : n.outputs)
                writeOperand(j, op);
            });
          });
      });
    });
  }
  os << "\n";
  return text;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

static bool toInt32(Reader &r, StringRef path, int64_t v, int32_t &out) {
  if (v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max())
    return r.fail(path, "value out of range");
  out = static_cast<int32_t>(v);
  return true;
}

/// A pair [loop, `second`] at `path`.
static bool readLoopPair(Reader &r, const json::Value &value,
                         const std::string &path, StringRef second,
                         int32_t &loop, int64_t &other) {
  const json::Array *pair = value.getAsArray();
  if (!pair || pair->size() != 2)
    return r.fail(path, ("expected a pair [loop, " + second + "]").str());
  int64_t l;
  return r.asInt((*pair)[0], indexPath(path, 0), l) &&
         toInt32(r, indexPath(path, 0), l, loop) &&
         r.asInt((*pair)[1], indexPath(path, 1), other);
}

static bool readOperand(Reader &r, const json::Value &value,
                        const std::string &path, Operand &op) {
  const json::Object *obj;
  if (!r.asObject(value, path, obj) ||
      !r.checkKeys(*obj, path, {"tensor", "dims", "only_at"}))
    return false;
  int64_t tensor = -1;
  const json::Array *dims;
  if (!r.getInt(*obj, path, "tensor", tensor) ||
      !toInt32(r, keyPath(path, "tensor"), tensor, op.tensor) ||
      !r.getArray(*obj, path, "dims", dims))
    return false;
  for (size_t d = 0; d < dims->size(); ++d) {
    std::string dpath = indexPath(keyPath(path, "dims"), d);
    const json::Object *dobj;
    if (!r.asObject((*dims)[d], dpath, dobj) ||
        !r.checkKeys(*dobj, dpath, {"terms", "constant", "whole"}))
      return false;
    DimAccess access;
    const json::Array *terms;
    if (!r.getArray(*dobj, dpath, "terms", terms, /*required=*/false) ||
        !r.getInt(*dobj, dpath, "constant", access.constant, false) ||
        !r.getBool(*dobj, dpath, "whole", access.whole, false))
      return false;
    if (terms)
      for (size_t t = 0; t < terms->size(); ++t) {
        LoopTerm term;
        if (!readLoopPair(r, (*terms)[t], indexPath(keyPath(dpath, "terms"), t),
                          "coefficient", term.loop, term.coefficient))
          return false;
        access.terms.push_back(term);
      }
    op.dims.push_back(std::move(access));
  }
  const json::Array *onlyAt;
  if (!r.getArray(*obj, path, "only_at", onlyAt, /*required=*/false))
    return false;
  if (onlyAt)
    for (size_t i = 0; i < onlyAt->size(); ++i) {
      LoopAt at;
      if (!readLoopPair(r, (*onlyAt)[i], indexPath(keyPath(path, "only_at"), i),
                        "index", at.loop, at.index))
        return false;
      op.onlyAt.push_back(at);
    }
  return true;
}

static bool readInts(Reader &r, const json::Array &arr,
                     const std::string &path, std::vector<int64_t> &out) {
  for (size_t i = 0; i < arr.size(); ++i) {
    int64_t v;
    if (!r.asInt(arr[i], indexPath(path, i), v))
      return false;
    out.push_back(v);
  }
  return true;
}

llvm::Expected<OpGraph> soap::readOpGraphJSON(StringRef text) {
  auto parsed = parseTopObject(text, "op graph");
  if (!parsed)
    return parsed.takeError();
  const json::Object &top = *parsed->getAsObject();
  Reader r;
  OpGraph graph;
  const json::Array *tensors = nullptr, *nodes = nullptr;
  if (!r.checkKeys(top, "", {"name", "tensors", "nodes"}) ||
      !r.getString(top, "", "name", graph.name) ||
      !r.getArray(top, "", "tensors", tensors) ||
      !r.getArray(top, "", "nodes", nodes))
    return r.takeError("op graph");

  for (size_t i = 0; i < tensors->size(); ++i) {
    std::string path = indexPath("tensors", i);
    const json::Object *obj;
    if (!r.asObject((*tensors)[i], path, obj) ||
        !r.checkKeys(*obj, path,
                     {"name", "shape", "element_bytes", "producer",
                      "is_parameter", "is_output"}))
      return r.takeError("op graph");
    Tensor t;
    const json::Array *shape;
    int64_t elementBytes = 0, producer = -1;
    if (!r.getString(*obj, path, "name", t.name) ||
        !r.getArray(*obj, path, "shape", shape) ||
        !readInts(r, *shape, keyPath(path, "shape"), t.shape) ||
        !r.getInt(*obj, path, "element_bytes", elementBytes) ||
        !toInt32(r, keyPath(path, "element_bytes"), elementBytes,
                 t.elementBytes) ||
        !r.getInt(*obj, path, "producer", producer) ||
        !toInt32(r, keyPath(path, "producer"), producer, t.producer) ||
        !r.getBool(*obj, path, "is_parameter", t.isParameter, false) ||
        !r.getBool(*obj, path, "is_output", t.isOutput, false))
      return r.takeError("op graph");
    if (t.elementBytes < 1) {
      r.fail(keyPath(path, "element_bytes"), "must be positive");
      return r.takeError("op graph");
    }
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d] < 0) {
        r.fail(indexPath(keyPath(path, "shape"), d), "negative dimension");
        return r.takeError("op graph");
      }
    graph.tensors.push_back(std::move(t));
  }

  for (size_t i = 0; i < nodes->size(); ++i) {
    std::string path = indexPath("nodes", i);
    const json::Object *obj;
    if (!r.asObject((*nodes)[i], path, obj) ||
        !r.checkKeys(*obj, path,
                     {"name", "kind", "extents", "loops", "flops", "bytes",
                      "grouped_ops", "inputs", "outputs", "contraction",
                      "reduction_splittable", "saved_bytes"}))
      return r.takeError("op graph");
    Node n;
    const json::Array *extents, *grouped, *inputs, *outputs;
    std::string loops;
    if (!r.getString(*obj, path, "name", n.name) ||
        !r.getString(*obj, path, "kind", n.kind) ||
        !r.getArray(*obj, path, "extents", extents) ||
        !readInts(r, *extents, keyPath(path, "extents"), n.extents) ||
        !r.getString(*obj, path, "loops", loops) ||
        !r.getNumber(*obj, path, "flops", n.flops, false) ||
        !r.getNumber(*obj, path, "bytes", n.bytes, false) ||
        !r.getArray(*obj, path, "grouped_ops", grouped, false) ||
        !r.getBool(*obj, path, "contraction", n.contraction, false) ||
        !r.getBool(*obj, path, "reduction_splittable", n.reductionSplittable,
                   false) ||
        !r.getInt(*obj, path, "saved_bytes", n.savedBytes, false) ||
        !r.getArray(*obj, path, "inputs", inputs) ||
        !r.getArray(*obj, path, "outputs", outputs))
      return r.takeError("op graph");
    for (size_t l = 0; l < loops.size(); ++l) {
      LoopKind kind;
      if (!parseLoopKindLetter(loops[l], kind)) {
        r.fail(keyPath(path, "loops"),
               "unknown loop kind '" + std::string(1, loops[l]) +
                   "' (expected S, A, P or R)");
        return r.takeError("op graph");
      }
      n.loopKinds.push_back(kind);
    }
    if (grouped)
      for (size_t g = 0; g < grouped->size(); ++g) {
        std::string s;
        if (!r.asString((*grouped)[g],
                        indexPath(keyPath(path, "grouped_ops"), g), s))
          return r.takeError("op graph");
        n.groupedOps.push_back(std::move(s));
      }
    for (size_t k = 0; k < inputs->size(); ++k) {
      Operand op;
      if (!readOperand(r, (*inputs)[k], indexPath(keyPath(path, "inputs"), k),
                       op))
        return r.takeError("op graph");
      n.inputs.push_back(std::move(op));
    }
    for (size_t k = 0; k < outputs->size(); ++k) {
      Operand op;
      if (!readOperand(r, (*outputs)[k],
                       indexPath(keyPath(path, "outputs"), k), op))
        return r.takeError("op graph");
      n.outputs.push_back(std::move(op));
    }
    graph.nodes.push_back(std::move(n));
  }

  std::string invalid = graph.validate();
  if (!invalid.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "op graph: invalid: " + invalid);
  return graph;
}
