#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using dbosim::InputError;
using dbosim::models::DType;
using dbosim::models::ModelSpec;

namespace {
std::string data(const std::string& rel) { return std::string(DBOSIM_SOURCE_DIR) + "/tests/data/" + rel; }

/** Writes `text` to a fresh temp file named `name` and returns its path. */
std::string write_temp(const std::string& name, const std::string& text)
{
  const auto dir = std::filesystem::temp_directory_path() / "dbosim_hf_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

/** The DeepSeek-V3 test config with `from` replaced by `to` (one occurrence, which must exist). */
std::string v3_with(const std::string& from, const std::string& to)
{
  std::ifstream in(data("deepseek-v3/config.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}
} // namespace

TEST_CASE("config::ModelLoader: HF config.json import equals the zoo entry", "[quick]")
{
  for (const char* name : {"deepseek-v3", "qwen3-235b-a22b"}) {
    INFO(name);
    const ModelSpec zoo = dbosim::load_model_zoo(name);
    ModelSpec hf        = dbosim::load_hf_config(data(std::string(name) + "/config.json"));
    CHECK(hf.name == name); // the directory's name, since the file is config.json
    CHECK(hf.source == data(std::string(name) + "/config.json"));
    hf.source = zoo.source;
    CHECK(hf == zoo);
  }
}

TEST_CASE("config::ModelLoader: HF key variants", "[quick]")
{
  SECTION("Mixtral: num_local_experts, experts as wide as intermediate_size, head_dim from hidden/heads")
  {
    const std::string path = write_temp("mixtral.json", R"({
      "model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "vocab_size": 32000,
      "intermediate_size": 14336, "num_local_experts": 8, "num_experts_per_tok": 2,
      "num_attention_heads": 32, "num_key_value_heads": 8, "torch_dtype": "bfloat16"})");
    ModelSpec m            = dbosim::load_hf_config(path);
    ModelSpec zoo          = dbosim::load_model_zoo("mixtral-8x7b");
    CHECK(m.name == "mixtral");
    m.name   = zoo.name;
    m.source = zoo.source;
    CHECK(m == zoo);
  }
  SECTION("Qwen2-MoE style shared expert and leading mlp_only_layers")
  {
    const std::string path = write_temp("qwen2moe.json", R"({
      "model_type": "qwen2_moe", "num_hidden_layers": 24, "hidden_size": 2048, "vocab_size": 151936,
      "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "num_experts": 60, "num_experts_per_tok": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
      "decoder_sparse_step": 1, "mlp_only_layers": [0, 1], "torch_dtype": "bfloat16"})");
    const ModelSpec m      = dbosim::load_hf_config(path);
    CHECK(m.num_shared_experts == 1);
    CHECK(m.shared_intermediate == 5632);
    CHECK(m.first_k_dense == 2);
    CHECK(m.gqa.head_dim == 128);
  }
  SECTION("no quantization_config: weights in torch_dtype")
  {
    const std::string block = R"("quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [
      128,
      128
    ]
  },)";
    const ModelSpec m       = dbosim::load_hf_config(write_temp("v3bf16.json", v3_with(block, "")));
    CHECK(m.weight_dtype == DType::bf16);
    CHECK(m.attn_dtype == DType::bf16);
  }
  SECTION("FP8 checkpoint: attention projections FP8 unless quantization_config leaves attention in BF16")
  {
    const ModelSpec fp8 = dbosim::load_hf_config(data("deepseek-v3/config.json"));
    CHECK(fp8.weight_dtype == DType::fp8);
    CHECK(fp8.attn_dtype == DType::fp8);
    const std::string kept = R"("quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.self_attn"],)";
    const ModelSpec m =
        dbosim::load_hf_config(write_temp("v3attnbf16.json", v3_with(R"("quant_method": "fp8",)", kept)));
    CHECK(m.weight_dtype == DType::fp8);
    CHECK(m.attn_dtype == DType::bf16);
  }
}

TEST_CASE("config::ModelLoader: HF import errors name the file and the key", "[quick]")
{
  auto fails = [](const std::string& name, const std::string& text) {
    const std::string path = write_temp(name, text);
    try {
      dbosim::load_hf_config(path);
    } catch (const InputError& e) {
      CHECK(e.file() == path);
      return std::string(e.what());
    }
    FAIL("no InputError for " << name);
    return std::string();
  };
  CHECK_THAT(fails("topk.json", v3_with(R"("num_experts_per_tok": 8)", R"("num_experts_per_tok": 300)")),
             Catch::Contains("num_experts_per_tok: 300 is more than the 256 routed experts (valid: 1..256)"));
  CHECK_THAT(fails("negative.json", v3_with(R"("hidden_size": 7168)", R"("hidden_size": -7168)")),
             Catch::Contains("hidden_size: -7168 is out of range"));
  CHECK_THAT(fails("type.json", v3_with(R"("num_hidden_layers": 61)", R"("num_hidden_layers": "61")")),
             Catch::Contains("num_hidden_layers: expected an integer"));
  CHECK_THAT(fails("missing.json", v3_with(R"("kv_lora_rank": 512,)", "")),
             Catch::Contains("kv_lora_rank: required key is missing"));
  CHECK_THAT(fails("llama.json", v3_with(R"("model_type": "deepseek_v3")", R"("model_type": "llama")")),
             Catch::Contains("model_type: unsupported model type 'llama'") && Catch::Contains("qwen3_moe"));
  CHECK_THAT(fails("int4.json", v3_with(R"("quant_method": "fp8")", R"("quant_method": "awq")")),
             Catch::Contains("quantization_config.quant_method: unsupported quantization 'awq' (valid: fp8)"));
  CHECK_THAT(fails("freq.json", v3_with(R"("moe_layer_freq": 1)", R"("moe_layer_freq": 2)")),
             Catch::Contains("moe_layer_freq: interleaved dense/MoE layers are not modelled"));
  CHECK_THAT(fails("syntax.json", "{\"model_type\": "), Catch::Contains("not valid JSON"));
  CHECK_THROWS_AS(dbosim::load_hf_config("/nonexistent/config.json"), InputError);
}
