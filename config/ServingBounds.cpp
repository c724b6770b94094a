/* dbosim — the bounds a serving run is held to before it starts (config/ServingBounds.hpp). */
#include "config/ServingBounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dbosim {

double serving_running_cap(const Scenario& s, double requests)
{
  double cap = requests;
  if (s.requests.max_concurrency > 0)
    cap = std::min(cap, double(s.requests.max_concurrency));
  return std::max(1.0, std::min(cap, double(s.scheduler.max_num_seqs) * s.parallel.dp));
}

double min_serving_steps(const Scenario& s, double requests, double output_tokens, double longest_output)
{
  const double per_step = s.speculative.tokens_per_request();
  return std::max(std::ceil(output_tokens / (serving_running_cap(s, requests) * per_step)),
                  std::ceil(longest_output / per_step));
}

std::optional<StepBoundProblem> serving_steps_problem(const Scenario& s, double requests, double output_tokens,
                                                      double longest_output)
{
  const double steps = min_serving_steps(s, requests, output_tokens, longest_output);
  if (steps <= max_serving_steps)
    return std::nullopt;
  const double cap      = serving_running_cap(s, requests);
  const double per_step = s.speculative.tokens_per_request();
  return StepBoundProblem{
      fmt::format("{:.0f} requests of {:.0f} output tokens in all, at most {:.0f} running at once (max_concurrency; "
                  "scheduler.max_num_seqs x dp) and {:.0f} token(s) each a step: at least {:.0f} steps; a serving run "
                  "is bounded at {:.0f} steps (each is scheduled, priced and written to steps.csv)",
                  requests, output_tokens, cap, per_step, steps, max_serving_steps),
      fmt::format("at most {:.0f} output tokens at this concurrency, or more requests running at once",
                  max_serving_steps * cap * per_step)};
}

} // namespace dbosim
