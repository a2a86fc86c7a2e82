//===- Machine.cpp - The machine model of the simulator -------------------===//

#include "soap/Simulator/Machine.h"

#include "JSONUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <sstream>

using namespace soap;
using namespace soap::jsonutil;
using llvm::StringRef;
namespace json = llvm::json;

const char *soap::intraTopologyName(IntraTopology topology) {
  switch (topology) {
  case IntraTopology::P2P:
    return "p2p";
  case IntraTopology::Switch:
    return "switch";
  case IntraTopology::SharedBus:
    return "bus";
  }
  return "unknown";
}

bool soap::parseIntraTopology(StringRef name, IntraTopology &topology) {
  if (name == "p2p")
    topology = IntraTopology::P2P;
  else if (name == "switch")
    topology = IntraTopology::Switch;
  else if (name == "bus")
    topology = IntraTopology::SharedBus;
  else
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Links
//===----------------------------------------------------------------------===//

static int32_t intraLinksPerNode(const Machine &m) {
  int32_t g = m.devicesPerNode;
  switch (m.intraTopology) {
  case IntraTopology::P2P:
    return g * (g - 1);
  case IntraTopology::Switch:
    return g;
  case IntraTopology::SharedBus:
    return 1;
  }
  return 0;
}

static int32_t numIntraLinks(const Machine &m) {
  return m.numNodes * intraLinksPerNode(m);
}

int32_t Machine::numLinks() const {
  return numIntraLinks(*this) + (interNicPerDevice ? numDevices() : numNodes);
}

int32_t Machine::linkBetween(int32_t src, int32_t dst) const {
  assert(src != dst && "no link from a device to itself");
  int32_t node = nodeOf(src);
  if (node != nodeOf(dst))
    return numIntraLinks(*this) + (interNicPerDevice ? src : node);
  int32_t g = devicesPerNode;
  int32_t s = src % g, d = dst % g;
  int32_t base = node * intraLinksPerNode(*this);
  switch (intraTopology) {
  case IntraTopology::P2P:
    return base + s * (g - 1) + (d < s ? d : d - 1);
  case IntraTopology::Switch:
    return base + s;
  case IntraTopology::SharedBus:
    return base;
  }
  return base;
}

double Machine::linkBandwidth(int32_t link) const {
  return link < numIntraLinks(*this) ? intraBandwidth : interBandwidth;
}

double Machine::linkLatency(int32_t link) const {
  return link < numIntraLinks(*this) ? intraLatency : interLatency;
}

std::string Machine::linkName(int32_t link) const {
  std::ostringstream os;
  int32_t intra = numIntraLinks(*this);
  if (link >= intra) {
    int32_t i = link - intra;
    os << (interNicPerDevice ? "nic gpu " : "nic node ") << i;
    return os.str();
  }
  int32_t perNode = intraLinksPerNode(*this);
  int32_t node = link / perNode, local = link % perNode;
  int32_t g = devicesPerNode;
  switch (intraTopology) {
  case IntraTopology::P2P: {
    int32_t s = local / (g - 1), d = local % (g - 1);
    if (d >= s)
      ++d;
    os << "nvlink " << node * g + s << "->" << node * g + d;
    break;
  }
  case IntraTopology::Switch:
    os << "nvswitch port gpu " << node * g + local;
    break;
  case IntraTopology::SharedBus:
    os << "pcie node " << node;
    break;
  }
  return os.str();
}

std::string Machine::validate() const {
  std::ostringstream err;
  // A rate is a positive finite number of at least one per second: below
  // that a task's time overflows to infinity. A latency is at most a
  // second: more is a unit error (microseconds written as seconds), and
  // the predicted times would say nothing.
  auto rate = [](double v) { return std::isfinite(v) && v >= 1; };
  auto latency = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1; };
  if (numNodes < 1)
    err << "'nodes' must be at least 1";
  else if (devicesPerNode < 1)
    err << "'devices_per_node' must be at least 1";
  else if (int64_t(numNodes) * devicesPerNode > kMaxDevices)
    err << "the machine has " << int64_t(numNodes) * devicesPerNode
        << " devices ('nodes' x 'devices_per_node'); at most " << kMaxDevices
        << " are supported";
  else if (!rate(device.fp32Flops))
    err << "'device.fp32_flops' must be a finite number >= 1 (FLOP/s)";
  else if (!rate(device.tensorFlops))
    err << "'device.tensor_flops' must be a finite number >= 1 (FLOP/s)";
  else if (!rate(device.memoryBandwidth))
    err << "'device.memory_bandwidth' must be a finite number >= 1 (bytes/s)";
  else if (device.memoryBytes <= 0)
    err << "'device.memory_bytes' must be positive";
  else if (!latency(device.launchOverhead))
    err << "'device.launch_overhead' must be between 0 and 1 (seconds)";
  else if (devicesPerNode > 1 && !rate(intraBandwidth))
    err << "'intra.bandwidth' must be a finite number >= 1 (bytes/s)";
  else if (!latency(intraLatency))
    err << "'intra.latency' must be between 0 and 1 (seconds)";
  else if (numNodes > 1 && !rate(interBandwidth))
    err << "'inter.bandwidth' must be a finite number >= 1 (bytes/s)";
  else if (!latency(interLatency))
    err << "'inter.latency' must be between 0 and 1 (seconds)";
  return err.str();
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

static constexpr int64_t GiB = int64_t(1) << 30;

static Machine makeP100(int32_t nodes) {
  Machine m;
  m.numNodes = nodes;
  m.devicesPerNode = 4;
  m.device = {"P100-SXM2", 9.3e12, 18.7e12, 732e9, 16 * GiB, 5e-6};
  // DGX-1 style NVLink: 20 GB/s per direction per link.
  m.intraTopology = IntraTopology::P2P;
  m.intraBandwidth = 20e9;
  m.intraLatency = 5e-6;
  // EDR InfiniBand, 100 Gb/s per node.
  m.interBandwidth = 100e9 / 8;
  m.interLatency = 10e-6;
  return m;
}

static Machine makeK80(int32_t nodes) {
  Machine m;
  m.numNodes = nodes;
  m.devicesPerNode = 4;
  // One GK210 die: ~4.4 TFLOP/s fp32 (boost), no faster half precision.
  m.device = {"K80-GK210", 4.4e12, 4.4e12, 240e9, 12 * GiB, 8e-6};
  // PCIe 3.0 x16 behind one host: ~12 GB/s effective, shared.
  m.intraTopology = IntraTopology::SharedBus;
  m.intraBandwidth = 12e9;
  m.intraLatency = 10e-6;
  // FDR InfiniBand, 56 Gb/s per node.
  m.interBandwidth = 56e9 / 8;
  m.interLatency = 10e-6;
  return m;
}

static Machine makeHopper(int32_t nodes, int32_t gpus, bool h200) {
  Machine m;
  m.numNodes = nodes;
  m.devicesPerNode = gpus;
  if (h200)
    m.device = {"H200-SXM", 67e12, 989e12, 4.8e12, 141'000'000'000, 4e-6};
  else
    m.device = {"H100-SXM", 67e12, 989e12, 3.35e12, 80 * GiB, 4e-6};
  // NVSwitch: 450 GB/s per direction per GPU (NVLink 4, 18 links).
  m.intraTopology = IntraTopology::Switch;
  m.intraBandwidth = 450e9;
  m.intraLatency = 3e-6;
  // 400 Gb/s InfiniBand NDR per GPU.
  m.interBandwidth = 400e9 / 8;
  m.interLatency = 5e-6;
  m.interNicPerDevice = true;
  return m;
}

std::vector<std::string> soap::listMachinePresets() {
  return {"p100-4x4", "k80-16x4", "h100-8", "h100-4x8", "h200-1", "h200-8"};
}

llvm::Expected<Machine> soap::getMachinePreset(StringRef name) {
  Machine m;
  if (name == "p100-4x4")
    m = makeP100(4);
  else if (name == "k80-16x4")
    m = makeK80(16);
  else if (name == "h100-8")
    m = makeHopper(1, 8, false);
  else if (name == "h100-4x8")
    m = makeHopper(4, 8, false);
  else if (name == "h200-1")
    m = makeHopper(1, 1, true);
  else if (name == "h200-8")
    m = makeHopper(1, 8, true);
  else {
    std::string known;
    for (const std::string &p : listMachinePresets())
      known += (known.empty() ? "" : ", ") + p;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown machine preset '" + name.str() +
                                       "' (known: " + known + ")");
  }
  m.name = name.str();
  return m;
}

std::string soap::describeMachine(const Machine &m) {
  std::ostringstream os;
  os << m.name << ": " << m.numNodes << " x " << m.devicesPerNode << " "
     << m.device.name << " (" << m.device.fp32Flops / 1e12 << " TFLOP/s fp32, "
     << m.device.memoryBandwidth / 1e9 << " GB/s, "
     << double(m.device.memoryBytes) / double(GiB) << " GiB), intra "
     << intraTopologyName(m.intraTopology) << " "
     << m.intraBandwidth / 1e9 << " GB/s";
  if (m.numNodes > 1)
    os << ", inter " << m.interBandwidth * 8 / 1e9 << " Gb/s per "
       << (m.interNicPerDevice ? "GPU" : "node");
  return os.str();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

std::string soap::writeMachineJSON(const Machine &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    json::OStream j(os, 2);
    j.object([&] {
      j.attribute("name", m.name);
      j.attribute("nodes", m.numNodes);
      j.attribute("devices_per_node", m.devicesPerNode);
      j.attributeObject("device", [&] {
        j.attribute("name", m.device.name);
        j.attribute("fp32_flops", m.device.fp32Flops);
        j.attribute("tensor_flops", m.device.tensorFlops);
        j.attribute("memory_bandwidth", m.device.memoryBandwidth);
        j.attribute("memory_bytes", m.device.memoryBytes);
        j.attribute("launch_overhead", m.device.launchOverhead);
      });
      j.attributeObject("intra", [&] {
        j.attribute("topology", intraTopologyName(m.intraTopology));
        j.attribute("bandwidth", m.intraBandwidth);
        j.attribute("latency", m.intraLatency);
      });
      j.attributeObject("inter", [&] {
        j.attribute("bandwidth", m.interBandwidth);
        j.attribute("latency", m.interLatency);
        j.attribute("nic_per_device", m.interNicPerDevice);
      });
    });
  }
  os << "\n";
  return text;
}

llvm::Expected<Machine> soap::readMachineJSON(StringRef text) {
  auto parsed = parseTopObject(text, "machine");
  if (!parsed)
    return parsed.takeError();
  const json::Object &top = *parsed->getAsObject();
  Reader r;
  Machine m;
  int64_t nodes = 0, perNode = 0;
  const json::Object *dev = nullptr, *intra = nullptr, *inter = nullptr;
  if (!r.checkKeys(
          top, "",
          {"name", "nodes", "devices_per_node", "device", "intra", "inter"}) ||
      !r.getString(top, "", "name", m.name) ||
      !r.getInt(top, "", "nodes", nodes) ||
      !r.getInt(top, "", "devices_per_node", perNode) ||
      !r.getObject(top, "", "device", dev) ||
      !r.getObject(top, "", "intra", intra) ||
      !r.getObject(top, "", "inter", inter, /*required=*/nodes > 1))
    return r.takeError("machine");
  if (nodes < 1 || nodes > Machine::kMaxDevices || perNode < 1 ||
      perNode > Machine::kMaxDevices) {
    r.fail(nodes < 1 || nodes > Machine::kMaxDevices ? "nodes"
                                                     : "devices_per_node",
           "must be a positive integer (at most " +
               std::to_string(Machine::kMaxDevices) + ")");
    return r.takeError("machine");
  }
  m.numNodes = static_cast<int32_t>(nodes);
  m.devicesPerNode = static_cast<int32_t>(perNode);
  if (!r.checkKeys(*dev, "device",
                   {"name", "fp32_flops", "tensor_flops", "memory_bandwidth",
                    "memory_bytes", "launch_overhead"}) ||
      !r.getString(*dev, "device", "name", m.device.name) ||
      !r.getNumber(*dev, "device", "fp32_flops", m.device.fp32Flops) ||
      !r.getNumber(*dev, "device", "tensor_flops", m.device.tensorFlops) ||
      !r.getNumber(*dev, "device", "memory_bandwidth",
                   m.device.memoryBandwidth) ||
      !r.getInt(*dev, "device", "memory_bytes", m.device.memoryBytes) ||
      !r.getNumber(*dev, "device", "launch_overhead", m.device.launchOverhead,
                   false))
    return r.takeError("machine");
  std::string topology;
  if (!r.checkKeys(*intra, "intra", {"topology", "bandwidth", "latency"}) ||
      !r.getString(*intra, "intra", "topology", topology) ||
      !r.getNumber(*intra, "intra", "bandwidth", m.intraBandwidth) ||
      !r.getNumber(*intra, "intra", "latency", m.intraLatency))
    return r.takeError("machine");
  if (!parseIntraTopology(topology, m.intraTopology)) {
    r.fail("intra.topology", "unknown topology '" + topology +
                                 "' (expected p2p, switch or bus)");
    return r.takeError("machine");
  }
  if (inter &&
      (!r.checkKeys(*inter, "inter",
                    {"bandwidth", "latency", "nic_per_device"}) ||
       !r.getNumber(*inter, "inter", "bandwidth", m.interBandwidth) ||
       !r.getNumber(*inter, "inter", "latency", m.interLatency) ||
       !r.getBool(*inter, "inter", "nic_per_device", m.interNicPerDevice,
                  false)))
    return r.takeError("machine");
  // Negative values are errors even where the field is unused.
  if (m.intraBandwidth < 0 || m.interBandwidth < 0) {
    r.fail(m.intraBandwidth < 0 ? "intra.bandwidth" : "inter.bandwidth",
           "must not be negative");
    return r.takeError("machine");
  }
  std::string invalid = m.validate();
  if (!invalid.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "machine: " + invalid);
  return m;
}

llvm::Expected<Machine> soap::loadMachine(StringRef spec) {
  if (!spec.ends_with(".json") && !llvm::sys::fs::exists(spec))
    return getMachinePreset(spec);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(spec);
  if (!buffer)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read machine file '" + spec.str() +
                                       "': " + buffer.getError().message());
  llvm::Expected<Machine> machine = readMachineJSON((*buffer)->getBuffer());
  if (!machine)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        spec.str() + ": " + llvm::toString(machine.takeError()));
  return machine;
}

llvm::Expected<Machine> soap::restrictDevices(const Machine &machine,
                                              int32_t devices) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot use " + std::to_string(devices) +
                                       " devices of machine '" + machine.name +
                                       "': " + why);
  };
  if (devices <= 0)
    return fail("the number of devices must be positive");
  if (devices > machine.numDevices())
    return fail("it has only " + std::to_string(machine.numDevices()));
  Machine m = machine;
  if (devices <= machine.devicesPerNode) {
    m.numNodes = 1;
    m.devicesPerNode = devices;
  } else if (devices % machine.devicesPerNode == 0) {
    m.numNodes = devices / machine.devicesPerNode;
  } else {
    return fail("more than one node must be used whole (" +
                std::to_string(machine.devicesPerNode) + " devices per node)");
  }
  return m;
}
