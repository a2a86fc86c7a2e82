//===- Search.h - Strategy search: MCMC over the SOAP space -----*- C++ -*-===//
//
// The search of the paper's §6 (DESIGN.md, "Search"; issue 5).
//
// Config space (ConfigSpace). A config of a node is a degree per loop and a
// machine view for its tiles:
//  * degrees: for every loop (Sample, Attribute, Parameter and Reduction
//    alike) a divisor of its extent that is a power of two or the largest
//    divisor of the extent not above the device count (so data parallelism
//    over a batch of 48 on 16 devices, degree 16, and over a batch of 12,
//    degree 12, are both in the space); the product of the degrees (the tile
//    count T) is at most the device count D.
//  * view: tile t runs on device start + t * stride. T = 1: any device
//    (start 0..D-1). T > 1: stride s a power of two with T*s <= D, and the
//    devices split into floor(D / (T*s)) aligned blocks of T*s devices; the
//    view is block b, offset o < s: start = b*T*s + o. So contiguous views
//    are aligned to their size (never straddle a node boundary needlessly)
//    and strided views interleave (one tile per node, ...), as FlexFlow's
//    machine views do. Views for T tiles: D/T * (number of strides).
// The space is finite and indexed: config index i of node n in
// [0, numConfigs(n)) decodes to a ParallelConfig; the MCMC proposal draws an
// index uniformly (symmetric), the exact solver enumerates them.
//
// MCMC (searchStrategy). Metropolis-Hastings on p(S) ~ exp(-beta * cost(S)),
// cost = simulated iteration time. A proposal picks a node uniformly and a
// config of it uniformly, re-simulates incrementally (simulateDelta) and is
// accepted with min(1, exp(beta * (cost(S) - cost(S*)))); a rejected
// proposal is taken back with Simulator::undoDelta (restoring what the delta
// overwrote, not simulating again). Tied moves: when the node
// belongs to a group of nodes that move together (tiedNodeGroups: the
// unrolled steps of a recurrent layer), then with probability
// `tiedMoveProbability` the config goes to every node of the group in one
// multi-node simulateDelta. Such a move is not reversible by one proposal
// (the group's old configs may differ), so the chain is a heuristic
// annealer there rather than an exact Metropolis-Hastings sampler; it is
// what lets the search place each recurrent layer on its own devices. A
// tied move of a group that is part of a unit (tiedGroupUnits: the groups
// of one recurrent layer) moves, with probability `unitMoveProbability`,
// the whole unit: the other groups get configs aligned with the proposed one
// (alignedConfig), so a layer moves to other devices in one step instead of
// four moves whose intermediate states all pay transfers. A
// strategy over the device memory (Simulator::overCapacity) is never accepted
// from a state that fits and never returned; a chain whose start does not fit
// accepts any move that fits or does not raise its peak memory, until it fits.
// Where data parallelism does not fit, each start is first made to fit by
// activation recomputation (fitByRecomputation, SearchOptions::recompute),
// and proposals may turn a node's recomputation on or off.
//
// beta = betaScale / (best time found so far), default betaScale = 100: a
// move that makes the iteration 1% (of the best time) slower is accepted with
// probability e^-1 = 0.37, 3% with 0.05, 10% with 5e-5. beta is updated
// between rounds when the best improves. Relative to the best rather than to
// data parallelism because the found strategies are often many times faster
// than data parallelism (an MLP on 64 K80s: 45x): a beta fixed relative to the
// data-parallel time would be that many times too warm once the search has
// found them. Measured on synthetic graphs (3 seeds, 6000 proposals): scales
// 100-300 find the best strategies (RNN-like on 16 P100s 19-20x over data
// parallelism vs 13x at 10; MLP on 64 K80s 45-46x vs 36x at 10); the small
// CNN of the tests reaches its exact optimum at every scale from 10 to 300.
//
// Chains. One chain per start: data parallelism, the expert strategy, data
// parallelism on a subset of the devices (the best of the first D/2, D/4,
// ..., 1 devices: models too small for the machine) and `randomStarts`
// random strategies. Chains advance round-robin in blocks of
// `blockProposals` proposals, each with its own Simulator and random stream,
// so the trajectory depends only on the seed, never on timing: with a
// proposal budget the result is fully deterministic; with a time budget it is
// the same trajectory, cut where the time runs out. A chain that has not
// improved its own best for `restartPatience` proposals restarts from the
// best strategy found so far. With `threads` > 1 the chains of a round run on
// threads (same trajectory and result as with one thread).
//
// Polish: when the chains stop, a greedy descent from the best strategy
// tries, node by node, the config aligned with each neighbour's
// (alignedConfig; for a node of a tied group, given to the whole group) and
// keeps every change that makes the iteration faster and still fits, in
// rounds until one improves nothing. The chains' acceptance rule rarely
// fixes one misaligned layer among well placed ones (nmt's found strategies
// are 24-36% faster after it; the CNNs' change by under 1.5%).
//
// Stop: when the budget is spent (seconds and/or proposals, whichever comes
// first) or when the best has not improved for half of it (measured from the
// start when the starts are never improved on; not while nothing found fits
// in memory).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_SEARCH_H
#define SOAP_SIMULATOR_SEARCH_H

