/* dbosim — the architecture of an MoE decoder model, as a plain validated struct. */
#pragma once
#include "hw/DType.hpp"
#include "models/Quant.hpp"

#include <string>

namespace dbosim::models {

enum class AttentionKind { mla, gqa };

/** @brief Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2). Dimensions in elements. */
struct MlaSpec {
  int num_heads                         = 0;
  int q_lora_rank                       = 0; ///< 0 = no q down-projection (DeepSeek-V2-Lite): q is projected directly
  int kv_lora_rank                      = 0;
  int qk_nope_head_dim                  = 0;
  int qk_rope_head_dim                  = 0;
  int v_head_dim                        = 0;
  bool operator==(const MlaSpec&) const = default;
};

/** @brief Grouped-query attention (Qwen3, Mixtral). Dimensions in elements. */
struct GqaSpec {
  int num_heads                         = 0;
  int num_kv_heads                      = 0;
  int head_dim                          = 0;
  bool operator==(const GqaSpec&) const = default;
};

struct ModelSpec {
  std::string name;
  std::string source;          ///< where the numbers come from (the HF config.json URL or path)
  int num_layers          = 0; ///< decoder layers
  int first_k_dense       = 0; ///< leading dense (non-MoE) layers
  int hidden              = 0; ///< hidden size (d_model)
  int vocab               = 0;
  int dense_intermediate  = 0; ///< FFN width of the dense layers
  int num_routed_experts  = 0;
  int num_shared_experts  = 0; ///< 0 = no shared expert (Qwen3-MoE, Mixtral)
  int top_k               = 0;
  int moe_intermediate    = 0; ///< width of one routed expert
  int shared_intermediate = 0; ///< total width of the shared expert(s); 0 when none
  int mtp_layers          = 0; ///< MTP (next-token prediction) modules the checkpoint ships: num_nextn_predict_layers
  AttentionKind attention = AttentionKind::mla;
  MlaSpec mla;
  GqaSpec gqa;
  DType weight_dtype   = DType::bf16; ///< routed/shared expert and projection weights
  DType attn_dtype     = DType::bf16; ///< attention projection weights (MLA stays BF16 in DeepSeek serving)
  DType kv_dtype       = DType::bf16;
  DType dispatch_dtype = DType::fp8; ///< all-to-all dispatch payload (FP8 + 1 fp32 scale per 128 elements)
  DType combine_dtype  = DType::bf16;
  /** Per op class, the `precision:` format (zoo `precision:` mapping, then the scenario's keys); unset: the dtypes
   *  above, priced as before (models/Precision.hpp). */
  OpPrecision precision;

  int num_moe_layers() const { return num_layers - first_k_dense; }
  bool operator==(const ModelSpec&) const = default;
};

} // namespace dbosim::models
