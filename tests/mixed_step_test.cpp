/* A mixed step (prompt chunks beside decoding requests): the decoding requests run on the decode attention path and
 * only the prompt part's context is up-projected (MLA) or read as prefill pairs (GQA); the serving scheduler counts
 * the decode part, the buckets keep it a valid shape, and DBO's slices carry the decodes first. */
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "models/AttentionOps.hpp"
#include "models/OpCost.hpp"
#include "models/OpMemo.hpp"
#include "models/PrefillAttention.hpp"
#include "serving/RankScheduler.hpp"
#include "serving/StepKey.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::models;

namespace {
StepShape shape(Phase phase, int tokens, int batch, int context)
{
  StepShape s;
  s.phase = phase, s.tokens = tokens, s.batch = batch, s.context_len = context;
  return s;
}

/** One 512-token prompt chunk at context 2048 beside `decodes` requests decoding at context `decode_ctx`. */
StepShape mixed(int decodes, int decode_ctx)
{
  StepShape s          = shape(Phase::prefill, 512 + decodes, 1 + decodes, 2048);
  s.decode_tokens      = decodes;
  s.decode_batch       = decodes;
  s.decode_context_len = decode_ctx;
  return s;
}

double a1_us(const ModelSpec& m, const HwProfile& hw, const StepShape& s)
{
  return sum_kernels(hw, OpKind::A1, "attention", attention_a1_kernels(m, ParallelSpec{}, s, false)).duration_us;
}

double a0_us(const ModelSpec& m, const HwProfile& hw, const StepShape& s)
{
  return sum_kernels(hw, OpKind::A0, "attention", attention_a0_kernels(m, ParallelSpec{}, s)).duration_us;
}

const KernelWork* find_kernel(const std::vector<KernelWork>& ks, const std::string& name)
{
  for (const KernelWork& k : ks)
    if (k.name == name)
      return &k;
  return nullptr;
}
} // namespace

TEST_CASE("models: a mixed MLA step up-projects only its prompt part and decodes the rest absorbed", "[quick]")
{
  const HwProfile hw = load_hw_profile("h200");
  const ModelSpec v3 = load_model_zoo("deepseek-v3");
  const StepShape s  = mixed(128, 4096);

  const std::vector<KernelWork> a0 = attention_a0_kernels(v3, ParallelSpec{}, s);
  const KernelWork* kv_b           = find_kernel(a0, "kv_b_proj");
  REQUIRE(kv_b != nullptr);
  // One prompt request at context 2048: 2048 rows up-projected to 128 heads x (128 + 128), over a 512-wide latent.
  CHECK(kv_b->flops == Approx(2.0 * 2048 * 128 * 256 * 512));

  const std::vector<KernelWork> a1 = attention_a1_kernels(v3, ParallelSpec{}, s, false);
  const KernelWork* dec            = find_kernel(a1, "mla_decode");
  const KernelWork* pre            = find_kernel(a1, "attention_prefill");
  REQUIRE(dec != nullptr);
  REQUIRE(pre != nullptr);
  CHECK(dec->table_tokens == 128);
  CHECK(dec->table_dims.at("context") == 4096);
  // The prompt's pairs alone: 512 x (2048 - 512) + 512 x 513 / 2.
  CHECK(pre->flops == Approx(2.0 * 128 * (192 + 128) * (512.0 * 1536 + 512.0 * 513 / 2)));

  // A1's attention is the two parts' (the o_proj and the tail run over all 640 tokens once).
  const double parts =
      a1_us(v3, hw, shape(Phase::prefill, 512, 1, 2048)) + a1_us(v3, hw, shape(Phase::decode, 128, 128, 4096));
  const double whole = a1_us(v3, hw, s);
  CHECK(whole < parts);
  CHECK(whole > a1_us(v3, hw, shape(Phase::prefill, 512, 1, 2048)));

  // Priced as a prefill of every request (no decode part), the 128 decoding requests' 4096-token contexts would be
  // up-projected and attended as prompt pairs: far more.
  const StepShape as_prefill = shape(Phase::prefill, 640, 129, (2048 + 128 * 4096) / 129);
  CHECK(a0_us(v3, hw, as_prefill) + a1_us(v3, hw, as_prefill) > 3 * (a0_us(v3, hw, s) + a1_us(v3, hw, s)));
}

