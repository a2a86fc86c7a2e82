//===- SOAPOps.td - SOAP communication operations ----------*- tablegen -*-===//
//
// The partitioned program is SPMD: every rank (device) runs the same code,
// `soap.rank` tells it which device it is, and each communication op says
// which devices take part. The ops work on whole tensors that every rank
// holds; they move or combine one rectangular region of them.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPOPS_TD
#define SOAP_DIALECT_SOAP_IR_SOAPOPS_TD

include "soap/Dialect/SOAP/IR/SOAPAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class SOAP_Op<string mnemonic, list<Trait> traits = []>
    : Op<SOAP_Dialect, mnemonic, traits>;

/// Communication must neither be dropped nor reordered: every rank has to
/// issue the same messages in the same order.
def SOAP_CommResource : Resource<"::mlir::soap::CommunicationResource">;

def SOAP_RankOp : SOAP_Op<"rank", [Pure]> {
  let summary = "The device this rank of the SPMD program runs on";
  let description = [{
    ```mlir
    %r = soap.rank : index
    ```
  }];
  let results = (outs Index:$rank);
  let assemblyFormat = "attr-dict `:` type($rank)";
}

class SOAP_RegionOp<string mnemonic, list<Trait> traits = []>
    : SOAP_Op<mnemonic, !listconcat(traits, [
        AllTypesMatch<["input", "result"]>,
        MemoryEffects<[MemRead<SOAP_CommResource>, MemWrite<SOAP_CommResource>]>])> {
  code commonDecls = [{
    /// Number of elements of the region.
    int64_t getRegionVolume();
  }];
}

def SOAP_TransferOp : SOAP_RegionOp<"transfer"> {
  let summary = "Send one region of a tensor from one device to another";
  let description = [{
    On device `to`, the region `[offsets, offsets + sizes)` of the result
    holds device `from`'s values of that region of `input`; everywhere else
    (and on every other device) the result is `input`.

    ```mlir
    %1 = soap.transfer %0 [0, 32] [16, 32] from 2 to 5 : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes,
                       I64Attr:$from,
                       I64Attr:$to);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $offsets $sizes `from` $from `to` $to attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = commonDecls;
}

def SOAP_AllReduceOp : SOAP_RegionOp<"all_reduce"> {
  let summary = "Combine one region of a tensor across a group of devices";
  let description = [{
    On each of `devices`, the region `[offsets, offsets + sizes)` of the
    result is the elementwise `kind` (sum, max, min) of that region of `input`
    on all of `devices`; elsewhere the result is `input`. Partial sums of a
    split reduction loop are combined this way.

    ```mlir
    %1 = soap.all_reduce %0 [0, 0] [64, 64] sum devices [0, 4] : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes,
                       SOAP_ReductionKind:$kind,
                       DenseI64ArrayAttr:$devices);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $offsets $sizes $kind `devices` $devices attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = commonDecls;
}

def SOAP_ReduceScatterOp : SOAP_RegionOp<"reduce_scatter"> {
  let summary = "Combine one region across a group, each device keeping a chunk";
  let description = [{
    The region `[offsets, offsets + sizes)` is cut along dimension `dim`
    into as many equal chunks as there are `devices`, chunk i for the i-th
    of them. On each of `devices`, its chunk of the result is the
    elementwise `kind` (sum, max, min) of that chunk of `input` on all of
    `devices`, and the other chunks of the region hold unspecified values
    (the collective may use them as scratch); outside the region, and on
    other devices, the result is `input`. Half the traffic of an all-reduce
    of the region, for partial sums whose readers each need one chunk.

    ```mlir
    %1 = soap.reduce_scatter %0 [0, 0] [64, 64] sum dim 0 devices [0, 1] : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes,
                       SOAP_ReductionKind:$kind,
                       I64Attr:$dim,
                       DenseI64ArrayAttr:$devices);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $offsets $sizes $kind `dim` $dim `devices` $devices attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = commonDecls;
}

def SOAP_AllGatherOp : SOAP_RegionOp<"all_gather"> {
  let summary = "Give every device of a group every device's chunk of a region";
  let description = [{
    The region `[offsets, offsets + sizes)` is cut along dimension `dim`
    into as many equal chunks as there are `devices`, chunk i for the i-th
    of them. On each of `devices`, chunk i of the result holds the i-th
    device's values of that chunk of `input`; elsewhere (outside the
    region, on other devices) the result is `input`. What a transfer of
    each chunk from its device to every other one of the group does, as
    one collective.

    ```mlir
    %1 = soap.all_gather %0 [0, 0] [64, 64] dim 1 devices [0, 1, 2, 3] : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes,
                       I64Attr:$dim,
                       DenseI64ArrayAttr:$devices);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $offsets $sizes `dim` $dim `devices` $devices attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = commonDecls;
}

#endif // SOAP_DIALECT_SOAP_IR_SOAPOPS_TD
