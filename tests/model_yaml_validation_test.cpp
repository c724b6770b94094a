#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

using dbosim::InputError;

namespace {
std::string zoo_text()
{
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/models/zoo/deepseek-v3.yaml");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/** 1-based line of the first occurrence of `needle` in `text`. */
int line_of(const std::string& text, const std::string& needle)
{
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

/** The zoo's deepseek-v3 text with `from` replaced by `to`, loaded as "bad.yaml"; returns the error. */
InputError error_for(const std::string& from, const std::string& to, int* line = nullptr)
{
  std::string text = zoo_text();
  const auto at    = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  if (line)
    *line = line_of(text, to.substr(0, to.find(':') + 1));
  try {
    dbosim::YamlMap map(YAML::Load(text), "bad.yaml", "");
    dbosim::load_model_yaml(map);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError after replacing '" << from << "'");
  return InputError("", "");
}
} // namespace

TEST_CASE("config::ModelLoader: the zoo text itself is valid", "[quick]")
{
  dbosim::YamlMap map(YAML::Load(zoo_text()), "ok.yaml", "");
  const auto m = dbosim::load_model_yaml(map);
  CHECK(m == dbosim::load_model_zoo("deepseek-v3"));
}

TEST_CASE("config::ModelLoader: YAML errors carry file:line:col and the key", "[quick]")
{
  int line = 0;
  SECTION("top_k above the routed experts")
  {
    const InputError e = error_for("top_k: 8 ", "top_k: 300 ", &line);
    CHECK(e.line() == line);
    CHECK_THAT(e.what(), Catch::StartsWith("bad.yaml:" + std::to_string(line) + ":"));
    CHECK_THAT(e.what(), Catch::Contains("moe.top_k: 300 is more than the 256 routed experts (valid: 1..256)"));
  }
  SECTION("negative size")
  {
    const InputError e = error_for("hidden: 7168", "hidden: -7168", &line);
    CHECK(e.line() == line);
    CHECK_THAT(e.what(), Catch::Contains("hidden: -7168 is out of range (valid: 1..4194304)"));
  }
  SECTION("wrong type")
  {
    const InputError e = error_for("layers: 61", "layers: many", &line);
    CHECK(e.line() == line);
    CHECK_THAT(e.what(), Catch::Contains("layers: expected an integer (valid: 1..10000)"));
  }
  SECTION("unknown key")
  {
    const InputError e = error_for("vocab: 129280", "vocab: 129280\ncolour: blue", &line);
    CHECK_THAT(e.what(), Catch::Contains("colour: unknown key"));
  }
  SECTION("missing key")
  {
    const InputError e = error_for("  kv_lora_rank: 512\n", "");
    CHECK_THAT(e.what(), Catch::Contains("attention.kv_lora_rank: required key is missing"));
  }
  SECTION("unknown dtype")
  {
    const InputError e = error_for("weights: fp8", "weights: int3", &line);
    CHECK(e.line() == line);
    CHECK_THAT(e.what(), Catch::Contains("dtypes.weights: unknown dtype 'int3' (valid: fp32, bf16, fp16, fp8, fp4)"));
  }
  SECTION("unknown attention type")
  {
    const InputError e = error_for("type: mla", "type: linear", &line);
    CHECK_THAT(e.what(), Catch::Contains("attention.type: unknown value 'linear' (valid: mla, gqa)"));
  }
  SECTION("shared expert width without a shared expert")
  {
    const InputError e = error_for("shared_experts: 1 ", "shared_experts: 0 ", &line);
    CHECK_THAT(e.what(), Catch::Contains("moe.shared_intermediate: 2048 does not fit 0 shared experts"));
  }
  SECTION("no MoE layer left")
  {
    const InputError e = error_for("first_k_dense: 3 ", "first_k_dense: 61 ", &line);
    CHECK(e.line() == line);
    CHECK_THAT(e.what(), Catch::Contains("first_k_dense: 61 leaves no MoE layer of 61 (valid: 0..60)"));
  }
}
