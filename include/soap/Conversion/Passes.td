//===- Passes.td - SOAP conversion passes ------------------*- tablegen -*-===//
//
// The passes of soap-lower-to-cuda (LowerToCUDA.h has the whole pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_CONVERSION_PASSES_TD
#define SOAP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeRanks : Pass<"soap-specialize-ranks", "ModuleOp"> {
  let summary = "One function per rank for an SPMD program";
  let description = [{
    The SPMD program of soap-partition is one function that every rank runs,
    each layer's tiles inside `scf.if (rank == d)`. This pass clones the
    entry once per device of the module's `soap.machine` (`NAME__rank<d>`,
    private), keeping only what that rank runs: `soap.rank` becomes the
    constant d (the clone is marked `soap.rank_function = d`), the
    branches of `scf.if`s that test the rank are resolved,
    and `soap.transfer` / `soap.all_reduce` ops that do not involve d become
    their input. The entry itself then calls its rank's clone
    (`scf.index_switch` on `soap.rank`).

    Each function is then about 1/N of the program, which the later passes
    need: one-shot bufferization's alias analysis is quadratic in a
    function's in-place writes, and across the other ranks' branches (which
    all write the same full-size tensors) it had to give up writing tiles in
    place and copied them. A program without `soap.rank`, or for one
    device, only gets the constant rank.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Entry function (default: the public function no other calls)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def BubbleUpSlices : Pass<"soap-bubble-up-slices", "func::FuncOp"> {
  let summary = "Reshape and pad only the part of a tensor a rank reads";
  let description = [{
    The training step computes some gradients through shape ops on a whole
    tensor: a strided convolution's or pooling's output gradient is spread
    (`tensor.expand_shape`, `tensor.pad` with the stride's zeros,
    `tensor.collapse_shape`) before the op's tiles read their parts of it.
    After soap-specialize-ranks a rank's function still spreads the whole
    tensor (under data parallelism over N ranks: N times its batch slice,
    in memory and in work) and soap-compact-tensors cannot shrink it, as
    those ops use the tensor whole.

    Each `tensor.extract_slice` of such an op's result moves above it
    (upstream's bubble-up patterns for expand_shape and collapse_shape,
    linalg's extract_slice swaps with pad (static sizes) and fill, and its
    bubble-up through elementwise ops, only those: through windowed or
    flipped indexing maps a slice's operands could start before the
    tensor; and a copy that reverses some dims, a convolution's filter
    flipped for its input gradient, whose slice is the copy of the slice of
    the filter it reads: so a rank holds, and updates in place, only its
    part of a parameter), consecutive slices merge, and a slice of an insert_slice of the
    same region folds to the inserted value: the rank reshapes, pads and
    computes only its part, which soap-compact-tensors then sizes the tensor
    to. Identical slices of one value are merged between rounds (the linalg
    pattern moves only a slice that is its op's one user). Values are
    unchanged.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def CompactTensors : Pass<"soap-compact-tensors", "ModuleOp"> {
  let summary = "Size each tensor of a rank's function to the part it uses";
  let description = [{
    soap-partition keeps every tensor at its full size on every rank, and
    each rank writes and reads only its tiles' regions of it (through
    tensor.insert_slice / tensor.extract_slice, soap.transfer and
    soap.all_reduce at constant offsets). After soap-specialize-ranks a
    rank's function is only that rank's accesses, so each tensor can shrink
    to the bounding box of the regions its function touches: data
    parallelism over N ranks then holds 1/N of each activation per rank,
    not all of it.

    A tensor is a `tensor.empty` of static shape and the values made from
    it by those ops (insert_slice into it, transfer, all_reduce). It is
    resized, and the offsets of every access shifted, only when every use
    of every such value is one of those accesses with static offsets,
    sizes and strides; any other use (a whole-tensor operand, a return, a
    region's yield) keeps the tensor whole. The values outside the box are
    never read, so the program computes the same; the region a transfer or
    an all-reduce moves is the same number of elements at each end, placed
    by each rank's own offsets.

    The arguments of a rank function (`soap.rank_function`, private, only
    called) shrink the same way: each becomes the part of the entry's
    argument the rank reads, its `soap.region_offsets` says where that part
    starts, and each call passes an extract_slice of it. The CPU and CUDA
    entry points then bind only that part of the input on that rank (a
    weight split over N ranks: 1/N of it on each).

    A rank function's result marked `soap.updates_input` (an in-place
    update of an argument) is the one return that does not keep a tensor
    whole: it shrinks with the tensor it is a value of (a parameter updated
    where it is held: the same part as the argument; an update the rank
    does not compute: nothing), gets `soap.region_offsets` too, and the
    function's result type and each caller follow (the caller puts the part
    back into a whole value at its offsets).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def Bufferize : Pass<"soap-bufferize", "ModuleOp"> {
  let summary = "One-shot bufferization of a (partitioned) program, bounded "
                "in time";
  let description = [{
    One-shot module bufferization with identity layouts at function
    boundaries (the entry takes and returns contiguous buffers). Its alias
    analysis is quadratic in the in-place writes of a function; an SPMD
    program of a large unrolled model (thousands of tile inserts and
    transfers) would take hours. A function with more in-place writes
    (tensor.insert_slice, soap.transfer, soap.all_reduce) than
    `max-analyzed-writes` is bufferized without the analysis: a copy before
    every write (correct, more memory traffic); a remark says so.
  }];
  let options = [
    Option<"maxAnalyzedWrites", "max-analyzed-writes", "int64_t",
           /*default=*/"1000",
           "Functions with more in-place writes skip the alias analysis">,
  ];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "memref::MemRefDialect"];
}

def DeallocAfterLastUse : Pass<"soap-dealloc-after-last-use", "func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Upstream's ownership-based buffer deallocation frees a block's buffers
    at the end of the block, so a straight-line forward pass holds every
    activation it ever made until it returns: the peak is the sum of all of
    them. This pass moves each `memref.dealloc` of a buffer allocated in
    the same block up to just after the last op of the block that uses the
    buffer or a view of it (subview, reshape, cast; a use inside a nested
    region counts as its op's). The device pool (libsoaprt's stream-ordered
    allocator) and the host allocator then reuse the memory for later
    layers.

    A buffer stays where it is freed if a use may keep it alive past the
    op: a terminator (return, yield), a store of it or of its address, an
    op that makes another memref of it that is not a view, or a call of a
    function the module defines (it may return the buffer). Calls of
    declarations (libsoaprt) only use a buffer while they run.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SimplifyDeallocations
    : Pass<"soap-simplify-deallocations", "func::FuncOp"> {
  let summary = "Upstream's dealloc simplification, bounded in time";
  let description = [{
    Runs upstream's `buffer-deallocation-simplification` on a function
    unless its `bufferization.dealloc` ops list more than `max-memrefs`
    buffers in all. The simplification compares the buffers of a dealloc
    pairwise; a partitioned unrolled RNN bufferized with a copy before every
    write (soap-bufferize) has one dealloc of ~15,000 buffers per rank
    function, which it did not finish in 20 minutes. Without it the
    deallocs are lowered as they are (correct; freed at the end of the
    function). A remark says so. soap-lower-to-cpu and soap-lower-to-cuda
    use this in place of the pipeline's simplification
    (buildDeallocationPipeline, LowerToCPU.h).
  }];
  let options = [
    Option<"maxMemrefs", "max-memrefs", "int64_t", /*default=*/"2000",
           "Functions whose deallocs list more buffers are not simplified">,
  ];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "memref::MemRefDialect"];
}

def ScalarAccumulators : Pass<"soap-scalar-accumulators", "func::FuncOp"> {
  let summary = "Keep the accumulator of a reduction loop in a register";
  let description = [{
    Loops made from linalg reductions load the output element, combine and
    store it back on every iteration. Where every store of an `scf.for`
    writes one element of its own buffer at loop-invariant indices, the loop
    loads that element once before the store, and nothing else in the loop
    touches the buffer (one such accumulator per output of a multi-output
    reduction), each element is loaded once before the loop, carried as an
    iteration argument and stored once after it
    (innermost loops first, so a window reduction's loop nest collapses to
    one load and one store). Linalg ops do not alias outputs with inputs they
    read at other indices, so the order of the arithmetic and the results are
    unchanged.
  }];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect"];
}

def GatherLookups : Pass<"soap-gather-lookups", "func::FuncOp"> {
  let summary = "Turn one-hot select reductions (embedding lookups) into "
                "gathers";
  let description = [{
    Models written in linalg express an embedding lookup as a reduction
    over the table's rows that keeps the row whose index matches the id:

      out[p] = select(id[p] == r, table[..., r, ...], out[p])  over r < V

    which reads the whole table for every output element (rnntc, batch 64:
    2,621,440 outputs x 20,000 rows). On tensors, each such
    `linalg.generic` (one reduction loop r; the id an integer input that
    does not depend on r; the table an input read through plain loop
    dimensions, r among them) becomes a parallel op over the other loops
    that reads the one row with `tensor.extract`:

      out[p] = 0 <= id[p] < V ? table[..., id[p], ...] : out[p]

    the same result (an id out of range matches no row). Run after
    partitioning (rank functions). A tile of a lookup split over the rows
    (vocabulary parallelism: rows [o, o + V) of the table) compares with
    `r + o` (an `affine.apply` or `arith.addi` of the index, as upstream
    tiling offsets it) and reads row `id - o` where `o <= id < o + V`.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def ScatterLookupGradients
    : Pass<"soap-scatter-lookup-gradients", "func::FuncOp"> {
  let summary = "Turn an embedding table's gradient (a select sum over the "
                "ids) into atomic adds of each id's gradient row";
  let description = [{
    The training step differentiates an embedding lookup (see
    `soap-gather-lookups`) into a sum over every position of the ids for
    each row of the table's gradient:

      dT[..., v, ...] += select(id[p] == v, dY[p, ...], 0)  over p

    which reads all the ids and gradients for every row (transformer, batch
    4: 51 M outputs x 4,096 positions). On buffers, each such
    `linalg.generic` (the row loop v parallel and in the output only, the id
    an integer input and the gradient a float input that do not depend on
    v) becomes an `scf.parallel` over the other loops that adds each
    gradient element to its id's row with `memref.atomic_rmw addf` (ids out
    of [0, V) add nothing, as before; a tile of rows [o, o + V), whose row
    index is offset, adds ids in that range to row `id - o`): on the GPU a
    kernel of atomic adds,
    on the CPU a loop. The sums of a row then run in another order (not
    bitwise reproducible on the GPU).
  }];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def OutlineLoopNests : Pass<"soap-outline-loop-nests", "ModuleOp"> {
  let summary = "Give each outermost loop nest a function of its own";
  let description = [{
    LLVM's optimizer and code generator take time that grows faster than
    linearly with the size of a function, and a zoo model's training step
    lowered for the CPU is one function of thousands of loop nests
    (inception_v3, batch 1: 8.5 minutes of LLVM code generation). Each
    outermost `scf.for` of a function becomes a private function, called
    where the loop was, with internal linkage and marked `noinline` (LLVM
    `passthrough`) so that LLVM keeps it apart: the values the nest uses from above become its
    arguments, constants are cloned into it. The loops, their order and the
    arithmetic are unchanged. Loops that contain a call (to the runtime) are
    left in place. A nest that is one outlined before but for its
    locations (the same loops, arithmetic, constants and argument types:
    another rank's copy of a layer in a data-parallel program, a repeated
    block of a network) calls that function instead, so LLVM compiles it
    once.
  }];
  let dependentDialects = ["func::FuncDialect", "LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numShared", "shared-nests",
              "Loop nests that call a function outlined before">
  ];
}

def MergeRankFunctions : Pass<"soap-merge-rank-functions", "ModuleOp"> {
  let summary = "Rank functions that differ only in constants become one "
                "function";
  let description = [{
    On the LLVM dialect, at the end of both lowerings. `soap-specialize-ranks`
    gives every rank a function of its own (its tiles' shapes, its peers),
    and a data-parallel program's ranks after the first differ only in a
    few constants: their offsets into the inputs, their rank in each
    communication. LLVM would compile every copy (64 ranks: 64 copies).
    First, internal functions that call nothing and are only called
    directly (the outlined loop nests) and are the same but for the globals of `llvm.mlir.addressof`
    ops and the offsets of one-index GEPs (a zero fill of a rank's part of
    an output) become one internal function `<first>_merged` with an
    argument for each such value that differs between them (a GEP's offset
    becomes a dynamic index; a nest's loop bounds stay constants), and
    their calls call it with their values. Then the rank functions
    (`soap_model_function`) that are the same but for those and the values
    of `llvm.mlir.constant` ops become one such function, and each rank
    function keeps its name and calls it with its own values.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numMergedNests", "merged-nests",
              "Internal functions replaced by a merged function">,
    Statistic<"numMerged", "merged-functions",
              "Rank functions that call a merged function">
  ];
}

def CUDAFuseElementwise : Pass<"soap-cuda-fuse-elementwise"> {
  let summary = "Fuse each elementwise group into one linalg op (one kernel)";
  let description = [{
    Runs upstream linalg elementwise fusion on tensors, so that a chain of
    elementwise ops (bias add, activation, normalization arithmetic) becomes
    one `linalg.generic`, which the CUDA lowering turns into one kernel.
    Producers are never fused into contractions or convolutions: those stay
    recognizable for cuBLAS and cuDNN. A producer read by several ops (an
    activation the backward pass reads again) is fused into its first
    elementwise reader with the same loops when every other reader comes
    later: the fused op yields the producer's value as a second result, which
    the later readers take (upstream's pattern fuses only single-use
    producers without computing them twice).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def CUDAFuseSiblingReductions : Pass<"soap-cuda-fuse-sibling-reductions"> {
  let summary = "Reductions over the same loops that read the same tensor "
                "become one op with several outputs (one pass over it)";
  let description = [{
    On tensors: two `linalg.generic` reductions (sum / max / min combiners)
    with the same loops, the same iterator types and the same output map
    that read a common input through the same map, neither depending on the
    other, become one op computing both, in the later one's place (the
    earlier one's results may have no user before it). A batch norm's scale
    and bias gradients (sum of dY * X and sum of dY per channel) then read
    dY once in one kernel instead of twice in two; a residual block's two
    batch norms that read the same dY give one op of four outputs. Ops that
    soap-cuda-library-calls gives to cuBLAS / cuDNN are left alone.
    soap-cuda-split-reductions and soap-scalar-accumulators take the
    merged op (one accumulator per output).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def CUDASplitReductions : Pass<"soap-cuda-split-reductions"> {
  let summary = "Give reductions with few outputs more threads, and make "
                "threads read consecutive elements: partial results in "
                "parallel, then their reduction";
  let description = [{
    A generated kernel runs one thread per output element and each thread
    reduces sequentially, so a reduction with few outputs and a long
    reduction (a bias or scale gradient: one output per channel, reducing
    over batch and image) leaves the GPU nearly idle. On tensors, a
    `linalg.generic` with fewer than `min-threads` outputs, a sum / max /
    min combiner and at least `min-reduction` reduced elements per output
    becomes two ops: the first makes reduction loops parallel and writes
    partial results, starting from the combiner's identity; the second
    combines the partials into the original output (with its start value,
    whose fill is moved right before it so that both run in one kernel),
    and is split again when it is still long: a reduction tree. First the
    reduction loop that indexes the largest input's innermost (contiguous)
    dimension, interleaved: element = outer * F + inner, the inner part
    parallel and the new op's last loop, so that consecutive threads read
    consecutive elements (F a divisor of the loop, a multiple of 8 where one
    is); reduction loops that every operand reads as one contiguous run of
    dimensions (an NCHW image's rows and columns) are merged into that loop
    first (the operands reshaped), so that F can exceed a row; then the
    other reduction loops, outermost first (a loop too long
    for the target is split into an outer parallel and an inner reduction
    loop). At most `max-threads` partials, and each thread of the first op
    reduces at least `min-per-thread` elements. A reduction with enough
    outputs whose contiguous loop is a reduction (each thread would read a
    run of its own: a softmax row) is split by one 32-byte sector's worth of
    that loop (8 f32), interleaved the same way. Contractions and filter
    gradients that soap-cuda-library-calls gives to cuBLAS / cuDNN are left
    to them; other multiply-adds (a scale gradient, sum of dY * X per
    channel) are split like any sum. An op with several outputs through one
    map (soap-cuda-fuse-sibling-reductions) is split as one: partials and
    combination get an output per output, each from its own identity.
  }];
  let options = [
    Option<"minThreads", "min-threads", "int64_t", /*default=*/"16384",
           "Split reductions with fewer outputs than this">,
    Option<"maxThreads", "max-threads", "int64_t", /*default=*/"65536",
           "The most partial results (threads of the first op)">,
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"256",
           "Only reductions of at least this many elements per output">,
    Option<"minPerThread", "min-per-thread", "int64_t", /*default=*/"16",
           "Elements each thread of the first op still reduces, at least">,
  ];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect"];
}

def CPULibraryCalls : Pass<"soap-cpu-library-calls", "ModuleOp"> {
  let summary = "Turn matmul-like and convolution ops on buffers into "
                "OpenBLAS calls of libsoaprt (the CPU target)";
  let description = [{
    On bufferized code: every contraction with one M, one N, one K and at
    most one batch dimension whose operands are all f32 or all f64
    (linalg.matmul, linalg.batch_matmul, transposed variants, generics whose
    body is a multiply-add) becomes a call of `soaprt_cpu_matmul_f32` /
    `_f64` (libsoaprt_blas.a: a CBLAS sgemm / dgemm per batch) on rank-2/3
    strided views of its operands in (batch, M, K) / (batch, K, N) /
    (batch, M, N) order (memref.transpose, no copies); the runtime picks the
    transpose flags and leading dimensions from the strides. Every f32 or
    f64 2-D convolution (NCHW or NHWC, grouped) becomes a call of
    `soaprt_cpu_conv2d_f32` / `_f64`, and the filter gradient
    soap-training-step writes (a linalg.generic over the forward loops) one
    of `soaprt_cpu_conv2d_filter_grad_f32` / `_f64`, with the strides,
    dilations, padding and groups, on 4-D views of the operands in NCHW /
    FCHW order (the views soap-cuda-library-calls gives cuDNN); the runtime
    computes them as im2col + GEMM per image and group. The input gradient
    soap-training-step writes (a stride-1 convolution of the spread,
    zero-padded dY with the flipped filter) becomes one call of
    `soaprt_cpu_conv2d_input_grad_f32` / `_f64` on W and dY as they are
    (GEMM + col2im: no flipped filter, no spread copy, no products with its
    zeros), computing only the part of dX that is read; a zero-padded input
    that only convolutions and filter gradients read becomes their calls'
    padding. These three are the lowering soap-cuda-library-calls does for
    cuDNN (lib/Conversion/LibraryCallLowering.h). Depthwise convolutions (one
    channel and one filter per group) and their gradients are calls too; the
    runtime computes them by direct loops along output rows (their GEMMs
    would have one row: 6x slower than loops). Each call accumulates into the
    output, as the op does; a zero fill of the output right before it
    becomes the call's overwrite flag (beta = 0). The op's name (soap.name,
    or its kind and location) travels as a string for error messages.
    Mixed-type and 16-bit ops stay loops. soapc runs it (`--cpu-blas`, on
    where the build found OpenBLAS).
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "LLVM::LLVMDialect", "arith::ArithDialect"];
}

def CUDALibraryCalls : Pass<"soap-cuda-library-calls", "ModuleOp"> {
  let summary = "Turn matmul-like and convolution ops on buffers into "
                "cuBLAS / cuDNN calls of libsoaprt";
  let description = [{
    On bufferized code: every f32 contraction with one M, one N, one K and at
    most one batch dimension (linalg.matmul, linalg.batch_matmul, transposed
    variants, generics whose body is a multiply-add) becomes a call of
    `soaprt_cuda_matmul_f32` on rank-2/3 strided views of its operands in
    (batch, M, K) / (batch, K, N) / (batch, M, N) order (memref.transpose,
    no copies; bf16 / f16 operands: the _bf16, _f16, _bf16_f32, _f16_f32
    variants); every 2-D convolution (any layout, grouped, depthwise) becomes
    a call of `soaprt_cuda_conv2d_<f32|bf16|f16>`, its filter gradient one of
    `..._filter_grad_...` and its input gradient one of `..._input_grad_...`
    on cuDNN's 4-D views, with the strides, dilations, padding (a zero-padded
    input read only by these calls is never made) and groups: the lowering
    soap-cpu-library-calls shares (lib/Conversion/LibraryCallLowering.h).
    Every call accumulates into the output, as the linalg ops do; a zero
    fill right before it becomes the overwrite flag. The op's name (soap.name, or its
    kind and location) travels as a string for error messages. Anything else
    is left for generated kernels.
  }];
  let options = [
    Option<"allowTF32", "allow-tf32", "bool", /*default=*/"false",
           "Let cuBLAS and cuDNN use TF32 tensor cores for fp32">,
  ];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "LLVM::LLVMDialect", "arith::ArithDialect"];
}

def CUDALoopOrder : Pass<"soap-cuda-loop-order", "func::FuncOp"> {
  let summary = "Put every linalg op's parallel loops outside its reduction "
                "loops";
  let description = [{
    Interchanges the loops of linalg ops so that all parallel loops come
    first (in their order) and the reduction loops last: the parallel loops
    become the kernel's threads and each thread runs the reductions of its
    output element in the original order.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def CUDACollapseDims : Pass<"soap-cuda-collapse-dims", "func::FuncOp"> {
  let summary = "Merge the contiguous loops of elementwise ops (less index "
                "arithmetic in their kernels)";
  let description = [{
    A kernel recovers every loop index from its flat thread index with a
    division and a remainder per loop. For each all-parallel
    `linalg.generic` or `linalg.copy` (the elementwise groups), adjacent
    loops that every operand reads as one contiguous run of memory are
    merged (upstream `collapseOpIterationDims`, operands reshaped with
    `memref.collapse_shape`): an elementwise op on whole tensors becomes one
    loop and needs no division at all; a per-channel broadcast over NCHW
    keeps N and C apart and merges H and W. Run before
    `convert-linalg-to-parallel-loops`.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect"];
}

def CUDAFuseParallelLoops
    : Pass<"soap-cuda-fuse-parallel-loops", "func::FuncOp"> {
  let summary = "Fuse adjacent scf.parallel loops with the same bounds "
                "(one kernel), past the frees between them";
  let description = [{
    Upstream `scf-parallel-loop-fusion` (`scf::naivelyFuseParallelOps`,
    with the alias analysis its pass uses) fuses adjacent `scf.parallel`
    loops with the same bounds when the second reads what the first wrote
    only at the same index, but stops at any op with memory effects between
    them, and soap-dealloc-after-last-use frees each buffer right after its
    last use: between a reduction's combination and the parameter update
    that reads it, or between two updates of the same shape, sits a
    `memref.dealloc`. Such frees move after the next loop first (a free
    moves later only, so nothing uses the buffer after it is freed; the
    buffer lives one kernel longer), only where the loops before and after
    have the same bounds. A batch norm's scale and bias gradients'
    combination and their two SGD updates become one kernel.
  }];
  let dependentDialects = ["scf::SCFDialect", "memref::MemRefDialect"];
}

def CUDAMapLoops : Pass<"soap-cuda-map-loops", "func::FuncOp"> {
  let summary = "Map each outermost scf.parallel nest onto a 1-D grid of "
                "thread blocks";
  let description = [{
    Collapses every outermost `scf.parallel` into one dimension, tiles it by
    the block size and maps the tiles to blocks (x) and the elements to
    threads (x); nested parallel loops run sequentially in their thread.
    `convert-parallel-loops-to-gpu` then makes one `gpu.launch` per nest.

    First, in the functions soap_main calls (`soap_model_function`, whose
    buffers live in device memory), each maximal run of host work between
    the nests (buffer loads and stores, sequential `scf.for` loops over
    them and pure ops: a one-element tile's update whose loop of one
    iteration canonicalization folded, a reduction to one element, an op
    with no loops) becomes a one-iteration `scf.parallel` mapped to one
    block of one thread. Pure values the host uses after the run are
    copied into it; a run whose loaded value the host reads, and buffers of
    `index` elements or handed to a function other than libsoaprt's (the
    deallocation helper's lists), stay on the host.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "affine::AffineDialect", "arith::ArithDialect"];
}

def CUDACopies : Pass<"soap-cuda-copies", "func::FuncOp"> {
  let summary = "Turn memref.copy into linalg.copy (a generated kernel)";
  let description = [{
    Copies between device buffers must run on the GPU: each `memref.copy`
    becomes a `linalg.copy`, which later becomes a kernel.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def CUDAShareKernels : Pass<"soap-cuda-share-kernels", "ModuleOp"> {
  let summary = "Launches of kernels that compute the same share one kernel";
  let description = [{
    After kernel outlining, which gives every launch a `gpu.module` of its
    own. A data-parallel program's ranks launch the same kernels on their
    own buffers, and a network's repeated blocks launch equal kernels
    within a rank (resnet101's training step on 4 ranks: 3,160 launches of
    130 distinct kernels). A module whose one kernel is equal to an
    earlier module's but for its name and locations (the same body, types
    and attributes) goes, and its launches name the earlier kernel: NVVM
    and PTX code generation compile each kernel once, and each rank loads
    (the driver JIT-compiles) only distinct kernels.
  }];
  let dependentDialects = ["gpu::GPUDialect"];
  let statistics = [
    Statistic<"numShared", "shared-kernels",
              "Kernels that are another's and went">
  ];
}

def CUDADeviceMemory : Pass<"soap-cuda-device-memory", "ModuleOp"> {
  let summary = "Place buffers in device memory and check that the host "
                "never touches them";
  let description = [{
    After the kernels are outlined: buffers live in device memory.
    `memref.alloc` and `memref.dealloc` stay, and reach libsoaprt's
    stream-ordered device allocator (`_mlir_memref_to_llvm_alloc` / `_free`,
    finalize-memref-to-llvm with generic functions); the few allocations only
    the host reads and frees in the same block (bookkeeping of the
    deallocation helpers) become stack allocations. `memref.get_global` of
    the entry's inputs outside `soap_setup` becomes the input's device copy
    (`soaprt_cuda_input`), of any other constant its device copy
    (`soaprt_cuda_constant`, uploaded once). Host code that loads or stores
    a device buffer is an error.
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "LLVM::LLVMDialect", "arith::ArithDialect"];
}

def CUDAAsyncCommunication
    : Pass<"soap-cuda-async-communication", "ModuleOp"> {
  let summary = "Run communication beside the computation: start each "
                "transfer and all-reduce, wait where its buffer is next used";
  let description = [{
    After `soap-cuda-device-memory`. libsoaprt's CUDA back end runs
    communication on a stream of its own, so that it overlaps the
    computation, as the simulator assumes (a data-parallel step all-reduces
    each weight gradient while the backward pass goes on). Each
    `soaprt_transfer_<T>` / `soaprt_all_reduce_<T>` call becomes its start
    (`soaprt_transfer_start_<T>` / `soaprt_all_reduce_start_<T>`, same
    operands, returning a ticket), and `soaprt_comm_wait(ticket)` goes right
    before the first later op of the same block that may touch the buffer
    the region belongs to (reads, writes or frees it: a kernel launch, a
    library call, a dealloc, an op holding one), or before the block's
    terminator. Communication completes in the order it starts, so one wait
    covers every earlier start, and a later start needs no wait for an
    earlier one. Ops that only make views or casts touch nothing; a call of
    a function defined in the module may touch anything. Buffers are traced
    through views, casts and transposes to their root: two different
    allocations of the function never alias, nor does one with a function
    argument, global or call result; any other two roots may. Runs of transfers with only side-effect-free
    ops between them are bracketed by `soaprt_comm_group_begin` / `_end`:
    they run concurrently (one NCCL group). With `SOAPRT_COMM_DEFER=1` (the
    host emulation's default) libsoaprt runs each operation only at its
    wait, so a wait placed too late gives wrong results in the emulated
    diff tests.

    Gradient buckets: consecutive all-reduces on the same device group
    (no other communication between them) are started together, up to
    `bucket-bytes` in all, as one NCCL group (NCCL aggregates them into one
    launch, without copying them into one buffer): each start but the
    bucket's last moves down to it, which is legal while no op between
    touches a moved start's buffer (a bucket closes before such an op). A
    data-parallel step's hundreds of small gradient all-reduces (a batch
    norm's weight and bias: a few KiB) then pay NCCL's per-call latency
    once per bucket, at the price of starting a bucket's first gradients
    later, and the last bucket, which nothing is left to hide, is larger.
    The default, 1 MiB, is about what an NVLink moves in one call's
    latency (~450 GB/s x ~3 us): merging smaller messages saves most of
    their time, merging larger ones little (PyTorch DDP buckets 25 MiB,
    copied into one buffer); soapc sets it from the machine description
    (latency x bandwidth of its slowest link in use). 0 turns buckets off.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"1048576",
           "Largest bucket of all-reduces started together (bytes; 0: "
           "none)">,
  ];
  let dependentDialects = ["func::FuncDialect"];
}

def CUDAEmulateKernels : Pass<"soap-cuda-emulate-kernels", "ModuleOp"> {
  let summary = "Run every kernel launch as host loops (checks the CUDA "
                "lowering without a GPU)";
  let description = [{
    For testing only: each `gpu.launch_func` becomes a nest of `scf.for`
    loops over its blocks and threads (z, y, x; blocks outside threads) that
    runs the kernel's body on the host, with `gpu.block_id`,
    `gpu.thread_id`, `gpu.block_dim` and `gpu.grid_dim` replaced by the loop
    indices and launch sizes; the `gpu.module`s are then erased. Run after
    `soap-cuda-device-memory`, so that everything before it is exactly the
    CUDA lowering. With libsoaprt_cuda over a host emulation of the CUDA
    libraries (libsoaprt_cuda_emu.a) the program then runs on a machine
    without a GPU (`soapc --target=cuda --cuda-host-emulation`), and its
    results can be compared with the CPU target's. Kernels that a sequential
    host run cannot reproduce are rejected: barriers, shared memory, other
    GPU ops, asynchronous launches, clusters, several blocks in a body.

    With `profile-accesses`, every load and store of an emulated kernel also
    reports its address to libsoaprt_cuda_emu's access profiler
    (`soaprt_emu_profile_*`, lib/Runtime/emulation/kernel_profile.c), which
    groups the accesses of each warp (32 consecutive threads of a block) the
    way a GPU does and counts the 32-byte sectors each warp-wide request
    touches: how well each kernel's accesses are coalesced.
  }];
  let options = [
    Option<"profileAccesses", "profile-accesses", "bool", /*default=*/"false",
           "Report each kernel's loads and stores to the access profiler">,
  ];
  let dependentDialects = ["scf::SCFDialect", "arith::ArithDialect",
                           "func::FuncDialect", "memref::MemRefDialect",
                           "LLVM::LLVMDialect"];
}

#endif // SOAP_CONVERSION_PASSES_TD