#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/Machine.h"
#include "soap/Simulator/OpGraph.h"
#include "soap/Simulator/Simulator.h"
#include "soap/Simulator/Strategy.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace soap {

/// The finite, indexed config space of every node of a graph on D devices.
class ConfigSpace {
public:
  ConfigSpace(const OpGraph &graph, int32_t numDevices);

  int32_t numDevices() const { return devices; }
  int32_t numNodes() const { return static_cast<int32_t>(nodes.size()); }
  /// Number of configs of node `n` (degree vectors x views).
  int64_t numConfigs(int32_t n) const { return nodes[n].cumulative.back(); }
  /// Number of distinct degree vectors of node `n`.
  int32_t numDegreeVectors(int32_t n) const {
    return static_cast<int32_t>(nodes[n].tiles.size());
  }
  /// Config `index` of node `n`, written into `out` (reusing its storage).
  void config(int32_t n, int64_t index, ParallelConfig &out) const;
  /// Index of the degree vector of config `index` of node `n`.
  int32_t degreeVectorOf(int32_t n, int64_t index) const;
  /// A config of node `n` drawn uniformly (one draw of `rng`).
  void sample(int32_t n, std::mt19937_64 &rng, ParallelConfig &out) const;
  /// Index of `config` in the space of node `n`, or -1 when not in it.
  int64_t indexOf(int32_t n, const ParallelConfig &config) const;
  /// Degrees allowed for one loop of extent `extent` on `numDevices`
  /// devices, ascending (always starts with 1).
  static std::vector<int32_t> loopDegrees(int64_t extent, int32_t numDevices);
  /// (start, stride) of the views of `tiles` tiles, in index order.
  const std::vector<std::pair<int32_t, int32_t>> &views(int32_t tiles) const {
    return viewsByTiles[tiles];
  }

private:
  struct NodeSpace {
    int32_t loops = 0;
    std::vector<int32_t> degrees;    ///< flat: vector v at [v*loops, ...)
    std::vector<int32_t> tiles;      ///< tile count of vector v
    std::vector<int64_t> cumulative; ///< configs before vector v; back = total
  };
  int32_t devices;
  std::vector<NodeSpace> nodes;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> viewsByTiles;
};

/// Whether `node` is a fully connected layer: a contraction (matmul, dot)
/// that is not a convolution, reads a parameter and has a Parameter loop.
bool isFullyConnected(const OpGraph &graph, const Node &node);

/// The expert strategy (paper §8): fully connected layers model parallel
/// (their Parameter loop split by the largest allowed degree, devices 0, 1,
/// ...), every other node data parallel as in dataParallelStrategy().
Strategy expertStrategy(const OpGraph &graph, int32_t numDevices);

