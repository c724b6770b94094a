#include "models/StepWork.hpp"

#include <fmt/format.h>

namespace dbosim::models {
namespace {
constexpr const char* src_model   = "vllm/model_executor/models/deepseek_v2.py: DeepseekV2Model.forward";
constexpr const char* src_logits  = "vllm/model_executor/layers/logits_processor.py: LogitsProcessor.forward";
constexpr const char* src_sampler = "vllm/v1/sample/sampler.py: Sampler.forward";
} // namespace

std::vector<KernelWork> step_work_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const double t        = s.tokens;
  const double sampling = s.tokens > 0 ? s.batch : 0; // positions whose logits are computed
  const int vocab       = m.vocab / par.tp;
  std::vector<KernelWork> out;
  // Embedding lookup: reads one row of the table and writes it, per token.
  out.push_back(launched_at(streaming_kernel("embed_tokens", t, m.hidden, 1, 1, ""),
                            source_note(src_model, " (embed_tokens)"), "gather"));
  out.push_back(launched_at(streaming_kernel("final_norm", t, m.hidden, 2, 1, "rmsnorm"),
                            source_note(src_model, " (norm, fused residual add)")));
  // The LM head is an unquantized BF16 linear in every zoo checkpoint (FP8 and NVFP4 checkpoints leave it out) unless
  // precision.lm_head sets a format.
  out.push_back(launched_at(gemm_kernel("lm_head", sampling, vocab, m.hidden, linear_format(m, OpClass::lm_head)),
                            source_note(src_logits, " (lm_head)")));
  // The sampler reads each sampled position's logits (fp32) at least once: greedy argmax or top-k/top-p.
  KernelWork sample = streaming_kernel("sampler", sampling, vocab, 2, 0, "");
  out.push_back(launched_at(sample, src_sampler, "sampling"));
  return out;
}

OpCost step_work_cost(const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par, const StepShape& s)
{
  OpCost c = sum_kernels(hw, OpKind::A0, "gemm", step_work_kernels(m, par, s));
  // sum_kernels names the op by its kind; this one is the step's work outside the layers.
  const auto eq = c.method.find(" = ");
  c.method      = "step work" + (eq == std::string::npos ? std::string() : c.method.substr(eq));
  return c;
}

StepShape step_work_key(const StepShape& s)
{
  StepShape key;
  key.tokens = s.tokens;
  key.batch  = s.batch;
  return key;
}

} // namespace dbosim::models