TEST_CASE("models: a mixed GQA step reads the decoding requests' pairs in the same varlen kernel", "[quick]")
{
  const ModelSpec q3 = load_model_zoo("qwen3-235b-a22b");
  const StepShape s  = mixed(64, 1000);
  const KernelWork k = prefill_attention_kernel(q3, ParallelSpec{}, s);
  const int h        = q3.gqa.num_heads;
  // 512 x 1536 + 512 x 513 / 2 prompt pairs plus 64 queries over 1000 keys each.
  CHECK(k.flops == Approx(2.0 * h * 2.0 * q3.gqa.head_dim * (512.0 * 1536 + 512.0 * 513 / 2 + 64.0 * 1000)));
}

TEST_CASE("models: a decode part outside its step is refused", "[quick]")
{
  const HwProfile hw = load_hw_profile("h200");
  const ModelSpec v3 = load_model_zoo("deepseek-v3");
  CommSetup comm;
  StepShape bad = mixed(8, 4096);
  bad.phase     = Phase::decode;
  CHECK_THROWS_AS(layer_costs(v3, hw, ParallelSpec{}, bad, false, comm), std::invalid_argument);
  bad              = mixed(8, 4096);
  bad.decode_batch = 10; // more decoding requests than the step holds beside its prompt's tokens
  CHECK_THROWS_AS(layer_costs(v3, hw, ParallelSpec{}, bad, false, comm), std::invalid_argument);
  bad                    = mixed(8, 4096);
  bad.decode_context_len = 0;
  CHECK_THROWS_AS(layer_costs(v3, hw, ParallelSpec{}, bad, false, comm), std::invalid_argument);
  CHECK_NOTHROW(layer_costs(v3, hw, ParallelSpec{}, mixed(8, 4096), false, comm));
}

TEST_CASE("serving::Buckets: a mixed key's decode part stays a shape the cost model accepts", "[quick]")
{
  const HwProfile hw = load_hw_profile("h200");
  const ModelSpec v3 = load_model_zoo("deepseek-v3");
  CommSetup comm;
  serving::Buckets b;
  for (int prompts : {1, 3})
    for (int decodes : {1, 7, 100, 383})
      for (int per_decode : {1, 2})
        for (int ctx : {20, 1070, 9000}) {
          serving::StepKey e;
          e.phase                  = Phase::prefill;
          e.decode_batch           = decodes;
          e.decode_tokens          = decodes * per_decode;
          e.decode_context_len     = ctx;
          e.batch                  = prompts + decodes;
          e.tokens                 = e.decode_tokens + 300 * prompts;
          e.context_len            = 700;
          const serving::StepKey k = b.bucket(e);
          INFO(e.to_string() << " -> " << k.to_string());
          CHECK(k.batch - k.decode_batch == prompts);
          CHECK(k.decode_batch >= decodes);
          CHECK(k.tokens >= e.tokens);
          CHECK_NOTHROW(layer_costs(v3, hw, ParallelSpec{}, k, false, comm));
        }
}

TEST_CASE("serving::RankScheduler: a step counts its decoding requests apart from the prompt chunks", "[quick]")
{
  SchedulerConfig cfg;
  cfg.max_num_batched_tokens = 100;
  cfg.max_num_seqs           = 8;
  serving::RankScheduler sch(cfg, 1000);
  std::vector<serving::Request> reqs(2);
  std::vector<serving::LiveRequest> live(2);
  reqs[0].input_len  = 10;
  reqs[0].output_len = 5;
  reqs[1].input_len  = 300;
  reqs[1].output_len = 5;
  for (int i = 0; i < 2; ++i)
    live[i].req = &reqs[i];
  sch.add(&live[0]);
  serving::RankStep first = sch.schedule(); // the short prompt whole
  CHECK(first.decode_batch == 0);
  sch.complete(first, 1.0, {}, false);
  sch.add(&live[1]);
  const serving::RankStep second = sch.schedule(); // request 0 decodes; request 1's first chunk of 99 tokens
  CHECK_FALSE(second.all_decode);
  CHECK(second.decode_batch == 1);
  CHECK(second.decode_tokens == 1);
  CHECK(second.decode_context_sum == 11);
  CHECK(second.tokens == 100);
  CHECK(second.context_sum == 11 + 99);
}

