//===- Machine.h - The machine model of the simulator -----------*- C++ -*-===//
//
// A machine is `numNodes` nodes x `devicesPerNode` identical devices (GPUs),
// the intra-node interconnect and the inter-node network. Devices are
// numbered node-major: device d lives on node d / devicesPerNode.
//
// Communication resources ("links"). Each is a simulated resource that runs
// its transfers one at a time in FIFO order (DESIGN.md, Simulator). A
// transfer from device a to device b (a != b) occupies exactly one link:
//   * same node, IntraTopology::P2P (NVLink point-to-point): the dedicated
//     link of the ordered pair (a, b); a node has g*(g-1) of them.
//   * same node, IntraTopology::Switch (NVSwitch): a's egress port into the
//     switch (the switch itself is non-blocking, so a sender's port is what
//     two transfers from the same GPU share); g per node.
//   * same node, IntraTopology::SharedBus (PCIe behind one host): one bus per
//     node, shared by every intra-node transfer of that node.
//   * different nodes: the egress NIC of a's node, or of device a itself when
//     `interNicPerDevice` (one NIC per GPU, as in DGX H100).
// A transfer of s bytes takes latency + s / bandwidth of its link.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_MACHINE_H
#define SOAP_SIMULATOR_MACHINE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace soap {

enum class IntraTopology : uint8_t { P2P, Switch, SharedBus };

/// "p2p", "switch" or "bus".
const char *intraTopologyName(IntraTopology topology);
bool parseIntraTopology(llvm::StringRef name, IntraTopology &topology);

/// One device (all devices of a machine are identical).
struct DeviceSpec {
  std::string name;        ///< e.g. "P100", "H100-SXM"; keys profile tables
  double fp32Flops = 0;    ///< peak FLOP/s for 4-byte (and wider) elements
  double tensorFlops = 0;  ///< peak FLOP/s for <= 2-byte elements (tensor core)
  double memoryBandwidth = 0; ///< bytes/s
  int64_t memoryBytes = 0;    ///< capacity
  double launchOverhead = 5e-6; ///< seconds added to every compute task
};

struct Machine {
  /// The most devices a machine may have: the simulator keeps a table per
  /// device pair (4096^2 entries, 64 MiB, per search chain).
  static constexpr int32_t kMaxDevices = 4096;

  std::string name;
  int32_t numNodes = 1;
  int32_t devicesPerNode = 1;
  DeviceSpec device;
  IntraTopology intraTopology = IntraTopology::P2P;
  double intraBandwidth = 0; ///< bytes/s of one intra-node link
  double intraLatency = 0;   ///< seconds
  double interBandwidth = 0; ///< bytes/s of one NIC
  double interLatency = 0;   ///< seconds
  bool interNicPerDevice = false;

  int32_t numDevices() const { return numNodes * devicesPerNode; }
  int32_t nodeOf(int32_t device) const { return device / devicesPerNode; }

  /// Number of links (see the file comment), numbered: all intra-node links
  /// node by node, then the NICs.
  int32_t numLinks() const;
  /// The link a transfer from `src` to `dst` occupies (src != dst).
  int32_t linkBetween(int32_t src, int32_t dst) const;
  double linkBandwidth(int32_t link) const;
  double linkLatency(int32_t link) const;
  /// Human-readable name, e.g. "nvlink 0->1", "pcie node 2", "nic node 1".
  std::string linkName(int32_t link) const;
  /// Time of an s-byte transfer between two distinct devices.
  double transferTime(int32_t src, int32_t dst, double bytes) const {
    int32_t l = linkBetween(src, dst);
    return linkLatency(l) + bytes / linkBandwidth(l);
  }
  /// Empty when consistent, else the first problem (names the field).
  std::string validate() const;
};

/// Preset names, in a fixed order: p100-4x4, k80-16x4, h100-8, h100-4x8,
/// h200-1, h200-8.
std::vector<std::string> listMachinePresets();
/// One line describing a preset (for `soapc --list-machines`).
std::string describeMachine(const Machine &machine);
llvm::Expected<Machine> getMachinePreset(llvm::StringRef name);

/// JSON: {"name", "nodes", "devices_per_node",
///  "device": {"name", "fp32_flops", "tensor_flops", "memory_bandwidth",
///             "memory_bytes", "launch_overhead"?},
///  "intra": {"topology": "p2p"|"switch"|"bus", "bandwidth", "latency"},
///  "inter": {"bandwidth", "latency", "nic_per_device"?}}
/// Units: bytes, bytes/s, FLOP/s, seconds. Unknown keys are errors; "inter"
/// may be omitted for a single node.
llvm::Expected<Machine> readMachineJSON(llvm::StringRef text);

/// A preset by name, or (when `spec` names an existing file or ends in
/// ".json") a machine read from that JSON file. Errors name the file.
llvm::Expected<Machine> loadMachine(llvm::StringRef spec);

/// The first `devices` devices of `machine`: whole nodes when `devices` is a
/// multiple of the devices per node, else part of one node. Errors when
/// `devices` is not positive, exceeds the machine, or spans a partial node.
llvm::Expected<Machine> restrictDevices(const Machine &machine,
                                        int32_t devices);
std::string writeMachineJSON(const Machine &machine);

} // namespace soap

#endif // SOAP_SIMULATOR_MACHINE_H