/// Groups of nodes (each of two or more, ascending; groups in order) that
/// the search may move together: the same op, loops and operand shapes, and
/// the same anchor. A node's anchor is the first parameter it reads that
/// other nodes read too (the weight of a recurrent layer, read by every
/// unrolled step); a node that reads only weights of its own has none; a
/// node that reads no weight takes the anchor of its first input's producer
/// that has one, else its first producer itself (siblings: the per-step
/// slices of an embedding, the q, k and v slices of a fused projection). So the
/// steps of one recurrent layer (their matmuls, gate reshapes and cell updates)
/// form groups, and two layers' steps never share one. Changing one step alone
/// makes it differ from its neighbours, whose transfers outweigh the gain, so a
/// single-node search rarely finds per-layer placements (a layer's steps on
/// their own devices, pipelined).
std::vector<std::vector<int32_t>> tiedNodeGroups(const OpGraph &graph);

/// Units of tied groups that the search may move together (layer moves): the
/// strongly connected components of two or more groups in the graph whose
/// vertices are the `groups` and whose edges are the tensors between their
/// nodes (a recurrent layer: the hidden state of step t-1 feeds step t's
/// matmul, whose gates feed step t's cell update, which makes the next hidden
/// state), each with the groups whose consumers in groups all lie in it (the
/// input projection x_t @ W_ih, the embedding slices that feed it). Each unit
/// lists group indices into `groups`, ascending; units in order of their
/// first group.
std::vector<std::vector<int32_t>>
tiedGroupUnits(const OpGraph &graph,
               const std::vector<std::vector<int32_t>> &groups);

/// The config of node `to` that runs each of its tiles on the device of the
/// tile of node `from` (under `fromConfig`) that touches the same part of a
/// tensor both use: every loop that `fromConfig` splits indexes a dimension
/// of the tensor alone (coefficient, constant and extent equal on both
/// sides), and `to` splits the loop that indexes that dimension on its side
/// by the same degree. Written into `out`; false (out unspecified) when no
/// shared tensor maps every split loop, or `to` cannot split a loop.
bool alignedConfig(const OpGraph &graph, int32_t from,
                   const ParallelConfig &fromConfig, int32_t to,
                   ParallelConfig &out);

/// Greedy descent from `strategy`: each node in turn tries the config
/// aligned (alignedConfig) with each neighbour's (nodes that share a tensor
/// that is not a parameter), given to its whole tied group (tiedNodeGroups)
/// when it has one, and keeps it when the iteration gets faster (and, when
/// `strategy` fits in device memory, still fits), in rounds until a round
/// improves nothing, or until `budgetSeconds` have passed (> 0; it then
/// keeps what it improved so far and sets `*cut`). Updates `strategy`;
/// returns its iteration time, and the simulations run in `simulations`
/// when not null.
double polishStrategy(const OpGraph &graph, const Machine &machine,
                      const CostModel &costs, Strategy &strategy,
                      int64_t *simulations = nullptr,
                      double budgetSeconds = 0, bool *cut = nullptr);

/// Activation recomputation until `sim`'s current strategy fits in device
/// memory: nodes in order of bytes not kept (outputs and Node::savedBytes)
/// per FLOP, most first (element-wise ops and softmaxes before
/// contractions), each that may recompute (its config splits no reduction
/// loop) given ParallelConfig::recompute, kept when the peak memory does not
/// rise and taken back otherwise, until the strategy fits. Does nothing to a
/// strategy that fits. Returns whether it fits; adds its simulations to
/// `*simulations` when not null.
bool fitByRecomputation(const OpGraph &graph, Simulator &sim,
                        int64_t *simulations = nullptr);

/// What the progress callback sees (about every progressInterval seconds and
/// once at the end).
struct SearchProgress {
  double elapsedSeconds = 0;
  int64_t proposals = 0;
  int64_t simulations = 0;
  double proposalsPerSecond = 0;
  double bestSeconds = 0;          ///< best iteration time that fits so far
  double dataParallelSeconds = 0;
  double speedup = 0;              ///< dataParallelSeconds / bestSeconds
  bool done = false;               ///< the final call
};

