#include "sim/engine/SimConfig.hpp"

#include "config/SimgridOptions.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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

/** @brief The probe child: SimGrid's messages into `fd`, one engine run with `extra` on a one-host platform; exits 0
 *  when it ran, 3 on an exception (its text written to `fd`). */
[[noreturn]] void run_probe(const std::vector<std::string>& extra, int fd)
{
  ::dup2(fd, STDERR_FILENO);
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
    [[maybe_unused]] const auto n = ::write(fd, what.data(), what.size());
    ::_exit(3);
  }
  ::_exit(0);
}

/** @brief Why the probe failed, from what it `said`: SimGrid's last CRITICAL/ERROR line (or the exception text)
 *  without its "[time] file:line: [cat/LEVEL] "; else how it ended (`status`, waitpid's). */
std::string probe_complaint(const std::string& said, int status)
{
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

} // namespace

std::string simgrid_args_problem(const std::vector<std::string>& extra)
{
  if (extra.empty())
    return "";
  if (std::string why = simgrid_option_problem(extra); !why.empty())
    return why;
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
  if (pid == 0) { // the probe
    ::close(fds[0]);
    run_probe(extra, fds[1]);
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
  return probe_complaint(said, status);
}

} // namespace dbosim::sim
