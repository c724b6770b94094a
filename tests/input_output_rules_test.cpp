/* dbosim tests — the one input reader (size cap, directories, UTF-8) and the one output-folder rule, at the function
 * and at the CLI: every problem is an InputError (exit 2) naming the path, never a bad_alloc or exit 1. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/OutputDir.hpp"
#include "config/ScenarioLoader.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

using namespace dbosim;
using dbosim::test::run_shell;
using dbosim::test::TempDir;

namespace {
std::string error_of(const std::function<void()>& f)
{
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string default_scenario()
{
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
} // namespace

TEST_CASE("config::InputFile: directories, endless devices and non-UTF-8 paths are input errors", "[quick]")
{
  TempDir dir;
  CHECK(error_of([&] { read_input_file(dir.path()); }) == dir.path() + ": is a directory, not a file");
  CHECK(error_of([] { read_input_file("/dev/zero", 1 << 20); }) ==
        "/dev/zero: is larger than the 1 MiB limit for this kind of input (a device or an endless file?)");
  CHECK(error_of([&] { read_input_file(dir.path() + "/none.yaml"); }) == dir.path() + "/none.yaml: cannot open file");
  CHECK(error_of([&] { read_input_file(dir.path() + "/caf\xe9.yaml"); }).find("the path is not valid UTF-8") !=
        std::string::npos);
  const std::string small = dir.write("a.yaml", "x: 1\n");
  CHECK(read_input_file(small) == "x: 1\n");
  CHECK(read_input_file(small, 5) == "x: 1\n"); // exactly the cap is allowed
  CHECK_THROWS_AS(read_input_file(small, 4), InputError);
}

TEST_CASE("config::InputFile: first_invalid_utf8 finds the first bad byte", "[quick]")
{
  CHECK(first_invalid_utf8("plain ascii") == std::string::npos);
  CHECK(first_invalid_utf8("µs \xe2\x82\xac \xf0\x9f\x98\x80") == std::string::npos); // 2, 3 and 4-byte forms
  CHECK(first_invalid_utf8("caf\xe9") == 3);                                          // Latin-1
  CHECK(first_invalid_utf8("a\xc0\xaf") == 1);                                        // overlong
  CHECK(first_invalid_utf8("a\xed\xa0\x80") == 1);                                    // a surrogate
  CHECK(first_invalid_utf8("a\xf4\x90\x80\x80") == 1);                                // past U+10FFFF
  CHECK(first_invalid_utf8("ab\xe2\x82") == 2);                                       // truncated
}

TEST_CASE("config::OutputDir: one rule for every --out", "[quick]")
{
  TempDir dir;
  CHECK(error_of([] { prepare_out_dir(""); }) ==
        "--out: an empty path names no folder (it would write into the filesystem root)");
  const std::string file = dir.write("f.txt", "x");
  CHECK(error_of([&] { prepare_out_dir(file); }) == file + ": --out: exists and is not a folder");
  CHECK(error_of([&] { prepare_out_dir(file + "/sub"); }).find("cannot create the folder") != std::string::npos);
  CHECK(error_of([] { prepare_out_dir("/proc/self/dbosim-out"); }).find("--out: cannot") != std::string::npos);
  prepare_out_dir(dir.path() + "/new/nested");
  CHECK(std::filesystem::is_directory(dir.path() + "/new/nested"));
  CHECK(std::filesystem::is_empty(dir.path() + "/new/nested")); // the probe is gone
}

TEST_CASE("config::ScenarioLoader: a relative cluster.network path is relative to the scenario", "[quick]")
{
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/sub/net");
  std::filesystem::copy_file(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/network/h200.yaml",
                             dir.path() + "/sub/net/links.yaml");
  std::string yaml          = default_scenario();
  const std::string cluster = "cluster: {nodes: 1, gpus_per_node: 8}";
  yaml.replace(yaml.find(cluster), cluster.size(), "cluster: {nodes: 1, gpus_per_node: 8, network: net/links.yaml}");
  const std::string file = dir.write("sub/s.yaml", yaml);
  // From another working directory: the path must not depend on it.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  Scenario s;
  CHECK_NOTHROW(s = load_scenario(file));
  std::filesystem::current_path(cwd);
  CHECK(s.cluster.network == dir.path() + "/sub/net/links.yaml");
}

TEST_CASE("cli: a non-UTF-8 scenario file name is refused before anything runs", "[quick]")
{
  TempDir dir;
  const std::string file = dir.write("caf\xe9.yaml", default_scenario());
  int rc                 = 0;
  const std::string err =
      run_shell(std::string(DBOSIM_BINARY) + " run '" + file + "' --out '" + dir.path() + "/out' 2>&1", &rc);
  CHECK(rc == 2);
  CHECK(err.find("the path is not valid UTF-8") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path() + "/out/summary.json"));
}

TEST_CASE("config::NetworkFactsLoader: a receive kernel's fixed part longer than the call's is refused", "[quick]")
{
  TempDir dir;
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/network/h200.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "deepep_ll_dispatch_recv_fixed: {value: \"26.5us\"";
  REQUIRE(yaml.find(key) != std::string::npos);
  yaml.replace(yaml.find(key), key.size(), "deepep_ll_dispatch_recv_fixed: {value: \"40us\"");
  const std::string file = dir.write("links.yaml", yaml);
  const std::string err  = error_of([&] { load_network_facts(file); });
  CHECK(err.find(file) != std::string::npos);
  CHECK(err.find("deepep_ll_dispatch_recv_fixed") != std::string::npos);
}
