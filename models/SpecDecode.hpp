/* dbosim — speculative decoding with DeepSeek's multi-token-prediction (MTP) module, as vLLM runs it
 * (--speculative-config '{"method": "deepseek_mtp", "num_speculative_tokens": k}', the EAGLE-style proposer):
 *   - every decoding request runs 1 + k tokens through the target (its last sampled token and k drafts to verify);
 *   - after the target's forward the draft module runs k forward passes: the first over every token the target ran
 *     (the MTP layer keeps its own KV cache), the others over one token per request;
 *   - a step yields 1 + (drafts accepted) tokens per request; draft i is accepted with probability a_i once drafts
 *     1..i-1 were, so the expected yield is 1 + sum_{i=1..k} prod_{j<=i} a_j.
 * The MTP module (DeepSeek-V3 report §2.2; vLLM DeepSeekMultiTokenPredictorLayer): embedding, enorm and hnorm
 * (RMSNorm), eh_proj [2 hidden -> hidden] (an unquantized linear), one decoder layer shaped as the target's MoE layers
 * (mtp_block), then its shared head: RMSNorm and the LM head on one row per request, and a greedy argmax.
 * Pure functions: no SimGrid, no I/O. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/CommSetup.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace dbosim::models {

enum class SpecMethod { none, deepseek_mtp };
std::string spec_method_name(SpecMethod m);

/** @brief vLLM's speculative config plus the acceptance the deployment measures (not a vLLM option: vLLM reports
 *  it per draft position in its spec-decode metrics). */
struct SpecDecodeSpec {
  SpecMethod method          = SpecMethod::none;
  int num_speculative_tokens = 1;      ///< k: drafts proposed per request and step
  std::vector<double> acceptance_rate; ///< a_i in [0, 1], per draft position (conditional); one value: every position

  bool enabled() const { return method != SpecMethod::none && num_speculative_tokens > 0; }
  /** @brief Tokens a decoding request runs through the target per step: 1 + k (1 when off). */
  int tokens_per_request() const { return enabled() ? 1 + num_speculative_tokens : 1; }
  /** @brief a_i for draft position `i` (1-based). */
  double acceptance(int i) const;
};

/** @brief Expected tokens a decoding request gains per step: 1 + sum_{i=1..k} prod_{j<=i} a_j (1 when off). */
double expected_accepted_tokens(const SpecDecodeSpec& spec);

/** @brief The shapes of the draft's k forward passes after a target step of shape `target` (empty when off): the
 *  first over the target's tokens, each later one over one token per request, in decode, one position further. */
std::vector<StepShape> draft_pass_shapes(const SpecDecodeSpec& spec, const StepShape& target);

/** @brief How the draft's passes are issued: vLLM's drafter replays (piecewise) CUDA graphs unless the deployment
 *  runs eager. */
struct DraftIssue {
  bool cuda_graph      = true;
  double launch_cpu_us = 0; ///< host time of one kernel launch (eager) or of one graph launch
  double kernel_gap_us = 0; ///< GPU-side gap per kernel
};

/** @brief One draft forward pass. */
struct DraftPassCost {
  StepShape shape;
  LayerCosts block;     ///< mtp_block: one MoE decoder layer (A0 A1 D MLP S C), unsplit
  double head_us   = 0; ///< embedding, enorm, hnorm, eh_proj, shared-head norm, LM head and argmax kernels
  int head_kernels = 0;
  double us        = 0; ///< the pass on its own: every kernel in series, plus launches and gaps
  int kernels      = 0;
  std::string method; ///< how `us` was obtained, for --explain-like output
};

struct DraftCost {
  std::vector<DraftPassCost> passes;
  double us = 0; ///< all passes, in series after the target's forward
};

/** @brief The draft module's cost after one target step of shape `target`: each pass's kernels in series (the
 *  drafter's forward is not split into micro-batches), D and C alone on the fabric, per-kernel GPU gaps, and the
 *  host's launches (one graph launch per pass under CUDA graphs; else a launch per kernel, which the GPU waits for
 *  when the host is slower). Empty when `spec` is off.
 *  @throws std::invalid_argument as layer_costs does, or when the model has no MoE layer to shape the MTP block. */
DraftCost draft_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& target,
                     const SpecDecodeSpec& spec, const CommSetup& comm, const DraftIssue& issue);

/** @brief draft_cost's `us` for the shapes of one deployment (model, profile, parallelism, spec, comm setup and issue),
 *  bit for bit: each pass's kernel times kept by a key of what they read (A0's and A1's shared keys; the head's
 *  kernels after the block by the requests; the MoE ops by tokens, MoeOpsMemo), only the kernels that read the context
 *  (a0_context_kernels, a1_context_kernels) timed again, and the pass summed in series as draft_cost sums it; each
 *  pass's block checked as sim::scenario_draft_cost checks it (check_layer_bounds). For the serving oracle, which
 *  prices the draft at every DP rank's exact shape.
 *  @throws std::invalid_argument as draft_cost; InternalError when a context kernel is not named once in its op. */
class DraftMemo {
public:
  double us(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& target,
            const SpecDecodeSpec& spec, const CommSetup& comm, const DraftIssue& issue);
  /** @brief Keys costed so far. */
  std::size_t size() const { return entries_.size(); }

private:
  struct Entry {
    std::vector<double> kernel_us;    ///< every kernel of the pass in series order, at the key's first shape
    std::vector<std::size_t> context; ///< where the context kernels sit in it, in a0_context_kernels' then
                                      ///< a1_context_kernels' order
    std::size_t rows_first = 0;       ///< where the head's kernels over one row per request begin in it
  };
  std::map<std::pair<StepShape, StepShape>, Entry> entries_;
  std::map<int, std::vector<double>> row_us_; ///< the head's row kernels' times by the pass's requests
  MoeOpsMemo moe_ops_; ///< the MTP block's D MLP S C by tokens (its comm is the unsplit one of every pass)
};

} // namespace dbosim::models
