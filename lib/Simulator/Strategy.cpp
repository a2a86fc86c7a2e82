//===- Strategy.cpp - Parallelization configs and strategies --------------===//

#include "soap/Simulator/Strategy.h"

#include "JSONUtil.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <sstream>

using namespace soap;
using namespace soap::jsonutil;
using llvm::StringRef;
namespace json = llvm::json;

ParallelConfig soap::singleDeviceConfig(const Node &node, int32_t device) {
  ParallelConfig c;
  c.degrees.assign(node.numLoops(), 1);
  c.devices = {device};
  return c;
}

Strategy soap::singleDeviceStrategy(const OpGraph &graph) {
  Strategy s;
  for (const Node &n : graph.nodes)
    s.configs.push_back(singleDeviceConfig(n));
  return s;
}

Strategy soap::dataParallelStrategy(const OpGraph &graph, int32_t numDevices) {
  Strategy s;
  for (const Node &n : graph.nodes) {
    ParallelConfig c = singleDeviceConfig(n);
    for (int32_t l = 0; l < n.numLoops(); ++l) {
      if (n.loopKinds[l] != LoopKind::Sample)
        continue;
      int32_t best = 1;
      for (int32_t d = std::min<int64_t>(numDevices, n.extents[l]); d > 1; --d)
        if (n.extents[l] % d == 0) {
          best = d;
          break;
        }
      c.degrees[l] = best;
      c.devices.resize(best);
      for (int32_t t = 0; t < best; ++t)
        c.devices[t] = t;
      break;
    }
    s.configs.push_back(std::move(c));
  }
  return s;
}

std::string soap::validateConfig(const Node &node, const ParallelConfig &c,
                                 int32_t numDevices) {
  std::ostringstream err;
  if (static_cast<int32_t>(c.degrees.size()) != node.numLoops()) {
    err << "has " << c.degrees.size() << " degrees for " << node.numLoops()
        << " loops";
    return err.str();
  }
  int64_t tiles = 1;
  for (int32_t l = 0; l < node.numLoops(); ++l) {
    if (c.degrees[l] < 1 || node.extents[l] % c.degrees[l] != 0) {
      err << "degree " << c.degrees[l] << " of loop " << l
          << " does not divide its extent " << node.extents[l];
      return err.str();
    }
    if (c.degrees[l] > 1 && !node.canSplit(l)) {
      err << "splits reduction loop " << l
          << " whose partial results cannot be combined";
      return err.str();
    }
    tiles *= c.degrees[l];
    if (tiles > (int64_t(1) << 30)) {
      err << "has too many tiles";
      return err.str();
    }
  }
  if (static_cast<int64_t>(c.devices.size()) != tiles) {
    err << "has " << tiles << " tiles but " << c.devices.size() << " devices";
    return err.str();
  }
  if (numDevices > 0 && tiles > numDevices) {
    err << "has " << tiles << " tiles, more than the " << numDevices
        << " devices of the machine";
    return err.str();
  }
  std::vector<int32_t> sorted = c.devices;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || (numDevices > 0 && sorted[i] >= numDevices)) {
      err << "uses device " << sorted[i] << " out of range";
      return err.str();
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      err << "places two tiles on device " << sorted[i];
      return err.str();
    }
  }
  if (c.recompute && splitsReduction(node, c.degrees)) {
    err << "recomputes a node that splits a reduction loop (its partial "
           "results would need combining again)";
    return err.str();
  }
  return "";
}

std::string soap::validateStrategy(const OpGraph &graph,
                                   const Strategy &strategy,
                                   int32_t numDevices) {
  if (strategy.configs.size() != graph.nodes.size())
    return "strategy has " + std::to_string(strategy.configs.size()) +
           " configs for " + std::to_string(graph.nodes.size()) + " nodes";
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    std::string e =
        validateConfig(graph.nodes[n], strategy.configs[n], numDevices);
    if (!e.empty())
      return "config of node '" + graph.nodes[n].name + "' " + e;
  }
  return "";
}

static uint64_t below(std::mt19937_64 &rng, uint64_t n) { return rng() % n; }

