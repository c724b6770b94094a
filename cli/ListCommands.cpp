#include "cli/Commands.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"

#include <fmt/format.h>

namespace dbosim::cli {

int models_command()
{
  fmt::print("{:<18} {:>6} {:>6} {:>8} {:>7} {:>5} {:>6}  {}\n", "model", "layers", "dense", "experts", "shared",
             "top-k", "hidden", "attention");
  for (const auto& name : list_model_zoo()) {
    const models::ModelSpec m = load_model_zoo(name);
    const std::string attn =
        m.attention == models::AttentionKind::mla
            ? fmt::format("MLA {} heads, q_lora {}, kv_lora {}", m.mla.num_heads, m.mla.q_lora_rank, m.mla.kv_lora_rank)
            : fmt::format("GQA {}/{} heads x {}", m.gqa.num_heads, m.gqa.num_kv_heads, m.gqa.head_dim);
    fmt::print("{:<18} {:>6} {:>6} {:>8} {:>7} {:>5} {:>6}  {}\n", name, m.num_layers, m.first_k_dense,
               m.num_routed_experts, m.num_shared_experts, m.top_k, m.hidden, attn);
  }
  return 0;
}

int hw_command()
{
  fmt::print("{:<8} {:<10} {:>4} {:>9} {:>9} {:>9} {:>10} {:>7}  {}\n", "profile", "kind", "SMs", "bf16 TF/s",
             "fp8 TF/s", "HBM TB/s", "NVLink GB/s", "domain", "gpu");
  for (const auto& name : list_hw_profiles()) {
    const models::HwProfile hw = load_hw_profile(name);
    auto peak = [&](models::DType t) { return hw.peak_flops_per_s.count(t) ? hw.peak_flops_per_s.at(t) / 1e12 : 0.0; };
    fmt::print("{:<8} {:<10} {:>4} {:>9.0f} {:>9.0f} {:>9.2f} {:>10.0f} {:>7}  {}\n", name, hw.provenance.kind,
               hw.sm_count, peak(models::DType::bf16), peak(models::DType::fp8), hw.hbm_bytes_per_s / 1e12,
               hw.nvlink_bytes_per_s / 1e9, hw.nvlink_domain_size, hw.gpu);
  }
  return 0;
}

} // namespace dbosim::cli
