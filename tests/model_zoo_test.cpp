#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using dbosim::InputError;
using dbosim::models::AttentionKind;
using dbosim::models::DType;
using dbosim::models::ModelSpec;

TEST_CASE("config::ModelLoader: every zoo model loads and is consistent", "[quick]")
{
  const auto names = dbosim::list_model_zoo();
  for (const char* wanted : {"deepseek-v3", "deepseek-r1", "deepseek-v2-lite", "kimi-k2", "qwen3-235b-a22b",
                             "qwen3-30b-a3b", "mixtral-8x7b"})
    CHECK(std::find(names.begin(), names.end(), wanted) != names.end());
  for (const auto& name : names) {
    INFO(name);
    const ModelSpec m = dbosim::load_model_zoo(name);
    CHECK(m.name == name);
    CHECK(m.source.find("huggingface.co") != std::string::npos);
    CHECK(m.num_moe_layers() > 0);
    CHECK(m.top_k <= m.num_routed_experts);
  }
}

TEST_CASE("config::ModelLoader: zoo facts (HF config.json)", "[quick]")
{
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  CHECK(v3.num_layers == 61);
  CHECK(v3.first_k_dense == 3);
  CHECK(v3.num_moe_layers() == 58);
  CHECK(v3.attention == AttentionKind::mla);
  CHECK(v3.mla.kv_lora_rank == 512);
  CHECK(v3.weight_dtype == DType::fp8);
  CHECK(v3.attn_dtype == DType::fp8); // the FP8 checkpoint's attention projections are block-quantized too

  // DeepSeek-R1 is the V3 architecture: equal apart from its name and source
  ModelSpec r1 = dbosim::load_model_zoo("deepseek-r1");
  r1.name      = v3.name;
  r1.source    = v3.source;
  CHECK(r1 == v3);

  const ModelSpec kimi = dbosim::load_model_zoo("kimi-k2");
  CHECK(kimi.num_routed_experts == 384);
  CHECK(kimi.mla.num_heads == 64);
  CHECK(kimi.first_k_dense == 1);

  const ModelSpec lite = dbosim::load_model_zoo("deepseek-v2-lite");
  CHECK(lite.mla.q_lora_rank == 0);
  CHECK(lite.shared_intermediate == 2 * 1408);

  const ModelSpec qwen = dbosim::load_model_zoo("qwen3-30b-a3b");
  CHECK(qwen.attention == AttentionKind::gqa);
  CHECK(qwen.num_shared_experts == 0);
  CHECK(qwen.gqa.num_kv_heads == 4);

  const ModelSpec mix = dbosim::load_model_zoo("mixtral-8x7b");
  CHECK(mix.moe_intermediate == 14336);
  CHECK(mix.top_k == 2);
}

TEST_CASE("config::ModelLoader: unknown zoo model lists the valid names", "[quick]")
{
  CHECK_THROWS_WITH(dbosim::load_model_zoo("gpt-7"), Catch::Contains("unknown model 'gpt-7'") &&
                                                         Catch::Contains("deepseek-v3") &&
                                                         Catch::Contains("mixtral-8x7b"));
}

TEST_CASE("config::ModelLoader: the zoo table for `dbosim models`", "[quick]")
{
  const std::string table = dbosim::model_zoo_table();
  CHECK(table.find("deepseek-v3") != std::string::npos);
  CHECK(table.find("256+1 shared") != std::string::npos);
  CHECK(table.find("MLA 128 heads") != std::string::npos);
  CHECK(table.find("GQA 64 q / 4 kv heads x 128") != std::string::npos);
}

TEST_CASE("config::ModelLoader: DBOSIM_HOME relocates the zoo", "[quick]")
{
  namespace fs        = std::filesystem;
  const fs::path home = fs::temp_directory_path() / "dbosim_zoo_home_test";
  fs::create_directories(home / "models" / "zoo");
  fs::copy_file(fs::path(DBOSIM_SOURCE_DIR) / "models" / "zoo" / "qwen3-30b-a3b.yaml",
                home / "models" / "zoo" / "qwen3-30b-a3b.yaml", fs::copy_options::overwrite_existing);
  const char* old         = std::getenv("DBOSIM_HOME");
  const std::string saved = old ? old : "";
  setenv("DBOSIM_HOME", home.c_str(), 1);
  const auto names = dbosim::list_model_zoo();
  if (saved.empty())
    unsetenv("DBOSIM_HOME");
  else
    setenv("DBOSIM_HOME", saved.c_str(), 1);
  fs::remove_all(home);
  CHECK(names == std::vector<std::string>{"qwen3-30b-a3b"});
}
