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

def DumpGraph : Pass<"soap-dump-graph", "ModuleOp"> {
  let summary = "Print the op graph SOAP's simulator and search work on";
  let description = [{
    Extracts the compact op graph of the entry function (one node per layer:
    a linalg op with the elementwise chain after it, the fill that
    initializes it and the pads that feed it; tensors between nodes;
    parameters marked) and prints it to stdout: as text by default,
    `--soap-dump-graph=json` as JSON, `--soap-dump-graph=dot` as Graphviz.
    Fails with a located diagnostic where the function cannot be represented.
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false", "Print as JSON">,
    Option<"dot", "dot", "bool", /*default=*/"false", "Print as Graphviz">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
    Option<"group", "group", "bool", /*default=*/"true",
           "Group elementwise chains, fills and pads into their layer">,
  ];
}

def DecomposeAggregates : Pass<"soap-decompose-aggregates"> {
  let summary = "Decompose aggregated linalg ops (linalg.softmax) into "
                "the structured ops they stand for";
  let description = [{
    Ops that implement `linalg::AggregatedOpInterface`, such as
    `linalg.softmax` (what IREE and newer torch-mlir exports emit for a
    softmax), have no indexing maps: SOAP could neither partition them nor
    lower them. Their own `decomposeOperation` (upstream's, the one
    `transform.structured.decompose_interface` applies) rewrites them into
    fills and `linalg.generic` ops (a softmax: max, subtract and exp, sum,
    divide), which SOAP partitions, differentiates and lowers like any
    other. Run by `soap-import`.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect", "math::MathDialect"];
}

def LookupReductions : Pass<"soap-lookup-reductions"> {
  let summary = "Turn embedding gathers (tensor.extract of a row in a "
                "linalg.generic body) into one-hot select reductions";
  let description = [{
    torch-mlir exports an embedding lookup as a parallel `linalg.generic`
    over the ids whose body reads the table, captured from outside, with
    `tensor.extract %table[index_cast(%id), linalg.index ...]`. The table
    is then no operand: SOAP could not see it as a weight (train it, lift
    it from a constant) nor split it. Each such op (ids its one input, an
    all-parallel loop nest, the extract's indices the id once and loop
    indices otherwise, its value yielded) becomes the form SOAP's own
    models use, a reduction over the table's rows r that keeps the row
    whose index equals the id:

      out[p] = select(id[p] == r, table[..., r, ...], out[p]),  out = 0

    which the op graph sees as a lookup (cost of a gather), the training
    step differentiates (the table's gradient, which the lowering turns
    into atomic adds: `soap-scatter-lookup-gradients`), `--train` lifts and
    trains when the table is a constant, and the lowering turns back into
    a gather (`soap-gather-lookups`). (Split over its rows it is summed:
    vocabulary parallelism, see `getSplitCombiner`.) Ids out of range give
    zeros (the export asserted them in range: run after
    `soap-strip-asserts`, since a body with an assert is not matched).

    A read of a captured tensor at loop indices, some of them reversed
    (`(n - 1) - i`: torch-mlir's `aten.flip`, and the transposed and
    flipped filter of its transposed convolution), becomes a read of an
    operand too: plain dims through the loops, each reversed dim through a
    new reduction loop r that keeps the element where i + r = n - 1 (a
    one-hot sum from zeros), which the training step differentiates and
    the partitioner splits like any sum.

    A read at loop indices some of which are divided by a constant factor
    (`k floordiv s`: torch-mlir's nearest-neighbour upsampling by an
    integer factor, the loop covering whole blocks of s) becomes a read of
    an operand over the loops with each divided one split into (q, r),
    broadcast over r, and a `collapse_shape` of (q, r) back into k.

    Run by `soap-import` before the TOSA conversions, which would fold a
    gather from a splat table, and so before
    `soap-lift-constant-parameters`; and again after canonicalization,
    which makes a flip's `n - 1` (from `tensor.dim`) a constant.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect"];
}

def StripAsserts : Pass<"soap-strip-asserts"> {
  let summary = "Erase cf.assert ops (exporters' shape checks)";
  let description = [{
    torch-mlir exports guard shapes with `cf.assert`; once the shapes are
    static the asserts only pin values SOAP must partition. This pass erases
    them (canonicalization already folds the trivially true ones).
  }];
}

def SpreadStridedInserts : Pass<"soap-spread-strided-inserts"> {
  let summary = "Write strided tensor.insert_slice ops into splat tensors "
                "as reshapes and pads";
  let description = [{
    torch-mlir lowers a transposed convolution (ConvTranspose2d) to a
    stride-1 convolution over its input spread by the stride: a
    `tensor.insert_slice` with strides > 1 into a zero fill. SOAP partitions
    unit-stride slices only (a tile of a strided insertion is no box of the
    destination). Each such insertion into a splat tensor (a `linalg.fill`
    or a splat constant) becomes the same values built from ops it
    partitions: per strided dim an `expand_shape` (n -> n x 1), a
    `tensor.pad` of the unit dim to the stride and a `collapse_shape`
    (-> n * stride), cut to what fits, then one pad with the splat value to
    the offsets. Other insertions are left alone. Run by `soap-import`.
  }];
  let dependentDialects = ["tensor::TensorDialect", "arith::ArithDialect"];
}

def LiftConstantParameters : Pass<"soap-lift-constant-parameters",
                                  "ModuleOp"> {
  let summary = "Make the entry function's weight constants parameter "
                "arguments (trainable, initialized from their values)";
  let description = [{
    Exporters such as torch-mlir inline a model's weights as
    `arith.constant` tensors, which leaves a training step nothing to train.
    When the entry function has no parameter arguments (none marked
    `soap.parameter`, none found by the weight heuristic of the op-graph
    extraction), each floating-point `arith.constant` tensor of rank >= 1 in
    its body that some op reads as data (not only as the destination of a
    linalg op, such as an accumulator's zero init) becomes a new argument
    at the end of the argument list, marked `soap.parameter` and
    `soap.initial_value` (the constant's elements): each read of it reads
    the argument, the destination uses keep the constant. One argument per
    constant: the reads of one constant (an exporter's tied weights) stay
    one parameter, so run this before canonicalization when the exporter
    emitted equal weights separately. A splat constant read several times
    is the exception (`untie-splats`, on by default): equal values by
    chance (the zero biases and unit batch-norm scales of a freshly
    initialized model, which torch-mlir merges into one constant per
    shape) get one argument per read, located at the op that reads it.
    An inference-mode normalization's statistics stay constants (unless
    `train-statistics`): operands of a linalg op whose body reads them
    only as `(x - mean) * rsqrt(var + eps)` or `(x - mean) / sqrt(var +
    eps)` (the running mean and variance of torch-mlir's batch norm in an
    eval-mode export; its scale and shift are trained), as PyTorch's
    optimizer leaves a module's buffers alone.
    The executables soapc builds initialize such inputs from their
    `soap.initial_value` (soaprt_input_initial) instead of asking for data.
    Rank-0 constants (scalars such as an epsilon) and integer constants
    stay constants.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
    Option<"untieSplats", "untie-splats", "bool", /*default=*/"true",
           "One parameter per read of a splat constant read several times">,
    Option<"trainStatistics", "train-statistics", "bool",
           /*default=*/"false",
           "Lift inference-mode normalization statistics (running mean and "
           "variance) too">,
  ];
}

def RandomInputRanges : Pass<"soap-random-input-ranges", "ModuleOp"> {
  let summary = "Give each weight argument of the entry the range its "
                "random values come from (He-uniform, from its fan-in)";
  let description = [{
    The executables soapc builds fill the inputs they are given no data for
    with uniform random values (`--random-inputs=SEED`): in [-1, 1), or
    [0.5, 1.5) for rank-0 and rank-1 tensors (biases, normalization scales
    and running variances stay positive). Weights in [-1, 1) make a deep
    network's activations grow by about sqrt(fan-in / 3) per layer, so
    ResNet-101 or Inception-v3 overflow to inf / NaN and a run compares
    nothing. This pass marks each parameter argument of the entry
    (`soap.parameter`, or found by the op-graph extraction's weight
    heuristic) that a sum reduction reads as a weight (a matmul's or
    convolution's filter, possibly through transposes, broadcasts, reshapes
    and element-type conversions) with
    `soap.random_range = array<f64: -b, b>`, b = sqrt(6 / fan_in)
    (He-uniform: variance 2 / fan_in, which a relu halves), where fan_in is
    the product of the extents of the op's reduction loops that index the
    weight: C * KH * KW for an F x C x KH x KW filter, KH * KW for a
    depthwise one, K for a K x N (or, transposed, N x K) matmul weight.
    A weight read by several such ops takes the largest fan-in. An
    embedding table (a one-hot select, no sum) keeps the default.
    Integer arguments compared with a loop's index (`id == r`: an
    embedding lookup's ids against the table's rows, a label's one-hot
    over the classes) get `array<f64: 0, n>` for the fewest rows n they
    are compared with, so that every id selects a row (the default ids, in
    [0, 1000), miss a 50-row table 95% of the time and use 1000 of a 50k
    one). Arguments that have a `soap.initial_value` are filled from it
    and get no range. soap-cpu-entry turns the mark into a
    soaprt_input_random_range call, which `--random-inputs` then uses.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
}

def RescaleBatch : Pass<"soap-rescale-batch", "ModuleOp"> {
  let summary = "Rescale the batch dimension of the entry function";
  let description = [{
    Models are often exported with batch 1. This pass sets the batch to
    `batch`: the leading dimension of the entry function's data arguments
    (those not marked `soap.parameter`) is followed through the function
    (linalg indexing maps, pads, slices, reshapes, concatenations) and every
    tensor dimension it reaches is rescaled, including `tensor.empty` shapes,
    reshape shapes and the function's results. Fails with a diagnostic where
    the batch dimension cannot be identified or cannot be followed.

    An export with a symbolic batch size (torch-mlir's `dynamic_shapes`,
    JAX's shape polymorphism: data arguments `tensor<?x...>`) gets the
    static batch `batch` first: the arguments take it, upstream
    canonicalization carries it through the function (`tensor.dim` folds,
    `tensor.empty`, reshapes and linalg ops become static, the casts fold
    away) and the results take the static types. Only the leading dimension
    may be dynamic; an op still dynamic afterwards is a located error.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "New batch size (0: leave unchanged)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def SplitFusedProjections : Pass<"soap-split-fused-projections"> {
  let summary = "Compute each part of a fused projection that is read in "
                "parts (q, k and v of attention) by a matmul of its own";
  let description = [{
    GPT-2 computes attention's q, k and v with one matmul, `c_attn`, of
    3 x hidden columns, reshapes them to [B, S, 3, H, D] and slices q, k
    and v off (torch.split does the same on the columns). A partition
    splits a loop into contiguous blocks, so a split of those columns over
    4 devices gives device 0 the first 12 of q's 16 heads and device 1 the
    rest of q and half of k: Megatron's column-parallel projection, one
    group of heads per device with its q, k and v, cannot be expressed.

    Each slice of such a result becomes the tile of the ops that make it
    (upstream's TilingInterface, `generateResultTileValue`): one matmul per
    part on the weight's columns for it, and one bias add per part. A slice
    of an `expand_shape` of the result is first read as the slice of the
    result it is (the slices may cut the outermost dim of a reshaped group
    only). Applies where every reader of the result is such a slice, the
    slices cut one dim, disjoint, and that dim is the columns (N) of a
    contraction, through elementwise ops read by nothing else (the bias
    add); other slices (a recurrent model's time steps) are left. The parts
    are named after the op, `.0`, `.1`, ... Run by `soap-import` before
    soap-split-merged-batch-loops.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SplitMergedBatchLoops : Pass<"soap-split-merged-batch-loops"> {
  let summary = "Give a batch matmul one batch loop per dim its reshapes "
                "merged (batch x heads)";
  let description = [{
    Attention as exported (torch-mlir, the zoo's transformer) merges the
    batch and the heads into one dim for `linalg.batch_matmul`:
    `[B, H, S, D]` is collapsed to `[B * H, S, D]`. A partition splits a loop
    into contiguous blocks, so a split of that loop splits the samples; the
    heads (Megatron's attention, one group of heads per device) cannot be
    split apart. This pass folds such reshapes into the contraction by
    expanding its loops (upstream's fold-reshape-by-expansion patterns): the
    contraction becomes a `linalg.generic` with one batch loop per merged
    dim, reading the tensors before the collapse and writing the one after
    the expansion. Elementwise ops and reductions between two such
    contractions (the scores' scaling, mask and softmax) are expanded with
    them where a reshape joins them to an expanded op and the merged dims are
    parallel loops of theirs, so the heads stay a loop of their own from one
    contraction to the next.

    Only batch loops of contractions start an expansion: a reshape that
    merges a matmul's M, N or K dims (the tokens of a linear layer) is left,
    and so is an op whose result other ops read besides the expansion. The
    expanded op keeps the original op's discardable attributes
    (`soap.name`). Run by `soap-import` before the layers are named.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def ChangeFloatType : Pass<"soap-change-float-type", "ModuleOp"> {
  let summary = "Make every float of one type another (f32, bf16, f16)";
  let description = [{
    Every type of `from` in the module becomes `to`: element types (results, block
    arguments, function types), scalar constants (rounded to nearest even;
    infinities stay infinities) and dense constants, with upstream's
    `AttrTypeReplacer`. `soap-models --dtype=bf16` writes the zoo in bf16
    with it (from f32), and `scripts/diff-test.sh REFERENCE=f32` makes a
    16-bit model's f32 reference (to f32), which sums without rounding each
    partial sum to 16 bits.
  }];
  let options = [
    ListOption<"from", "from", "std::string",
               "The types replaced: f32, bf16, f16 (comma-separated)">,
    Option<"to", "to", "std::string", /*default=*/"\"bf16\"",
           "The type it becomes: f32, bf16 or f16">,
  ];
}

def AssignNames : Pass<"soap-assign-names", "ModuleOp"> {
  let summary = "Give every layer of the entry function a stable name";
  let description = [{
    Builds the op graph of the entry function, reporting what cannot be
    partitioned (errors) or runs replicated (remarks), and records each node's
    name as a `soap.name` attribute on its anchor op, so strategies written for
    a model apply to it again.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
}

def Simulate : Pass<"soap-simulate", "ModuleOp"> {
  let summary = "Predict the training-iteration time of a strategy";
  let description = [{
    Extracts the op graph of the entry function and simulates one training
    iteration (forward, backward, gradient synchronization, transfers) of a
    strategy on a machine, printing the predicted time, communication volume
    and peak memory per device to stdout.

    The strategy is the `soap.config` attributes on the layers
    (`strategy=annotated`, the default) or a named default (`data-parallel`,
    `single`). The machine is `machine=PRESET|FILE.json`, or the module's
    `soap.machine` attribute when no option is given.
  }];
  let options = [
    Option<"machine", "machine", "std::string", /*default=*/"\"\"",
           "Machine preset or JSON file (default: the module's soap.machine)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"annotated\"",
           "annotated | data-parallel | single">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
}

def Partition : Pass<"soap-partition", "ModuleOp"> {
  let summary = "Rewrite an annotated model into one SPMD program for all devices";
  let description = [{
    The entry function's layers carry `#soap.config`s (from `soapc
    --emit=mlir` or written by hand). The pass rewrites the function into one
    SPMD program that every rank runs (`soap.rank` is the device id):

    - each layer computes only its own tiles, inside `scf.if` on the rank:
      the anchor op is tiled through its TilingInterface (the grouped
      elementwise ops follow on the same output tile); data movement and
      replicated layers run whole on the tile's device, which then owns only
      its tile's output region;
    - before a tile runs, `soap.transfer` ops move exactly the input regions
      it reads that other devices hold (the region intersection of
      soap/Simulator/Region.h, which the simulator uses too);
    - a split reduction loop leaves partial results, combined by
      `soap.all_reduce` over the devices that share an output region (the
      other tiles of a reduction group start from the combiner's identity),
      or by `soap.reduce_scatter` where each of those devices reads at most
      its own equal chunk of the region afterwards (along a dimension that
      one loop indexes; half the traffic): each device then holds, and runs
      the layer's elementwise epilogue on, its chunk only;
    - a chain of sums, each only the init of the next (a weight's gradient
      accumulated over the time steps that share it), is combined once:
      every device keeps its own partial sums along the chain (a tile
      starts from what its device summed of its region so far, or from the
      identity), and the last sum all-reduces each region over the devices
      that summed part of it;
    - the function's results are gathered to rank 0.

    Every rank holds full-size tensors; only the regions it owns (or has
    received) are meaningful. Inputs and parameters are valid on every rank.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "Number of devices (default: from the module's soap.machine)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::soap::SOAPDialect"];
}

def FormCollectives : Pass<"soap-form-collectives", "func::FuncOp"> {
  let summary = "Turn transfers that gather a region on a group into "
                "soap.all_gather";
  let description = [{
    In a chain of `soap.transfer`s of one tensor (each the only use of the
    one before), the transfers that give every device of a group the chunks
    of a region that the others hold (the region cut along one dimension
    into equal chunks, one held by each device of the group, each sent to
    all the others) become one `soap.all_gather` (one NCCL collective
    instead of n (n - 1) sends and receives), where the last of them was.
    Left alone where a transfer of the chain between them writes into the
    region on a device of the group (the chunks sent could differ).
  }];
  let dependentDialects = ["::mlir::soap::SOAPDialect"];
}

def TrainingStep : Pass<"soap-training-step", "ModuleOp"> {
  let summary = "Turn the forward function into one training step "
                "(forward, backward, SGD update)";
  let description = [{
    Rewrites the entry function `f(args) -> results` into the training step
    `f(args, cotangents) -> (results, updated parameters)`: one cotangent
    argument per result (the loss is `L = sum_i <cotangent_i, result_i>`, so
    the cotangent is dL/d(result): a loss layer's gradient, or any seed), the
    backward ops after the forward ones (reverse-mode differentiation of the
    linalg / tensor ops), and `p - learning-rate * dL/dp` for every parameter.
    With `returns=gradients` the step returns dL/dx for every floating-point
    tensor argument instead (in argument order; gradient checks use it).
    With `returns=outputs` the step returns the forward results only and
    updates the parameters in place: each updated parameter is a result
    marked `soap.updates_input = i`, written over parameter argument #i
    where it is held after the step (soap-partition computes it on every
    device that holds a part of the parameter, from the gradient there), so
    repeated runs train.

    Backward ops are linalg ops too, so soap-partition partitions them:
    - the gradient of an operand of a linalg op is an op over the SAME loops
      (a loop that does not index the operand becomes a reduction), and it
      takes the forward op's `#soap.config` as it is (an elementwise op
      without one, fused after its layer's anchor, first takes the layout
      of the configured op it reads). Splitting the batch
      loop thus splits the weight gradient's reduction: partial sums and an
      all-reduce, FlexFlow's gradient synchronization, fall out of the
      partitioner's reduction splitting; the sums for an argument read by
      several ops (an RNN's shared weights) accumulate in one chain, each
      starting from the sum so far, so the partitioner combines them once;
      an operand read at constant indices (an LSTM's gate bias, one row per
      gate) has a gradient without those dims, which the op that sums the
      gradient's terms (or the SGD update itself) adds in at those indices
      only (`linalg.index` and `select`): the update reads each row's sum
      where its all-reduce left it, on every device that holds the
      parameter;
    - a convolution's or pooling's input gradient, which the forward loops
      cannot write without overlap, is a stride-1 convolution of the output
      gradient dilated by the stride (pooling: a reduction, per input
      element, over only the windows that hold it, with the input rows and
      columns split into blocks of the stride), with the forward config
      mapped onto its loops;
    - every other new layer follows the layout of the tensor it reads
      (same split, same devices), so it needs no transfer; one that reads
      no configured layer (the slices and zero fills of a concatenation's
      gradient), or whose producers' split leaves it
      whole on one device (a reshape of the sums of a split reduction, which
      every device of the group holds), takes the split its readers take
      of what it writes; blocks of a reshape's merged dims count.
    A constant padding that several linalg ops read (the image's zero
    padding, read by the first convolution and its filter gradient) becomes
    one pad per reader, grouped with it, so each tile pads the part it
    reads (a pad of its own could not follow a split of the convolution's
    output width and was made whole on one device).
    Configs are filled in only when the forward function has them.

    Each parameter's update comes right after the last op it waits for (its
    gradient's terms, every reader of the parameter and its views), not at
    the end of the step: soap-partition emits a layer where its last op
    stands and groups a weight's gradient with its update, so the backward
    pass then frees each layer's activations and gradients as it goes.

    Activation recomputation: a forward op marked `soap.recompute` (soapc
    marks every op of a layer whose strategy says `"recompute": true`) is
    read by the backward pass from a copy made right before its first
    reader there, with copies of the marked ops and the fills and empty
    tensors it reads; the forward values are then dead after the forward
    pass. Copies carry `soap.recomputed` (CSE keeps them apart) and their
    original's `soap.name` with ".recompute".

    Differentiable: linalg ops whose body is a sum, max, min or one-hot
    selection reduction of, or an elementwise expression (with one or more
    results) over, arith / math ops (add, sub, mul, div, neg, max, min,
    select, exp, log, tanh, erf, powf, sqrt, rsqrt, abs, casts), operands read at
    constant indices included, 2-D convolutions (NCHW and NHWC, depthwise,
    grouped; any stride and dilation), 1-D and 3-D convolutions (both
    layouts; any stride and dilation), dilation-1 NCHW and NHWC max and sum
    poolings (any stride), tensor.pad, extract_slice, insert_slice, concat
    and reshapes. Anything else on the
    path from a parameter to a result is a located error.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
    Option<"returns", "returns", "std::string", /*default=*/"\"parameters\"",
           "parameters (SGD-updated) | gradients (of every float argument) | "
           "outputs (the parameters updated in place)">,
    Option<"learningRate", "learning-rate", "double", /*default=*/"0.01",
           "SGD learning rate">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::soap::SOAPDialect"];
}

#endif // SOAP_TRANSFORMS_PASSES_TD
