//===- CostModel.cpp - Time of compute tasks ------------------------------===//

#include "soap/Simulator/CostModel.h"

#include "JSONUtil.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace soap;
using namespace soap::jsonutil;
using llvm::StringRef;
namespace json = llvm::json;

const char *soap::opClassName(OpClass c) {
  switch (c) {
  case OpClass::Contraction:
    return "contraction";
  case OpClass::Reduction:
    return "reduction";
  case OpClass::Elementwise:
    return "elementwise";
  case OpClass::Update:
    return "update";
  }
  return "unknown";
}

OpClass soap::classifyNode(const Node &node) {
  if (node.contraction)
    return OpClass::Contraction;
  for (LoopKind k : node.loopKinds)
    if (k == LoopKind::Reduction)
      return OpClass::Reduction;
  return OpClass::Elementwise;
}

Efficiency soap::opClassEfficiency(OpClass c) {
  // The one place for efficiency factors. Contractions run near the GEMM /
  // cuDNN rate; memory-bound classes reach most of the bandwidth and little
  // of the FLOP rate.
  switch (c) {
  case OpClass::Contraction:
    return {0.70, 0.80};
  case OpClass::Reduction:
    return {0.25, 0.70};
  case OpClass::Elementwise:
    return {0.25, 0.80};
  case OpClass::Update:
    return {0.25, 0.80};
  }
  return {0.5, 0.5};
}

//===----------------------------------------------------------------------===//
// Profile table
//===----------------------------------------------------------------------===//

static uint64_t hashKey(StringRef kind, const int64_t *extents, int32_t rank,
                        int32_t elementBytes, StringRef device) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (char c : kind)
    mix(static_cast<unsigned char>(c));
  mix(0xff);
  for (int32_t i = 0; i < rank; ++i)
    mix(static_cast<uint64_t>(extents[i]));
  mix(static_cast<uint64_t>(elementBytes));
  for (char c : device)
    mix(static_cast<unsigned char>(c));
  return h;
}

void ProfileTable::add(ProfileEntry entry) {
  uint64_t key = hashKey(entry.kind, entry.extents.data(),
                         static_cast<int32_t>(entry.extents.size()),
                         entry.elementBytes, entry.device);
  byKey.emplace(key, entries.size());
  entries.push_back(std::move(entry));
}

const ProfileEntry *ProfileTable::find(StringRef kind, const int64_t *extents,
                                       int32_t rank, int32_t elementBytes,
                                       StringRef device) const {
  if (entries.empty())
    return nullptr;
  auto range =
      byKey.equal_range(hashKey(kind, extents, rank, elementBytes, device));
  for (auto it = range.first; it != range.second; ++it) {
    const ProfileEntry &e = entries[it->second];
    if (e.kind == kind && e.device == device &&
        e.elementBytes == elementBytes &&
        static_cast<int32_t>(e.extents.size()) == rank &&
        std::equal(e.extents.begin(), e.extents.end(), extents))
      return &e;
  }
  return nullptr;
}

llvm::Expected<ProfileTable> soap::readProfileTableJSON(StringRef text) {
  auto parsed = parseTopObject(text, "profile table");
  if (!parsed)
    return parsed.takeError();
  const json::Object &top = *parsed->getAsObject();
  Reader r;
  const json::Array *entries;
  if (!r.checkKeys(top, "", {"entries"}) ||
      !r.getArray(top, "", "entries", entries))
    return r.takeError("profile table");
  ProfileTable table;
  for (size_t i = 0; i < entries->size(); ++i) {
    std::string path = indexPath("entries", i);
    const json::Object *obj;
    const json::Array *extents;
    ProfileEntry e;
    int64_t eb = 0;
    double fwdUs = 0, bwdUs = 0;
    if (!r.asObject((*entries)[i], path, obj) ||
        !r.checkKeys(*obj, path,
                     {"kind", "extents", "element_bytes", "device",
                      "forward_us", "backward_us"}) ||
        !r.getString(*obj, path, "kind", e.kind) ||
        !r.getArray(*obj, path, "extents", extents) ||
        !r.getInt(*obj, path, "element_bytes", eb) ||
        !r.getString(*obj, path, "device", e.device) ||
        !r.getNumber(*obj, path, "forward_us", fwdUs) ||
        !r.getNumber(*obj, path, "backward_us", bwdUs))
      return r.takeError("profile table");
    for (size_t k = 0; k < extents->size(); ++k) {
      int64_t v;
      std::string at = indexPath(keyPath(path, "extents"), k);
      if (!r.asInt((*extents)[k], at, v))
        return r.takeError("profile table");
      if (v < 1) {
        r.fail(at, "must be positive (a loop's extent)");
        return r.takeError("profile table");
      }
      e.extents.push_back(v);
    }
    if (eb < 1 || eb > 64) {
      r.fail(keyPath(path, "element_bytes"), "must be between 1 and 64");
      return r.takeError("profile table");
    }
    if (fwdUs < 0 || bwdUs < 0) {
      r.fail(keyPath(path, fwdUs < 0 ? "forward_us" : "backward_us"),
             "must not be negative");
      return r.takeError("profile table");
    }
    e.elementBytes = static_cast<int32_t>(eb);
    e.forwardSeconds = fwdUs * 1e-6;
    e.backwardSeconds = bwdUs * 1e-6;
    table.add(std::move(e));
  }
  return table;
}