struct SearchOptions {
  /// Wall-clock budget; <= 0 or not finite: none (then the search stops
  /// after maxProposals, or 10,000 proposals when that is <= 0 too).
  double budgetSeconds = 30;
  /// Proposal budget (all chains together); <= 0: none.
  int64_t maxProposals = 0;
  uint64_t seed = 0;
  /// beta = betaScale / (best time so far) (see the file comment).
  double betaScale = 100;
  /// Random starts besides data parallelism and the expert strategy.
  int32_t randomStarts = 1;
  /// Proposals per chain per round (round-robin granularity).
  int32_t blockProposals = 16;
  /// A chain without improving its own best for this many proposals
  /// restarts from the overall best; <= 0: 50 x nodes (at least 1000).
  int64_t restartPatience = 0;
  /// Stop when the best has not improved for half of the budget.
  bool stopOnStall = true;
  /// Probability that a proposal for a node of a tied group
  /// (tiedNodeGroups) gives its config to the whole group; 0: never (the
  /// paper's one-node proposals only).
  double tiedMoveProbability = 0.75;
  /// Probability that a tied move of a group that belongs to a unit
  /// (tiedGroupUnits: a recurrent layer) moves the whole unit: the group
  /// gets the proposed config and the unit's other groups configs aligned
  /// with it (alignedConfig), so the layer moves to the new devices without
  /// transfers inside it. 0: never.
  double unitMoveProbability = 0.5;
  /// After the chains stop, polish the best strategy by greedy descent:
  /// each node (with its tied group) tries the config aligned with each
  /// neighbour's (alignedConfig) and keeps it when the iteration gets
  /// faster, in rounds until a round improves nothing. Deterministic when
  /// it finishes. Within the time budget: the chains stop early by an
  /// estimate of two polish rounds (at most a quarter of the budget), and
  /// the polish stops at the budget with what it improved so far.
  bool polish = true;
  /// Activation recomputation where a strategy does not fit in device
  /// memory: a start that does not fit gets fitByRecomputation, and once
  /// one did, proposals also turn a node's recomputation on or off (with
  /// probability 0.1) and the polish tries turning it off. A moved node
  /// keeps its recomputation where its new config allows it. false: no
  /// strategy the search makes recomputes.
  bool recompute = true;
  /// Threads for the chains of a round (1: everything on the caller's).
  int32_t threads = 1;
  /// No progress calls.
  bool quiet = false;
  double progressInterval = 0.5;
  std::function<void(const SearchProgress &)> progress;
};

struct SearchResult {
  /// Best strategy that fits in device memory (data parallelism, or the
  /// single-device strategy, when nothing found fits: then fits = false).
  Strategy best;
  double bestSeconds = 0;
  bool fits = true;
  int64_t bestPeakMemoryBytes = 0;
  double dataParallelSeconds = 0;
  bool dataParallelFits = true;
  double expertSeconds = 0;
  bool expertFits = true;
  /// Nodes the best recomputes (ParallelConfig::recompute).
  int32_t recomputedNodes = 0;
  /// Which start the best came from: "data-parallel", "expert",
  /// "data-parallel-subset", "random".
  std::string bestStart;
  int64_t proposals = 0;
  int64_t accepted = 0;
  /// Full + delta simulations (undoing a rejected proposal is not one).
  int64_t simulations = 0;
  /// Best time the chains found, before polishing (0 when nothing fit).
  double mcmcSeconds = 0;
  /// Simulations of the polish (included in `simulations`).
  int64_t polishSimulations = 0;
  /// Seconds the polish took (included in `searchSeconds`).
  double polishSeconds = 0;
  /// The polish stopped at the time budget before a round improved
  /// nothing (or did not start: the chains' starts took the budget).
  bool polishCut = false;
  int64_t restarts = 0;
  /// Chains run: data parallelism, the expert strategy, then (with more
  /// than one device) the best data parallelism on a subset and the random
  /// starts; fewer when the time budget's share for the chains ran out
  /// while starting them (the first two always run).
  int32_t chains = 0;
  double searchSeconds = 0;
  double beta = 0;
  /// Why it stopped: "proposals", "time", "stall", or "empty" (a graph
  /// with no ops: nothing to search).
  std::string stopReason;
};

/// Runs the MCMC search. The graph must validate and tile (Simulator's
/// requirements); the machine's device count is the D of the space.
SearchResult searchStrategy(const OpGraph &graph, const Machine &machine,
                            const CostModel &costs,
                            const SearchOptions &options);

} // namespace soap

#endif // SOAP_SIMULATOR_SEARCH_H
