//===- StrategyAttributes.h - Strategies and machines in the IR -*- C++ -*-===//
//
// Converts between the simulator's plain C++ strategy / machine and the SOAP
// dialect's attributes on the IR (`soap.config` on each layer's anchor op,
// `soap.machine` on the module).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_TRANSFORMS_STRATEGYATTRIBUTES_H
#define SOAP_TRANSFORMS_STRATEGYATTRIBUTES_H

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Simulator/Machine.h"
#include "soap/Simulator/Strategy.h"

namespace mlir {
namespace soap {

/// The machine attribute describing `machine` (rates in the attribute's
/// units; the intra-node topology is not representable and is dropped).
MachineAttr machineToAttr(MLIRContext *context, const ::soap::Machine &machine);
/// A machine from the attribute: point-to-point links inside a node, one NIC
/// per node; device spec from the attribute (tensor-core rate = fp32 rate).
::soap::Machine machineFromAttr(MachineAttr attr);

/// The config attribute of one node's config: a machine view when the
/// devices form an arithmetic progression, else an explicit list.
ParallelConfigAttr configToAttr(MLIRContext *context,
                                const ::soap::ParallelConfig &config);

/// Writes `strategy` onto the anchor op of every node (nodes without loops
/// run on one device and get no attribute).
void annotateStrategy(const ExtractedOpGraph &graph,
                      const ::soap::Strategy &strategy);

/// Reads the strategy from the anchor ops' `soap.config` attributes. A node
/// without one runs whole on device 0 when `allowMissing`, else it is an
/// error at the op.
FailureOr<::soap::Strategy> readStrategyFromIR(const ExtractedOpGraph &graph,
                                               bool allowMissing = false);

} // namespace soap
} // namespace mlir

#endif // SOAP_TRANSFORMS_STRATEGYATTRIBUTES_H
