/* dbosim — the shape of one serving step as the step-time cache keys it, and its buckets.
 *   tokens  : the most new tokens on any DP rank (all ranks pad to it). Up to 512, rounded up to vLLM's CUDA-graph
 *             capture sizes (1, 2, 4, 8, 16, ..., 256 by 8, then by 16), which is the padding a graph replay runs;
 *             above, rounded up on a geometric grid of `token_buckets_per_octave` points per power of two.
 *   batch   : requests on that rank: exact up to 16, then rounded up on the tokens' geometric grid, never above
 *             tokens.
 *   context : mean KV length of the step's requests, rounded to the nearest point of a geometric grid of
 *             `context_buckets_per_octave` points per power of two (exact up to 16), and never below the bucket's
 *             tokens per request (a request attends over at least its own new tokens).
 *   phase   : decode when every scheduled request decodes (a uniform decode batch), else prefill (mixed/prefill).
 *   decode part (mixed steps): the decoding requests keep the batch's rounding (the prompt requests stay exact), their
 *             tokens in proportion, their mean KV length on the context grid; context is then the prompts' mean.
 *   dp_unsplit: a DP rank below its DBO threshold keeps the whole step unsplit (StepKey::dp_unsplit). */
#pragma once
#include "models/OpCost.hpp"
#include "sim/plan/Op.hpp"

#include <array>
#include <compare>
#include <string>

namespace dbosim::serving {

/** The step shape (models::StepShape: phase, tokens, batch, context_len) and how the DP ranks split it. */
struct StepKey : models::StepShape {
  /** DBO on and the padded tokens reach the phase's threshold, but some DP rank's own tokens do not reach its own
   *  (an idle rank's dummy batch: 1 token): vLLM then micro-batches no rank (dp_utils.py), the step runs unsplit. */
  bool dp_unsplit                        = false;
  auto operator<=>(const StepKey&) const = default;
  std::string to_string() const;
};

/** @brief What the engine says about one step shape. */
struct StepTime {
  double step_us         = 0;
  double exposed_comm_us = 0;
  double overlap_us      = 0;
  double draft_us        = 0;     ///< speculative decoding: the draft module's passes, included in step_us
  double step_work_us    = 0;     ///< the work outside the layers (models/StepWork), included in step_us
  double expert_spin_us  = 0;     ///< a mean rank's wait for the busiest EP rank's MoE work, included in step_us
  double hot_rank_load   = 1;     ///< the busiest EP rank's expert load over the mean (1: ideal routing)
  int ubatches           = 1;     ///< 2: DBO split the step
  bool cuda_graph        = false; ///< the step replays a full CUDA graph
  std::array<double, sim::num_op_kinds> per_op_us{}; ///< per op kind (sim::op_kind_name) totals
};

/** @brief One DP rank's own work in a step of a shape, the part that differs between ranks (their batches and KV
 *  lengths): the attention blocks before each dispatch (A0, A1 over every layer and micro-batch), the work outside
 *  the layers, and the draft module. A step's collectives wait for the rank with the most; the others spin. */
struct RankWork {
  double attention_us = 0;
  double step_work_us = 0;
  double draft_us     = 0;
  double total_us() const { return attention_us + step_work_us + draft_us; }
};

struct Buckets {
  int context_per_octave = 4;
  int token_per_octave   = 8;

  /** @brief Smallest grid point >= tokens. */
  int tokens(int n) const;
  /** @brief Smallest batch grid point >= n. */
  int batch(int n) const;
  /** @brief Nearest grid point to a KV length. */
  int context(int n) const;
  StepKey bucket(const StepKey& exact) const;

private:
  /** A mixed step's decode part on the grid (StepShape::decode_*). */
  void bucket_decode_part(const StepKey& exact, StepKey& bucketed) const;
};

} // namespace dbosim::serving