ParallelConfig soap::randomConfig(const Node &node, int32_t numDevices,
                                  std::mt19937_64 &rng) {
  ParallelConfig c;
  int32_t loops = node.numLoops();
  c.degrees.assign(loops, 1);
  std::vector<int32_t> order(loops);
  for (int32_t l = 0; l < loops; ++l)
    order[l] = l;
  for (int32_t l = loops - 1; l > 0; --l)
    std::swap(order[l], order[below(rng, l + 1)]);
  int64_t budget = numDevices;
  std::vector<int32_t> divisors;
  for (int32_t l : order) {
    divisors.clear();
    for (int64_t d = 1; d <= budget && d <= node.extents[l] &&
                        (d == 1 || node.canSplit(l));
         ++d)
      if (node.extents[l] % d == 0)
        divisors.push_back(static_cast<int32_t>(d));
    int32_t d = divisors[below(rng, divisors.size())];
    c.degrees[l] = d;
    budget /= d;
  }
  int32_t tiles = c.numTiles();
  std::vector<int32_t> pool(numDevices);
  for (int32_t i = 0; i < numDevices; ++i)
    pool[i] = i;
  for (int32_t i = 0; i < tiles; ++i)
    std::swap(pool[i], pool[i + below(rng, numDevices - i)]);
  c.devices.assign(pool.begin(), pool.begin() + tiles);
  return c;
}

std::string soap::writeStrategyJSON(const OpGraph &graph,
                                    const Strategy &strategy) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    json::OStream j(os, 2);
    j.object([&] {
      j.attribute("model", graph.name);
      j.attributeArray("nodes", [&] {
        for (size_t n = 0; n < graph.nodes.size(); ++n)
          j.object([&] {
            j.attribute("name", graph.nodes[n].name);
            j.attributeArray("degrees", [&] {
              for (int32_t d : strategy.configs[n].degrees)
                j.value(d);
            });
            j.attributeArray("devices", [&] {
              for (int32_t d : strategy.configs[n].devices)
                j.value(d);
            });
            if (strategy.configs[n].recompute)
              j.attribute("recompute", true);
          });
      });
    });
  }
  os << "\n";
  return text;
}

llvm::Expected<Strategy> soap::readStrategyJSON(StringRef text,
                                                const OpGraph &graph,
                                                int32_t numDevices) {
  auto parsed = parseTopObject(text, "strategy");
  if (!parsed)
    return parsed.takeError();
  const json::Object &top = *parsed->getAsObject();
  Reader r;
  const json::Array *nodes;
  std::string model;
  if (!r.checkKeys(top, "", {"model", "nodes"}) ||
      !r.getString(top, "", "model", model, false) ||
      !r.getArray(top, "", "nodes", nodes))
    return r.takeError("strategy");
  llvm::StringMap<int32_t> index;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    index[graph.nodes[n].name] = static_cast<int32_t>(n);
  Strategy s;
  s.configs.resize(graph.nodes.size());
  std::vector<bool> seen(graph.nodes.size(), false);
  for (size_t i = 0; i < nodes->size(); ++i) {
    std::string path = indexPath("nodes", i);
    const json::Object *obj;
    std::string name;
    const json::Array *degrees, *devices;
    if (!r.asObject((*nodes)[i], path, obj) ||
        !r.checkKeys(*obj, path, {"name", "degrees", "devices", "recompute"}) ||
        !r.getString(*obj, path, "name", name) ||
        !r.getArray(*obj, path, "degrees", degrees) ||
        !r.getArray(*obj, path, "devices", devices))
      return r.takeError("strategy");
    bool recompute = false;
    if (!r.getBool(*obj, path, "recompute", recompute, /*required=*/false))
      return r.takeError("strategy");
    auto it = index.find(name);
    if (it == index.end()) {
      r.fail(keyPath(path, "name"), "no node named '" + name + "' in graph '" +
                                        graph.name + "'");
      return r.takeError("strategy");
    }
    int32_t n = it->second;
    if (seen[n]) {
      r.fail(keyPath(path, "name"), "node '" + name + "' given twice");
      return r.takeError("strategy");
    }
    seen[n] = true;
    ParallelConfig &c = s.configs[n];
    c.recompute = recompute;
    for (size_t k = 0; k < degrees->size(); ++k) {
      int64_t v;
      if (!r.asInt((*degrees)[k], indexPath(keyPath(path, "degrees"), k), v))
        return r.takeError("strategy");
      if (v < 1 || v > (1 << 30)) {
        r.fail(indexPath(keyPath(path, "degrees"), k), "out of range");
        return r.takeError("strategy");
      }
      c.degrees.push_back(static_cast<int32_t>(v));
    }
    for (size_t k = 0; k < devices->size(); ++k) {
      int64_t v;
      if (!r.asInt((*devices)[k], indexPath(keyPath(path, "devices"), k), v))
        return r.takeError("strategy");
      if (v < 0 || v > (1 << 30)) {
        r.fail(indexPath(keyPath(path, "devices"), k), "out of range");
        return r.takeError("strategy");
      }
      c.devices.push_back(static_cast<int32_t>(v));
    }
    std::string e = validateConfig(graph.nodes[n], c, numDevices);
    if (!e.empty()) {
      r.fail(path, "config of node '" + name + "' " + e);
      return r.takeError("strategy");
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (!seen[n])
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "strategy: no config for node '" +
                                         graph.nodes[n].name + "'");
  return s;
}
