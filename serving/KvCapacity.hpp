/* dbosim — KV-cache capacity of one DP rank, as vLLM sizes it: HBM × gpu_memory_utilization minus the weights
 * resident on the GPU and the peak activations of a max_num_batched_tokens step, divided into blocks. MLA stores
 * one latent (kv_lora_rank + rope dims) per token and layer, replicated on every TP rank; GQA stores K and V for its
 * KV heads, split across TP ranks. */
#pragma once
#include "config/Scenario.hpp"

#include <nlohmann/json.hpp>

namespace dbosim::serving {

struct KvCapacity {
  double kv_bytes_per_token = 0; ///< all layers, on one GPU
  double weight_bytes       = 0; ///< resident on one GPU
  double activation_bytes   = 0; ///< peak of one max_num_batched_tokens step (estimate, see .cpp)
  double budget_bytes       = 0; ///< HBM × gpu_memory_utilization
  long num_blocks           = 0; ///< KV blocks per DP rank
  int block_size            = 16;
  bool overridden           = false; ///< from scheduler.num_gpu_blocks_override
  long tokens() const { return num_blocks * block_size; }
  nlohmann::ordered_json to_json() const;
};

/** @brief KV bytes per token on one GPU (all layers). */
double kv_bytes_per_token(const models::ModelSpec& m, int tp);
/** @brief Weight bytes resident on one GPU: attention/dense/shared split by TP, routed experts by EP (ep > 1) or
 *  each expert split by TP (ep = 1), embeddings. */
double weight_bytes_per_gpu(const models::ModelSpec& m, const models::ParallelSpec& p);

/** @brief The MTP module's weights on one GPU (speculative_config deepseek_mtp): one MoE decoder layer, eh_proj
 *  [2 hidden -> hidden] in BF16 and its shared head's LM head (its own weights; vLLM shares only the embedding). */
double mtp_weight_bytes_per_gpu(const models::ModelSpec& m, const models::ParallelSpec& p);

/** @brief The DP rank's KV capacity; InputError naming scheduler.gpu_memory_utilization when nothing is left. */
KvCapacity kv_capacity(const Scenario& s);

} // namespace dbosim::serving
