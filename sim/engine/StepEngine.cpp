#include "sim/engine/StepEngine.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

std::string replay_inexact_reason(const StepPlan& plan)
{
  if (plan.gpu.comm_uses_sms)
    return "its dispatch/combine kernels hold SMs beside compute (an SM-resident backend: the two streams share the "
           "GPU, which only SimGrid's sharing model prices)";
  if (plan.host.host_sync_after_comm)
    return "the host synchronizes after each dispatch/combine (host_sync_after_comm), which only SimGrid models";
  return {};
}

void refuse_inexact_replay(const std::string& what, const std::string& why)
{
  throw InputError(what, 0, 0, "", fmt::format("the max-plus replay is not exact for this step: {}", why),
                   "--engine simgrid, or auto (the replay where it is exact, SimGrid elsewhere)");
}

} // namespace dbosim::sim
