//===- StrategyAttributes.cpp - Strategies and machines in the IR ---------===//

#include "soap/Transforms/StrategyAttributes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::soap;

MachineAttr mlir::soap::machineToAttr(MLIRContext *context,
                                      const ::soap::Machine &m) {
  double inter = m.numNodes > 1 ? m.interBandwidth : m.intraBandwidth;
  double interLatency = m.numNodes > 1 ? m.interLatency : m.intraLatency;
  return MachineAttr::get(
      context, m.numNodes, m.devicesPerNode,
      APFloat(m.device.fp32Flops / 1e12), APFloat(m.device.memoryBandwidth / 1e9),
      APFloat(static_cast<double>(m.device.memoryBytes) / 1073741824.0),
      APFloat(m.intraBandwidth / 1e9), APFloat(m.intraLatency * 1e6),
      APFloat(inter / 1e9), APFloat(interLatency * 1e6));
}

::soap::Machine mlir::soap::machineFromAttr(MachineAttr attr) {
  ::soap::Machine m;
  m.name = "ir-machine";
  m.numNodes = attr.getNodes();
  m.devicesPerNode = attr.getDevicesPerNode();
  m.device.name = "ir-device";
  m.device.fp32Flops = attr.getPeakFlops();
  m.device.tensorFlops = attr.getPeakFlops();
  m.device.memoryBandwidth = attr.getMemoryBandwidth();
  m.device.memoryBytes = static_cast<int64_t>(attr.getMemoryBytes());
  m.intraTopology = ::soap::IntraTopology::P2P;
  m.intraBandwidth = attr.getIntraGbps().convertToDouble() * 1e9;
  m.intraLatency = attr.getIntraLatencyUs().convertToDouble() * 1e-6;
  m.interBandwidth = attr.getInterGbps().convertToDouble() * 1e9;
  m.interLatency = attr.getInterLatencyUs().convertToDouble() * 1e-6;
  return m;
}

ParallelConfigAttr
mlir::soap::configToAttr(MLIRContext *context,
                         const ::soap::ParallelConfig &config) {
  SmallVector<int64_t> degrees(config.degrees.begin(), config.degrees.end());
  SmallVector<int64_t> devices(config.devices.begin(), config.devices.end());
  bool isView = !devices.empty() && devices.front() >= 0;
  int64_t stride = devices.size() > 1 ? devices[1] - devices[0] : 1;
  if (stride < 1)
    isView = false;
  for (size_t i = 1; i < devices.size() && isView; ++i)
    if (devices[i] != devices[0] + static_cast<int64_t>(i) * stride)
      isView = false;
  if (isView)
    return ParallelConfigAttr::get(context, degrees, devices.front(), stride);
  return ParallelConfigAttr::get(context, degrees, devices);
}

void mlir::soap::annotateStrategy(const ExtractedOpGraph &graph,
                                  const ::soap::Strategy &strategy) {
  for (auto [node, ops, config] :
       llvm::zip(graph.graph.nodes, graph.nodeOps, strategy.configs)) {
    Operation *anchor = ops.front();
    if (node.extents.empty()) {
      anchor->removeAttr(SOAPDialect::kConfigAttrName);
      continue;
    }
    anchor->setAttr(SOAPDialect::kConfigAttrName,
                    configToAttr(anchor->getContext(), config));
    // Every op of a recomputed layer (the anchor and what it fuses after
    // it) but those that only start a value (the training step computes
    // them again with the ops they start).
    for (Operation *op : ops) {
      if (config.recompute && op->getNumResults() > 0 && !isValueStart(op))
        op->setAttr(SOAPDialect::kRecomputeAttrName,
                    UnitAttr::get(op->getContext()));
      else
        op->removeAttr(SOAPDialect::kRecomputeAttrName);
    }
  }
}

FailureOr<::soap::Strategy>
mlir::soap::readStrategyFromIR(const ExtractedOpGraph &graph,
                               bool allowMissing) {
  ::soap::Strategy strategy;
  for (auto [node, ops] : llvm::zip(graph.graph.nodes, graph.nodeOps)) {
    Operation *anchor = ops.front();
    auto attr = anchor->getAttrOfType<ParallelConfigAttr>(
        SOAPDialect::kConfigAttrName);
    if (!attr) {
      if (!allowMissing && !node.extents.empty())
        return anchor->emitError()
               << "layer '" << node.name << "' has no '"
               << SOAPDialect::kConfigAttrName << "'";
      strategy.configs.push_back(::soap::singleDeviceConfig(node));
      continue;
    }
    if (attr.getDegrees().size() != node.extents.size())
      return anchor->emitError()
             << "layer '" << node.name << "' has " << node.extents.size()
             << " loops but its config gives " << attr.getDegrees().size()
             << " partition degrees";
    ::soap::ParallelConfig config;
    config.degrees.assign(attr.getDegrees().begin(), attr.getDegrees().end());
    for (int64_t device : attr.getTileDevices())
      config.devices.push_back(static_cast<int32_t>(device));
    config.recompute = anchor->hasAttr(SOAPDialect::kRecomputeAttrName);
    if (config.recompute && ::soap::splitsReduction(node, config.degrees))
      return anchor->emitError()
             << "layer '" << node.name << "' is marked '"
             << SOAPDialect::kRecomputeAttrName
             << "' but its config splits a reduction loop (its partial "
                "sums would need combining again); recompute it unsplit "
                "or keep it";
    strategy.configs.push_back(std::move(config));
  }
  return strategy;
}
