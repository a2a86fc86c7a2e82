//===- Passes.td - SOAP passes -----------------------------*- tablegen -*-===//

#ifndef SOAP_TRANSFORMS_PASSES_TD
#define SOAP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintIterationSpaces : Pass<"soap-print-iteration-spaces"> {
  let summary = "Print the iteration space of every partitionable op";
  let description = [{
    For every operation with an iteration space (linalg ops and ops that
    implement TilingInterface), prints one line to stdout with the op's name,
    its location, and per loop its extent and kind: S (sample), A (attribute),
    P (parameter) or R (reduction), e.g.

    ```
    linalg.matmul loc("m.mlir":4:8) loops=3 [S:64, P:256, R:128]
    ```

    An op that has an iteration space with a dynamic extent shows `?`.
  }];
}

#endif // SOAP_TRANSFORMS_PASSES_TD
