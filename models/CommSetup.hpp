/* dbosim — what the dispatch/combine model (models/All2AllModel) needs beyond the model and the profile: the link
 * facts, the node size, the SMs an SM-resident comm kernel holds, the fat tree's oversubscription, and the routing
 * and placement whose expected traffic a single-rank cost uses. */
#pragma once
#include "hw/NetworkFacts.hpp"
#include "models/ExpertImbalance.hpp"
#include "models/ExpertRouting.hpp"

namespace dbosim::models {

struct CommSetup {
  const NetworkFacts* net = nullptr; ///< required when ep > 1
  int gpus_per_node       = 8;       ///< ranks sharing one NVLink domain
  int comm_sms            = 0;       ///< SMs an SM-resident comm kernel holds under an SM partition (0: none)
  double oversubscription = 1;       ///< fat-tree leaf down/up ratio
  RoutingSpec routing; ///< placement and groups; the single-rank cost takes its expected (balanced) traffic
  /** How the single-rank cost spreads that traffic: ideal (every rank the mean) or the busiest rank under the
   *  post-EPLB residual (models/ExpertImbalance), whose MLP, D and C the step then waits for. */
  ExpertLoadModel expert_load = ExpertLoadModel::ideal;
  /** vLLM's MoE DP chunk loop (FusedMoE.forward_impl_chunked, VLLM_MOE_DP_CHUNK_SIZE): with a masked-buffer
   *  all-to-all (DeepEP low-latency), a MoE layer whose step holds more tokens than this runs its dispatch, experts
   *  and combine once per chunk, the last one shorter. 0: no chunk loop. */
  int moe_dp_chunk_tokens = 0;
};

} // namespace dbosim::models
