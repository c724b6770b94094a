#include "validate/ChildSim.hpp"

#include "config/InputError.hpp"
#include "sim/ScheduleRegistry.hpp"
#include "sim/TimelineEngine.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

namespace dbosim::validate {

static std::string simulate_here(const sim::StepPlan& plan)
{
  const sim::Schedule sched = sim::build_schedule(plan);
  sim::TimelineEngine engine(sched, plan);
  const sim::Timeline tl = engine.run(1);
  nlohmann::json ops     = nlohmann::json::array();
  for (sim::OpVertex v : sched.issue_order) {
    const sim::Op& op = sched.graph[v];
    ops.push_back({sim::op_kind_name(op.kind), op.layer, op.ubatch, static_cast<int>(op.stream), tl.ops[v].start_us,
                   tl.ops[v].end_us});
  }
  return ops.dump();
}

Prediction simulate_in_child(const sim::StepPlan& plan)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw InternalError("validate: pipe failed");
  const pid_t pid = fork();
  if (pid < 0)
    throw InternalError("validate: fork failed");
  if (pid == 0) {
    close(fds[0]);
    int rc = 0;
    try {
      const std::string s = simulate_here(plan);
      std::size_t off     = 0;
      while (off < s.size()) {
        const ssize_t n = write(fds[1], s.data() + off, s.size() - off);
        if (n <= 0)
          break;
        off += static_cast<std::size_t>(n);
      }
    } catch (...) {
      rc = 1;
    }
    close(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty())
    throw InternalError("validate: the engine child failed for schedule " + plan.schedule);
  Prediction p;
  double lo = 1e300, hi = 0;
  for (const auto& o : nlohmann::json::parse(text)) {
    PredictedOp op{o[0].get<std::string>(), o[1].get<int>(),    o[2].get<int>(),
                   o[3].get<int>(),         o[4].get<double>(), o[5].get<double>()};
    lo = std::min(lo, op.start_us);
    hi = std::max(hi, op.end_us);
    p.ops.push_back(op);
  }
  p.makespan_us = p.ops.empty() ? 0 : hi - lo;
  return p;
}

} // namespace dbosim::validate
