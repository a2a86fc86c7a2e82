//===- Trace.cpp - Simulated timeline and report output -------------------===//

#include "soap/Simulator/Trace.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace soap;
namespace json = llvm::json;

std::string soap::writeChromeTrace(const Simulator &sim) {
  std::vector<ScheduledTask> tasks = sim.scheduledTasks();
  std::sort(tasks.begin(), tasks.end(),
            [](const ScheduledTask &a, const ScheduledTask &b) {
              if (a.resource != b.resource)
                return a.resource < b.resource;
              return a.start < b.start;
            });
  int32_t devices = sim.getMachine().numDevices();
  std::vector<bool> used(sim.numResources(), false);
  for (const ScheduledTask &t : tasks)
    if (t.resource >= 0)
      used[t.resource] = true;
  const OpGraph &graph = sim.getGraph();
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    json::OStream j(os);
    j.object([&] {
      j.attribute("displayTimeUnit", "ms");
      j.attributeArray("traceEvents", [&] {
        j.object([&] {
          j.attribute("ph", "M");
          j.attribute("name", "process_name");
          j.attribute("pid", 0);
          j.attributeObject("args", [&] {
            j.attribute("name", "SOAP simulation of " + graph.name + " on " +
                                    sim.getMachine().name);
          });
        });
        for (int32_t r = 0; r < sim.numResources(); ++r) {
          if (r >= devices && !used[r])
            continue;
          j.object([&] {
            j.attribute("ph", "M");
            j.attribute("name", "thread_name");
            j.attribute("pid", 0);
            j.attribute("tid", r);
            j.attributeObject("args",
                              [&] { j.attribute("name", sim.resourceName(r)); });
          });
          j.object([&] {
            j.attribute("ph", "M");
            j.attribute("name", "thread_sort_index");
            j.attribute("pid", 0);
            j.attribute("tid", r);
            j.attributeObject("args", [&] { j.attribute("sort_index", r); });
          });
        }
        for (const ScheduledTask &t : tasks) {
          if (t.resource < 0)
            continue; // joins: zero-time barriers
          j.object([&] {
            j.attribute("ph", "X");
            j.attribute("name", graph.nodes[t.node].name + " " +
                                    taskKindName(t.kind));
            j.attribute("cat", taskKindName(t.kind));
            j.attribute("pid", 0);
            j.attribute("tid", t.resource);
            j.attribute("ts", t.start * 1e6);
            j.attribute("dur", (t.end - t.start) * 1e6);
            if (t.bytes > 0)
              j.attributeObject("args", [&] { j.attribute("bytes", t.bytes); });
          });
        }
      });
    });
  }
  os << "\n";
  return text;
}

json::Object soap::reportToJSON(const Simulator &sim) {
  SimulationReport r = sim.report();
  const Machine &m = sim.getMachine();
  json::Object o;
  o["model"] = sim.getGraph().name;
  o["machine"] = m.name;
  o["devices"] = m.numDevices();
  o["predicted_iteration_ms"] = r.iterationSeconds * 1e3;
  json::Array busy;
  for (double b : r.deviceBusySeconds)
    busy.push_back(b * 1e3);
  o["device_busy_ms"] = std::move(busy);
  json::Object links;
  for (size_t l = 0; l < r.linkBusySeconds.size(); ++l)
    if (r.linkBusySeconds[l] > 0)
      links[m.linkName(static_cast<int32_t>(l))] = r.linkBusySeconds[l] * 1e3;
  o["link_busy_ms"] = std::move(links);
  o["communication_bytes"] = r.communicationBytes;
  json::Array mem;
  for (int64_t b : r.memoryBytesPerDevice)
    mem.push_back(b);
  o["memory_bytes_per_device"] = std::move(mem);
  o["peak_memory_bytes_per_device"] = r.peakMemoryBytes;
  o["peak_memory_device"] = r.peakMemoryDevice;
  if (r.peakMemoryNode >= 0) {
    o["peak_memory_layer"] = sim.getGraph().nodes[r.peakMemoryNode].name;
    o["peak_memory_pass"] = r.peakMemoryInBackward ? "backward" : "forward";
  }
  o["over_capacity"] = r.overCapacity;
  o["tasks"] = r.numTasks;
  json::Array configs;
  const OpGraph &g = sim.getGraph();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    json::Object c;
    c["name"] = g.nodes[n].name;
    json::Array deg, dev;
    for (int32_t d : sim.strategy().configs[n].degrees)
      deg.push_back(d);
    for (int32_t d : sim.strategy().configs[n].devices)
      dev.push_back(d);
    c["degrees"] = std::move(deg);
    c["devices"] = std::move(dev);
    configs.push_back(std::move(c));
  }
  o["configs"] = std::move(configs);
  return o;
}
