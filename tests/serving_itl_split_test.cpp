/* dbosim tests — the ITL split's "other" share (what the steps do not explain): rounding of the serving clock is no
 * negative time, even when requests arrive 1e9 s apart (request_rate 1e-9), and a real residual is kept. */
#include "serving/ServingMetrics.hpp"
#include "serving/ServingSim.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::serving;

namespace {
/** One request that decodes 200 tokens of `step_s` each from clock `start_s`, each gap `extra_s` longer than its step
 *  (a hand-over the steps do not explain), its gaps read off the clock as the simulator does. */
ServingResult one_request(double start_s, double step_s, double extra_s)
{
  static const Request req{};
  ServingResult r;
  LiveRequest l;
  l.req           = &req;
  l.send_s        = start_s;
  double clock    = start_s;
  l.first_token_s = clock;
  r.clock.end_s   = {{clock}};
  l.tokens.add({0, 0});
  for (int k = 0; k < 200; ++k) {
    clock += step_s + extra_s;
    r.clock.end_s[0].push_back(clock);
    l.tokens.add({0, k + 1});
    l.itl_split.layers_s += step_s;
  }
  l.last_token_s = l.finish_s = clock;
  r.live.push_back(l);
  return r;
}
} // namespace

TEST_CASE("serving metrics: the ITL split's other share is clock rounding at 1e9 s, not a negative time", "[quick]")
{
  const double start_s = GENERATE(0.0, 1.0e3, 2.0e10);
  const auto split     = itl_split(one_request(start_s, 0.0123456789, 0));
  CHECK(split["other_ms"].get<double>() == 0);
  CHECK(split["mean_itl_ms"].get<double>() == Approx(12.3456789).epsilon(1e-3));
}

TEST_CASE("serving metrics: a residual the steps do not explain stays in the ITL split's other share", "[quick]")
{
  const auto split = itl_split(one_request(2.0e10, 0.0123456789, 0.001)); // 1 ms per gap, far above the rounding
  CHECK(split["other_ms"].get<double>() == Approx(1.0).epsilon(0.01));
}
