#include "TempDir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

TEST_CASE("hardening: a sweep killed mid-run leaves no partial file that looks complete", "[slow]")
{
  dbosim::test::TempDir dir;
  const std::string out      = dir.path() + "/sweep";
  const std::string scenario = std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_serving_ep_sweep.yaml";
  const pid_t pid            = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0); // its own process group: the kill reaches every point's process too
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(DBOSIM_BINARY, DBOSIM_BINARY, "sweep", scenario.c_str(), "--out", out.c_str(), "-j", "2", nullptr);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  // Wait until some points have finished (their summary.json exists), then kill everything at once.
  auto finished_points = [&] {
    int n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(out, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      n += it->path().filename() == "summary.json";
    return n;
  };
  for (int i = 0; i < 600 && finished_points() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(finished_points() >= 2);
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));

  // Whatever is left under its final name is complete: JSON parses, CSV ends with a newline. A file cut short
  // can only carry a temporary name (*.tmp.<pid>). The sweep's own table (sweep.csv) is written last.
  CHECK_FALSE(fs::exists(out + "/sweep.csv"));
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (!entry.is_regular_file())
      continue;
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp.") != std::string::npos)
      continue; // an interrupted write, named as such
    std::stringstream text;
    text << std::ifstream(entry.path()).rdbuf();
    const std::string content = text.str();
    INFO(entry.path().string());
    if (entry.path().extension() == ".json") {
      CHECK_NOTHROW(nlohmann::json::parse(content));
      ++checked;
    } else if (entry.path().extension() == ".csv") {
      CHECK((!content.empty() && content.back() == '\n'));
      ++checked;
    }
  }
  CHECK(checked >= 2);
}
