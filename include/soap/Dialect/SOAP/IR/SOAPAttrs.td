//===- SOAPAttrs.td - SOAP attribute definitions -----------*- tablegen -*-===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPATTRS_TD
#define SOAP_DIALECT_SOAP_IR_SOAPATTRS_TD

include "soap/Dialect/SOAP/IR/SOAPDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def SOAP_ReductionKind : I32EnumAttr<"ReductionKind",
    "How partial results are combined", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
    ]> {
  let cppNamespace = "::mlir::soap";
}

class SOAP_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<SOAP_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// A double-precision quantity, written as a float or integer literal.
def SOAP_Real : APFloatParameter<"a double-precision quantity">;

def SOAP_MachineAttr : SOAP_Attr<"Machine", "machine"> {
  let summary = "A cluster of identical devices: nodes x devices per node";
  let description = [{
    The machine a strategy is made for. Rates use decimal units: TFLOP/s
    (10^12), GB/s (10^9 bytes per second); memory capacity is in GiB and
    latencies in microseconds.

    ```mlir
    #soap.machine<nodes = 4, devices_per_node = 4, peak_tflops = 9.3,
                  memory_gbps = 732.0, memory_gib = 16.0,
                  intra_gbps = 20.0, intra_latency_us = 1.0,
                  inter_gbps = 12.5, inter_latency_us = 5.0>
    ```
  }];
  let parameters = (ins
    "int64_t":$nodes,
    "int64_t":$devices_per_node,
    SOAP_Real:$peak_tflops,
    SOAP_Real:$memory_gbps,
    SOAP_Real:$memory_gib,
    SOAP_Real:$intra_gbps,
    SOAP_Real:$intra_latency_us,
    SOAP_Real:$inter_gbps,
    SOAP_Real:$inter_latency_us
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Total number of devices (nodes x devices per node).
    int64_t getNumDevices() const { return getNodes() * getDevicesPerNode(); }
    /// The quantities as doubles.
    double getPeakFlops() const { return getPeakTflops().convertToDouble() * 1e12; }
    double getMemoryBandwidth() const { return getMemoryGbps().convertToDouble() * 1e9; }
    double getMemoryBytes() const { return getMemoryGib().convertToDouble() * 1073741824.0; }
  }];
}

def SOAP_ParallelConfigAttr : SOAP_Attr<"ParallelConfig", "config"> {
  let summary = "How one operation is partitioned and where its tiles run";
  let description = [{
    `degrees` has one partition degree per loop of the annotated operation's
    iteration space; the operation is cut into `product(degrees)` tiles,
    numbered row-major over the loops. Tile `i` runs on device
    `start + i * stride` (a machine view; `start` defaults to 0 and `stride`
    to 1, and both are omitted when they have their default), or on
    `devices[i]` when an explicit list is given.

    ```mlir
    #soap.config<degrees = [4, 1, 1]>                           // devices 0..3
    #soap.config<degrees = [2, 2, 1], start = 8, stride = 2>   // 8, 10, 12, 14
    #soap.config<degrees = [1, 2, 1], devices = [3, 1]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "partition degree per loop">:$degrees,
    "int64_t":$start,
    "int64_t":$stride,
    ArrayRefParameter<"int64_t", "explicit device per tile (empty: use the view)">:$devices
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$degrees,
                     CArg<"int64_t", "0">:$start, CArg<"int64_t", "1">:$stride), [{
      return $_get($_ctxt, degrees, start, stride, ::llvm::ArrayRef<int64_t>());
    }]>,
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$degrees,
                     "::llvm::ArrayRef<int64_t>":$devices), [{
      return $_get($_ctxt, degrees, 0, 1, devices);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let extraClassDeclaration = [{
    /// Number of tiles: the product of the degrees.
    int64_t getNumTiles() const;
    /// Device of tile `tile` (row-major tile index).
    int64_t getDeviceOfTile(int64_t tile) const;
    /// Devices of all tiles, in tile order.
    ::llvm::SmallVector<int64_t> getTileDevices() const;
    /// True when the devices are given as an explicit list.
    bool hasExplicitDevices() const { return !getDevices().empty(); }
  }];
}

#endif // SOAP_DIALECT_SOAP_IR_SOAPATTRS_TD
