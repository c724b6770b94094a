#include "calibrate/TableWork.hpp"

#include <functional>
#include <vector>

namespace dbosim::calib {
namespace {
using models::DType;
using models::KernelWork;
using Dims = std::map<std::string, int>;

/*** The calibration kernels (kernels/, calibrate/SuitePlan.cpp) ***/

// mla_decode: absorbed MLA, the latent K of 576 (kv_lora_rank 512 + rope 64) and V of 512 (hwprofiles/README.md)
constexpr int mla_latent_k  = 576;
constexpr int mla_latent_v  = 512;
constexpr double bf16_bytes = 2.0;

KernelWork mla_decode(const Dims& d, double batch)
{
  KernelWork w;
  w.name               = "mla_decode";
  w.efficiency         = models::Efficiency::attention;
  w.compute_dtype      = DType::bf16;
  const double context = d.at("context"), heads = d.at("heads");
  w.flops = 2.0 * batch * heads * context * (mla_latent_k + mla_latent_v);
  // the latent cache (shared by the heads) once per request, plus each head's query and output
  w.bytes = batch * context * mla_latent_k * bf16_bytes + batch * heads * (mla_latent_k + mla_latent_v) * bf16_bytes;
  return w;
}

KernelWork attention_prefill(const Dims& d, double tokens)
{
  KernelWork w;
  w.name             = "attention_prefill";
  w.efficiency       = models::Efficiency::attention;
  w.compute_dtype    = DType::bf16;
  const double heads = d.at("heads"), head_dim = d.at("head_dim");
  // causal self-attention over one prompt, v dim = qk dim (kernels/torch_attention.py): QK^T and PV over the
  // tokens (tokens + 1) / 2 query-key pairs; Q, K, V read and O written once
  w.flops = 2.0 * heads * (head_dim + head_dim) * tokens * (tokens + 1) / 2;
  w.bytes = 4.0 * tokens * heads * head_dim * bf16_bytes;
  return w;
}

/** Causal attention of `tokens` new queries at the end of `context` keys (mask aligned bottom-right,
 *  kernels/torch_serving_kernels.py), v dim = qk dim. */
KernelWork attention_prefill_ctx(const Dims& d, double tokens)
{
  KernelWork w       = attention_prefill(d, tokens);
  w.name             = "attention_prefill_ctx";
  const double heads = d.at("heads"), head_dim = d.at("head_dim"), context = d.at("context");
  const double pairs = tokens * (context - tokens) + tokens * (tokens + 1) / 2;
  w.flops            = 2.0 * heads * (head_dim + head_dim) * pairs;
  w.bytes            = 2.0 * (tokens + context) * heads * head_dim * bf16_bytes;
  return w;
}

struct Family {
  std::string name;              ///< exact family name, or a prefix ending in '_' followed by a dtype
  std::vector<std::string> dims; ///< the dims it needs
  std::function<KernelWork(const Dims&, double, DType)> work;
};

const std::vector<Family>& families()
{
  static const std::vector<Family> table = {
      {"gemm_fp8_block", // DeepSeek-style block scales: the FP8 GEMM's work
       {"n", "k"},
       [](const Dims& d, double m, DType) { return models::gemm_kernel("gemm", m, d.at("n"), d.at("k"), DType::fp8); }},
      {"gemm_",
       {"n", "k"},
       [](const Dims& d, double m, DType t) { return models::gemm_kernel("gemm", m, d.at("n"), d.at("k"), t); }},
      {"grouped_gemm_",
       {"experts", "n", "k"},
       [](const Dims& d, double per_expert, DType t) {
         const int e = d.at("experts");
         return models::grouped_gemm_kernel("grouped_gemm", per_expert * e, e, e, d.at("n"), d.at("k"), t);
       }},
      {"head_bmm_",
       {"heads", "n", "k"},
       [](const Dims& d, double t, DType w) {
         return models::head_bmm_kernel("head_bmm", t, d.at("heads"), d.at("n"), d.at("k"), w);
       }},
      {"rmsnorm",
       {"hidden"},
       [](const Dims& d, double tokens, DType) {
         return models::streaming_kernel("rmsnorm", tokens, d.at("hidden"), 1, 1, "");
       }},
      {"silu_mul",
       {"hidden"},
       [](const Dims& d, double tokens, DType) {
         return models::streaming_kernel("silu_mul", tokens, d.at("hidden"), 2, 1, "");
       }},
      {"mla_decode", {"context", "heads"}, [](const Dims& d, double b, DType) { return mla_decode(d, b); }},
      {"attention_prefill",
       {"heads", "head_dim"},
       [](const Dims& d, double t, DType) { return attention_prefill(d, t); }},
      {"attention_prefill_ctx",
       {"heads", "head_dim", "context"},
       [](const Dims& d, double t, DType) { return attention_prefill_ctx(d, t); }},
  };
  return table;
}

/** "bf16" from "grouped_gemm_bf16" or "grouped_gemm_bf16_skewed" (the skewed tables: same work, uneven experts). */
bool dtype_after(const std::string& family, const std::string& prefix, DType& out)
{
  if (family.rfind(prefix, 0) != 0)
    return false;
  std::string rest         = family.substr(prefix.size());
  const std::string skewed = "_skewed";
  if (rest.size() > skewed.size() && rest.compare(rest.size() - skewed.size(), skewed.size(), skewed) == 0)
    rest.resize(rest.size() - skewed.size());
  return models::parse_dtype(rest, out) && models::dtype_name(out) == rest;
}

} // namespace

std::optional<models::KernelWork> table_kernel_work(const std::string& family, const Dims& dims, double tokens,
                                                    std::string* missing)
{
  for (const Family& f : families()) {
    DType t              = DType::bf16;
    const bool by_prefix = f.name.back() == '_';
    if (by_prefix ? !dtype_after(family, f.name, t) : family != f.name)
      continue;
    for (const auto& d : f.dims)
      if (!dims.count(d)) {
        if (missing)
          *missing = "dims has no '" + d + "'";
        return std::nullopt;
      }
    return f.work(dims, tokens, t);
  }
  if (missing)
    *missing = "no work model for table family '" + family + "'";
  return std::nullopt;
}

std::string table_work_families()
{
  return "gemm_<dtype>, gemm_fp8_block, grouped_gemm_<dtype>, grouped_gemm_<dtype>_skewed, head_bmm_<dtype>, rmsnorm, "
         "silu_mul, mla_decode, attention_prefill, attention_prefill_ctx";
}

} // namespace dbosim::calib
