//===- SOAPDialect.td - SOAP dialect definition ------------*- tablegen -*-===//
//
// The SOAP dialect describes how a DNN training step is parallelized: the
// machine it runs on and, per operation, how the operation's iteration space
// is partitioned (Sample / Attribute / Parameter / Reduction loops) and on which
// devices (Operation placement) each tile runs.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPDIALECT_TD
#define SOAP_DIALECT_SOAP_IR_SOAPDIALECT_TD

include "mlir/IR/OpBase.td"

def SOAP_Dialect : Dialect {
  let name = "soap";
  let cppNamespace = "::mlir::soap";
  let summary = "Parallelization strategies in the SOAP space (FlexFlow)";
  let description = [{
    Attributes that describe a machine (`#soap.machine`) and the parallel
    configuration of one operation (`#soap.config`): a partition degree for
    each loop of the operation's iteration space and the device of each tile.

    Discardable attributes understood by the dialect:
    - `soap.machine` on a module: the machine the program is parallelized for;
    - `soap.parameter` (unit) on a function argument: the argument is a
      trained parameter (weight), whatever position it is used in;
    - `soap.initial_value` (elements) on a function argument: the value
      the executable gives the argument when no data is supplied for it (a
      weight lifted from a constant by soap-lift-constant-parameters); its
      element type and shape are the argument's (the shape of the whole
      argument when the argument is a region of it, `soap.region_offsets`);
    - `soap.name` (string) on an operation: its stable name in strategies and
      reports;
    - `soap.config` on an operation with an iteration space (linalg /
      TilingInterface): how that operation is partitioned and placed. It is
      checked against the operation (one degree per loop, each dividing its
      loop's extent) and against the enclosing machine (devices that exist);
    - `soap.rank_function` (integer d) on a function: the entry function as
      device d runs it (made by soap-specialize-ranks);
    - `soap.region_offsets` (i64 array) on an argument of such a function:
      the argument is the region of the entry's argument that starts at
      these offsets (made by soap-compact-tensors; one per dimension); on a
      result that updates an argument in place, the same for the part of
      the new value the function returns;
    - `soap.updates_input` (integer i) on a result of the entry function:
      the result is the new value of argument #i (same type), written over
      it where it is held after each run instead of being returned (a
      training step's parameters updated in place; soap-training-step
      `in-place`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute that holds an op's parallel config.
    static constexpr ::llvm::StringLiteral kConfigAttrName = "soap.config";
    /// Name of the discardable attribute that holds the target machine.
    static constexpr ::llvm::StringLiteral kMachineAttrName = "soap.machine";
    /// Name of the unit argument attribute that marks a weight.
    static constexpr ::llvm::StringLiteral kParameterAttrName = "soap.parameter";
    /// Name of the elements argument attribute that holds an argument's
    /// initial value (a weight lifted from a constant).
    static constexpr ::llvm::StringLiteral kInitialValueAttrName =
        "soap.initial_value";
    /// Name of the `array<f64: low, high>` argument attribute that gives
    /// the range an input's random values come from (soaprt's
    /// --random-inputs; soap-random-input-ranges).
    static constexpr ::llvm::StringLiteral kRandomRangeAttrName =
        "soap.random_range";
    /// Name of the unit attribute that asks the training step to compute
    /// an op's results again for the backward pass instead of keeping them
    /// from the forward pass (activation recomputation).
    static constexpr ::llvm::StringLiteral kRecomputeAttrName =
        "soap.recompute";
    /// Name of the unit attribute on the training step's copies of
    /// recomputed ops (it also keeps CSE from merging them back).
    static constexpr ::llvm::StringLiteral kRecomputedAttrName =
        "soap.recomputed";
    /// Name of the string attribute that holds an op's stable name.
    static constexpr ::llvm::StringLiteral kNameAttrName = "soap.name";
    /// Name of the integer attribute that marks a function as the entry
    /// as one rank runs it.
    static constexpr ::llvm::StringLiteral kRankFunctionAttrName =
        "soap.rank_function";
    /// Name of the argument attribute that places an argument of a rank
    /// function in the entry's argument.
    static constexpr ::llvm::StringLiteral kRegionOffsetsAttrName =
        "soap.region_offsets";
    /// Name of the result attribute that makes an entry result the new
    /// value of an argument (updated in place).
    static constexpr ::llvm::StringLiteral kUpdatesInputAttrName =
        "soap.updates_input";
    /// Name of the `array<i64>` result attribute, beside
    /// `soap.updates_input`, that lists where the new value's parts are:
    /// per part its device, offsets and sizes (one each per dimension, in
    /// the whole value). Given where a device holds several parts and
    /// elements between them are stale there (soap-partition).
    static constexpr ::llvm::StringLiteral kHeldPartsAttrName =
        "soap.held_parts";

    /// The number of devices of the machine in effect for `op` (the
    /// `soap.machine` of `op` or of its nearest ancestor that has one); 1
    /// without a machine.
    static int64_t getNumDevices(::mlir::Operation *op);

  private:
    void registerAttributes();
    void registerOps();
  public:
  }];
}

#endif // SOAP_DIALECT_SOAP_IR_SOAPDIALECT_TD