TEST_CASE("models::AttentionMemo: A0 and A1 kept by their kernels' keys are the whole costing's, bit for bit",
          "[quick]")
{
  // Shapes that share a key with other context lengths, MTP decode, a mixed step with and without a prompt part, a
  // whole prompt, in an order where each key's first shape is not the one asked again.
  std::vector<StepShape> shapes{shape(Phase::decode, 16, 16, 4096),
                                shape(Phase::decode, 16, 16, 1000),
                                shape(Phase::decode, 16, 12, 333),
                                shape(Phase::decode, 32, 16, 2000),
                                mixed(8, 3000),
                                mixed(8, 500),
                                shape(Phase::prefill, 512, 1, 2048),
                                shape(Phase::prefill, 512, 2, 700)};
  StepShape decodes_only = mixed(8, 900); // a prefill-phase step whose requests all decode (no prompt part)
  decodes_only.tokens = decodes_only.batch = 8;
  shapes.push_back(decodes_only);
  shapes.push_back(mixed(8, 4000));
  StepShape more_decodes = mixed(16, 1500); // the same 520 tokens, split 16 decoding + a 504-token chunk
  more_decodes.tokens    = 520;
  shapes.push_back(more_decodes);
  const HwProfile hw = load_hw_profile("h200");
  for (const char* name : {"deepseek-v3", "qwen3-30b-a3b"}) {
    const ModelSpec m = load_model_zoo(name);
    AttentionMemo memo;
    for (const StepShape& s : shapes)
      for (const bool moe : {false, true}) {
        CAPTURE(name, s.phase == Phase::decode, s.tokens, s.batch, s.context_len, s.decode_tokens, moe);
        const OpCost whole_a0 = sum_kernels(hw, OpKind::A0, "gemm", attention_a0_kernels(m, ParallelSpec{}, s));
        const OpCost whole_a1 = attention_a1_cost(m, hw, ParallelSpec{}, s, moe, CommSetup{});
        for (const auto& [kept, whole] :
             {std::make_pair(memo.a0(m, hw, ParallelSpec{}, s), whole_a0),
              std::make_pair(memo.a1(m, hw, ParallelSpec{}, s, moe, CommSetup{}), whole_a1)}) {
          CHECK(kept.kind == whole.kind);
          CHECK(kept.duration_us == whole.duration_us);
          CHECK(kept.flops == whole.flops);
          CHECK(kept.bytes == whole.bytes);
          CHECK(kept.weight_bytes == whole.weight_bytes);
          CHECK(kept.bound == whole.bound);
          CHECK(kept.kernels == whole.kernels);
          CHECK(kept.launch_split == whole.launch_split);
          CHECK(kept.sm_family == whole.sm_family);
          CHECK(kept.parts.empty());
        }
      }
    // Keys: A0 by tokens (decode) or tokens and whether a prompt part runs (prefill): decode 16 (three shapes) and
    // 32, prefill 520 (four), 512 (two) and 8; A1 by tokens and which context kernels run: the same five, each for
    // the dense and the MoE layers.
    CHECK(memo.keys().first == 5);
    CHECK(memo.keys().second == 10);
  }
}

TEST_CASE("models::ContextOpMemo: a context kernel its op does not launch once is an internal error", "[quick]")
{
  const HwProfile hw = load_hw_profile("h200");
  const ModelSpec m  = load_model_zoo("deepseek-v3");
  const StepShape s  = shape(Phase::decode, 16, 16, 1000);
  ContextOpMemo memo;
  KernelWork stray = attention_a1_kernels(m, ParallelSpec{}, s, true).front();
  stray.name       = "not_in_the_list";
  auto kernels     = [&] { return attention_a1_kernels(m, ParallelSpec{}, s, true); };
  CHECK_THROWS_AS(memo.cost(hw, OpKind::A1, "attention", {s, true}, {stray}, kernels), InternalError);
  // a key's context kernels must not change in number between calls
  CHECK_NOTHROW(memo.cost(hw, OpKind::A1, "attention", {s, true}, a1_context_kernels(m, ParallelSpec{}, s), kernels));
  CHECK_THROWS_AS(memo.cost(hw, OpKind::A1, "attention", {s, true}, {}, kernels), InternalError);
}
