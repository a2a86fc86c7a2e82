//===- FormCollectives.cpp - Transfers that gather become all-gathers
//------===//
//
// See Passes.td (soap-form-collectives).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"
#include "soap/Simulator/Region.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <vector>

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_FORMCOLLECTIVES
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// A region sent by one device: the transfers of the chain that send it,
/// by receiver.
struct Sent {
  SmallVector<int64_t> offsets, sizes;
  int64_t from;
  std::map<int64_t, TransferOp> to;
};

/// One all-gather found in a chain: the transfers it replaces, and its
/// region, dimension and devices (in chunk order).
struct Gather {
  SmallVector<TransferOp> transfers;
  SmallVector<int64_t> offsets, sizes, devices;
  int64_t dim;
};

static bool intersects(ArrayRef<int64_t> offsetsA, ArrayRef<int64_t> sizesA,
                       ArrayRef<int64_t> offsetsB, ArrayRef<int64_t> sizesB) {
  for (size_t d = 0; d < offsetsA.size(); ++d)
    if (std::max(offsetsA[d], offsetsB[d]) >=
        std::min(offsetsA[d] + sizesA[d], offsetsB[d] + sizesB[d]))
      return false;
  return true;
}

/// The all-gathers among the transfers of `chain` (in program order), by
/// Region.h's findAllGathers, the simulator's rule.
static std::vector<Gather> findGathers(ArrayRef<TransferOp> chain) {
  // Each (region, sender) with its receivers.
  SmallVector<Sent> sent;
  for (TransferOp transfer : chain) {
    if (transfer.getOffsets().size() > static_cast<size_t>(::soap::kMaxRank))
      return {};
    auto it = llvm::find_if(sent, [&](const Sent &s) {
      return s.from == static_cast<int64_t>(transfer.getFrom()) &&
             ArrayRef<int64_t>(s.offsets) == transfer.getOffsets() &&
             ArrayRef<int64_t>(s.sizes) == transfer.getSizes();
    });
    if (it == sent.end()) {
      sent.push_back({SmallVector<int64_t>(transfer.getOffsets()),
                      SmallVector<int64_t>(transfer.getSizes()),
                      static_cast<int64_t>(transfer.getFrom()),
                      {}});
      it = std::prev(sent.end());
    }
    // A region sent twice to the same device: leave the chain alone.
    if (!it->to.insert({static_cast<int64_t>(transfer.getTo()), transfer})
             .second)
      return {};
  }
  std::vector<::soap::SentRegion> regions;
  std::vector<int32_t> receivers;
  for (const Sent &s : sent) {
    ::soap::SentRegion region;
    region.region.rank = static_cast<int32_t>(s.offsets.size());
    for (size_t d = 0; d < s.offsets.size(); ++d)
      region.region.dims[d] = {s.offsets[d], s.offsets[d] + s.sizes[d]};
    region.from = static_cast<int32_t>(s.from);
    region.begin = static_cast<int32_t>(receivers.size());
    for (auto &[to, transfer] : s.to) // std::map: sorted
      receivers.push_back(static_cast<int32_t>(to));
    region.end = static_cast<int32_t>(receivers.size());
    regions.push_back(region);
  }
  std::vector<int32_t> parts, ends, dims, scratch;
  ::soap::findAllGathers(regions, receivers, parts, ends, dims, scratch);
  std::vector<Gather> gathers;
  for (size_t g = 0, q = 0; g < ends.size(); ++g) {
    Gather gather;
    gather.dim = dims[g];
    const Sent &first = sent[parts[q]];
    gather.offsets = first.offsets;
    gather.sizes = first.sizes;
    gather.sizes[gather.dim] *= ends[g] - static_cast<int64_t>(q);
    for (; q < size_t(ends[g]); ++q) {
      const Sent &part = sent[parts[q]];
      gather.devices.push_back(part.from);
      for (auto &[to, transfer] : part.to)
        gather.transfers.push_back(transfer);
    }
    gathers.push_back(std::move(gather));
  }
  return gathers;
}

