/* FileMemo: a hit needs the file's bytes unchanged, but under FixedInputs the key alone (the file not read again). */
#include "config/FileMemo.hpp"
#include "config/InputFile.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace dbosim;

namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

} // namespace

TEST_CASE("FileMemo: an edited file loads afresh, but not under FixedInputs", "[quick]")
{
  const std::string path = (std::filesystem::temp_directory_path() / "dbosim_file_memo_test.yaml").string();
  write_text(path, "a: 1\n");
  FileMemo<std::string> memo;
  int loads = 0;
  auto load = [&] {
    ++loads;
    return read_input_file(path);
  };
  CHECK(memo.get(path, path, load) == "a: 1\n");
  CHECK(memo.get(path, path, load) == "a: 1\n");
  CHECK(loads == 1);
  write_text(path, "a: 2\n");
  {
    const FixedInputs fixed;
    CHECK(FixedInputs::active());
    CHECK(memo.get(path, path, load) == "a: 1\n"); // the snapshot kept, the file not read
    CHECK(loads == 1);
  }
  CHECK_FALSE(FixedInputs::active());
  CHECK(memo.get(path, path, load) == "a: 2\n");
  CHECK(loads == 2);
  std::filesystem::remove(path);
}

TEST_CASE("FixedInputs: a kept file's bytes still go to the InputDigest alive", "[quick]")
{
  const std::string path = (std::filesystem::temp_directory_path() / "dbosim_file_memo_digest_test.yaml").string();
  write_text(path, "b: 1\n");
  FileMemo<std::string> memo;
  auto load = [&] { return read_input_file(path); };
  const InputDigest read;
  memo.get(path, path, load);
  const FixedInputs fixed;
  const InputDigest kept;
  memo.get(path, path, load);
  CHECK(kept.files() == read.files());
  CHECK(kept.hex("") == read.hex(""));
  std::filesystem::remove(path);
}