std::string soap::writeProfileTableJSON(const ProfileTable &table) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    json::OStream j(os, 2);
    j.object([&] {
      j.attributeArray("entries", [&] {
        for (const ProfileEntry &e : table.all())
          j.object([&] {
            j.attribute("kind", e.kind);
            j.attributeArray("extents", [&] {
              for (int64_t v : e.extents)
                j.value(v);
            });
            j.attribute("element_bytes", e.elementBytes);
            j.attribute("device", e.device);
            j.attribute("forward_us", e.forwardSeconds * 1e6);
            j.attribute("backward_us", e.backwardSeconds * 1e6);
          });
      });
    });
  }
  os << "\n";
  return text;
}

llvm::Expected<ProfileTable> soap::loadProfileTable(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "profile table: cannot read '" + path.str() +
                                       "': " + buffer.getError().message());
  auto table = readProfileTableJSON((*buffer)->getBuffer());
  if (!table)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path.str() + ": " +
                                       llvm::toString(table.takeError()));
  return table;
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

double CostModel::analyticTime(OpClass c, double flops, double bytes,
                               int32_t elementBytes) const {
  Efficiency eff = opClassEfficiency(c);
  const DeviceSpec &d = machine.device;
  double peak = elementBytes <= 2 ? d.tensorFlops : d.fp32Flops;
  double compute = flops / (peak * eff.compute);
  double memory = bytes / (d.memoryBandwidth * eff.memory);
  return std::max(compute, memory) + d.launchOverhead;
}

int32_t CostModel::numGradientInputs(const OpGraph &graph, const Node &node) {
  int32_t n = 0;
  for (const Operand &in : node.inputs) {
    const Tensor &t = graph.tensors[in.tensor];
    if (t.isParameter || t.producer >= 0)
      ++n;
  }
  return n;
}

int32_t CostModel::computeElementBytes(const OpGraph &graph, const Node &node,
                                       OpClass c) {
  if (c == OpClass::Contraction && node.inputs.size() >= 2)
    return std::max(graph.tensors[node.inputs[0].tensor].elementBytes,
                    graph.tensors[node.inputs[1].tensor].elementBytes);
  return node.outputs.empty()
             ? 4
             : graph.tensors[node.outputs[0].tensor].elementBytes;
}

TaskCosts CostModel::tileCosts(const OpGraph &graph, const Node &node,
                               const int64_t *tileExtents, double tileFlops,
                               double tileBytes) const {
  OpClass c = classifyNode(node);
  int32_t eb = computeElementBytes(graph, node, c);
  if (profile)
    if (const ProfileEntry *e = profile->find(node.kind, tileExtents,
                                              node.numLoops(), eb,
                                              machine.device.name))
      return {e->forwardSeconds, e->backwardSeconds};
  TaskCosts costs;
  costs.forward = analyticTime(c, tileFlops, tileBytes, eb);
  int32_t grads = numGradientInputs(graph, node);
  if (grads > 0)
    costs.backward = analyticTime(c, tileFlops * grads, tileBytes * grads, eb);
  return costs;
}

double CostModel::updateTime(double bytes, int32_t elementBytes) const {
  double elements = bytes / elementBytes;
  return analyticTime(OpClass::Update, 2 * elements, 3 * bytes, elementBytes);
}

double CostModel::combineTime(double bytes, int32_t parts,
                              int32_t elementBytes) const {
  double elements = bytes / elementBytes;
  return analyticTime(OpClass::Update, (parts - 1) * elements,
                      (parts + 1) * bytes, elementBytes);
}