struct FormCollectivesPass
    : public mlir::soap::impl::FormCollectivesBase<FormCollectivesPass> {
  void runOnOperation() override {
    // Chains: a transfer whose input is not the result of a transfer it
    // alone uses starts one.
    SmallVector<SmallVector<TransferOp>> chains;
    getOperation().walk([&](TransferOp transfer) {
      auto previous = transfer.getInput().getDefiningOp<TransferOp>();
      if (previous && previous->hasOneUse() &&
          previous->getBlock() == transfer->getBlock())
        return;
      SmallVector<TransferOp> chain{transfer};
      while (chain.back()->hasOneUse()) {
        auto next = dyn_cast<TransferOp>(*chain.back()->user_begin());
        if (!next || next->getBlock() != transfer->getBlock())
          break;
        chain.push_back(next);
      }
      chains.push_back(std::move(chain));
    });
    for (SmallVector<TransferOp> &chain : chains)
      rewrite(chain);
  }

  void rewrite(SmallVector<TransferOp> &chain) {
    if (chain.size() < 2)
      return;
    std::vector<Gather> gathers = findGathers(chain);
    // Position of each transfer in the chain.
    llvm::DenseMap<Operation *, size_t> position;
    for (auto [i, transfer] : llvm::enumerate(chain))
      position[transfer] = i;
    // The chain's steps: a kept transfer, or a gather at its last transfer.
    SmallVector<Operation *> steps(chain.begin(), chain.end());
    SmallVector<std::optional<size_t>> gatherAt(chain.size());
    llvm::DenseSet<Operation *> replaced;
    for (auto [g, gather] : llvm::enumerate(gathers)) {
      size_t first = chain.size(), last = 0;
      for (TransferOp transfer : gather.transfers) {
        first = std::min(first, position[transfer]);
        last = std::max(last, position[transfer]);
      }
      // The gather moves each part to after the transfers in between: none
      // of those may write into the region on a device of the group.
      llvm::DenseSet<Operation *> members(gather.transfers.begin(),
                                          gather.transfers.end());
      bool clobbered = false;
      for (size_t i = first; i <= last && !clobbered; ++i) {
        TransferOp other = chain[i];
        clobbered = !members.contains(other) &&
                    llvm::is_contained(gather.devices,
                                       static_cast<int64_t>(other.getTo())) &&
                    intersects(other.getOffsets(), other.getSizes(),
                               gather.offsets, gather.sizes);
      }
      if (clobbered || llvm::any_of(gather.transfers, [&](TransferOp transfer) {
            return replaced.contains(transfer);
          }))
        continue;
      replaced.insert(members.begin(), members.end());
      gatherAt[last] = g;
    }
    if (replaced.empty())
      return;
    // Relink the chain through its kept transfers and the gathers.
    Value value = chain.front().getInput();
    Value end = chain.back().getResult();
    for (auto [i, transfer] : llvm::enumerate(chain)) {
      if (!replaced.contains(transfer)) {
        transfer.getInputMutable().assign(value);
        value = transfer.getResult();
        continue;
      }
      if (!gatherAt[i])
        continue;
      const Gather &gather = gathers[*gatherAt[i]];
      OpBuilder builder(transfer);
      value = AllGatherOp::create(builder, transfer.getLoc(), value,
                                  builder.getDenseI64ArrayAttr(gather.offsets),
                                  builder.getDenseI64ArrayAttr(gather.sizes),
                                  builder.getI64IntegerAttr(gather.dim),
                                  builder.getDenseI64ArrayAttr(gather.devices));
    }
    if (value != end)
      end.replaceAllUsesWith(value);
    for (TransferOp transfer : llvm::reverse(chain))
      if (replaced.contains(transfer))
        transfer->erase();
  }
};

} // namespace
