#include "sim/engine/SimConfig.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dbosim::sim {

std::vector<std::string> engine_args(const std::string& program, const std::vector<std::string>& extra)
{
  std::vector<std::string> args{program,
                                "--cfg=network/model:CM02",
                                "--cfg=network/TCP-gamma:0",
                                "--cfg=network/crosstraffic:0",
                                "--log=xbt_cfg.thres:warning",
                                "--log=root.thres:warning"};
#ifdef DBOSIM_SANITIZE
  // SimGrid's raw contexts switch stacks by hand, which ASan cannot follow; real threads are clean.
  args.emplace_back("--cfg=contexts/factory:thread");
#endif
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

namespace {

/** @brief A --cfg key dbosim passes on to SimGrid, and the values it takes. A name-valued key (lo == hi == 0) is
 *  checked by the probe below; a numeric one must lie in [lo, hi] here: outside it SimGrid crashes on the first
 *  actor (a stack of 0 KiB, a negative guard), deadlocks (no concurrent activity) or rounds op times past the
 *  timeline's checks, none of which a one-host probe without actors can see. */
struct CfgKey {
  const char* key;
  double lo, hi;
  bool integer;
  const char* unit;
};

constexpr CfgKey cfg_keys[] = {
    {"contexts/factory", 0, 0, false, "thread, raw, ucontext or boost"},
    {"contexts/stack-size", 64, 1048576, true, "KiB"},
    {"contexts/guard-size", 0, 1024, true, "pages"},
    {"contexts/nthreads", 1, 1024, true, "threads"},
    {"contexts/synchro", 0, 0, false, "a synchronization name"},
    {"network/model", 0, 0, false, "a SimGrid network model"},
    {"cpu/model", 0, 0, false, "a SimGrid CPU model"},
    {"host/model", 0, 0, false, "a SimGrid host model"},
    {"cpu/optim", 0, 0, false, "Full, Lazy or TI"},
    {"network/optim", 0, 0, false, "Full or Lazy"},
    {"network/crosstraffic", 0, 0, false, "0 or 1"},
    {"network/TCP-gamma", 0, 1e12, false, "bytes"},
    {"network/latency-factor", 1e-6, 1e6, false, "x"},
    {"network/bandwidth-factor", 1e-6, 1e6, false, "x"},
    {"network/weight-S", 0, 1e12, false, "bytes"},
    {"maxmin/concurrency-limit", -1, 1e9, true, "-1: no limit"},
    {"maxmin/precision", 1e-12, 1e-5, false, "SimGrid's default 1e-5"},
    {"surf/precision", 1e-12, 1e-9, false, "s; SimGrid's default 1e-9"},
    {"exception/cutpath", 0, 0, false, "yes or no"},
};

/** @brief Why dbosim does not pass `--cfg=KEY:VALUE` on ("" when it does; a name is left to the probe). */
std::string cfg_problem(const std::string& arg, const std::string& key, const std::string& value)
{
  const CfgKey* k = nullptr;
  for (const CfgKey& c : cfg_keys)
    if (key == c.key)
      k = &c;
  if (!k) {
    std::string keys;
    for (const CfgKey& c : cfg_keys)
      keys += fmt::format("{}{}", keys.empty() ? "" : ", ", c.key);
    return fmt::format("'{}': {} is not a --cfg key dbosim passes on (those it takes: {})", arg, key, keys);
  }
  if (k->lo == 0 && k->hi == 0)
    return "";
  char* end       = nullptr;
  const double v  = std::strtod(value.c_str(), &end);
  const bool good = end != value.c_str() && *end == '\0' && std::isfinite(v) && v >= k->lo && v <= k->hi &&
                    (!k->integer || v == std::floor(v)) && !(key == "maxmin/concurrency-limit" && v == 0);
  if (good)
    return "";
  return fmt::format("'{}': {} must be {} in {}..{}{} ({})", arg, key, k->integer ? "an integer" : "a number", k->lo,
                     k->hi, key == "maxmin/concurrency-limit" ? ", not 0" : "", k->unit);
}

} // namespace

std::string simgrid_args_problem(const std::vector<std::string>& extra)
{
  if (extra.empty())
    return "";
  for (const std::string& a : extra) {
    const bool cfg = a.rfind("--cfg=", 0) == 0, log = a.rfind("--log=", 0) == 0;
    const auto colon = a.find(':');
    if (!(cfg || log) || a.size() == 6 || (cfg && (colon == std::string::npos || colon == 6 || colon + 1 == a.size())))
      return fmt::format("'{}' is not a SimGrid option dbosim passes on", a);
    if (cfg)
      if (std::string why = cfg_problem(a, a.substr(6, colon - 6), a.substr(colon + 1)); !why.empty())
        return why;
  }
  int fds[2];
  if (::pipe(fds) != 0)
    return ""; // cannot probe: let the run find out
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return "";
  }
  if (pid == 0) { // the probe: SimGrid's messages into the pipe, one engine run on a one-host platform
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0)
      ::dup2(null, STDOUT_FILENO);
    try {
      std::vector<std::string> args = engine_args("dbosim", extra);
      std::vector<char*> argv;
      for (std::string& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      int argc = static_cast<int>(args.size());
      simgrid::s4u::Engine engine(&argc, argv.data());
      auto* zone = simgrid::s4u::create_full_zone("probe");
      zone->create_host("probe0", 1.0);
      zone->seal();
      engine.run();
    } catch (const std::exception& e) {
      const std::string what        = e.what();
      [[maybe_unused]] const auto n = ::write(fds[1], what.data(), what.size());
      ::_exit(3);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string said;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0)
      said.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return "";
  // SimGrid's last CRITICAL/ERROR line (or the exception text) says why; drop its "[time] file:line: [cat/LEVEL] ".
  std::string why;
  std::size_t start = 0;
  while (start < said.size()) {
    const std::size_t end  = said.find('\n', start);
    const std::string line = said.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.find("CRITICAL]") != std::string::npos || why.empty())
      why = line;
    if (line.find("CRITICAL]") != std::string::npos)
      break;
    start = end == std::string::npos ? said.size() : end + 1;
  }
  if (const auto tag = why.find("] ", why.find("/")); why.rfind("[", 0) == 0 && tag != std::string::npos)
    why = why.substr(tag + 2);
  if (why.empty())
    why =
        WIFSIGNALED(status) ? fmt::format("SimGrid stopped with signal {}", WTERMSIG(status)) : "SimGrid refused them";
  return why;
}

} // namespace dbosim::sim
