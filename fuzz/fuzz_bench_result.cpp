/* libFuzzer target: a serving benchmark's result, vLLM JSON or SGLang JSON lines (`dbosim validate --bench-result`),
 * read with the format told from its fields and read as each format. */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "validate/BenchResult.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string path = dbosim::fuzz::input_file(data, size, ".bench.json");
  for (const auto format :
       {std::optional<dbosim::validate::BenchFormat>{}, std::optional{dbosim::validate::BenchFormat::vllm},
        std::optional{dbosim::validate::BenchFormat::sglang}}) {
    try {
      dbosim::validate::load_bench_result(path, format, 0);
    } catch (const dbosim::InputError&) {
    }
  }
  return 0;
}
