/* dbosim tests — the plan's analysis on hand-made results: SLO filter, replicas for the demand, fewest GPUs per
 * hardware, the Pareto frontier and the DBO gain over the twin point. */
#include "TempDir.hpp"
#include "plan/PlanAnalysis.hpp"
#include "plan/PlanReport.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::plan;
using nlohmann::json;

namespace {
PointResult result(std::size_t index, const std::string& hw, const std::string& dbo, int gpus, double tput,
                   double per_user, double itl_p99)
{
  PointResult r;
  r.point.index  = index;
  r.point.keys   = {"hardware", "overlap.enable_dbo"};
  r.point.values = {hw, dbo};
  r.hardware     = hw;
  r.status       = "ok";
  r.serving      = json{{"output_throughput", tput},
                   {"output_throughput_per_gpu", tput / gpus},
                   {"output_throughput_per_user", per_user},
                   {"gpus", gpus},
                   {"p99_itl_ms", itl_p99}};
  return r;
}

PlanSpec spec_with(double demand, double itl_slo_ms)
{
  PlanSpec s;
  s.demand_metric = "output_throughput";
  s.demand        = demand;
  s.slos          = {{"p99_itl_ms", itl_slo_ms}};
  return s;
}
} // namespace

TEST_CASE("plan analysis: SLOs, replicas, fewest GPUs per hardware", "[quick][plan]")
{
  std::vector<PointResult> rs{
      result(0, "h200", "false", 8, 4000, 20, 40),  // 3 replicas: 24 GPUs
      result(1, "h200", "true", 8, 5000, 18, 45),   // 2 replicas: 16 GPUs
      result(2, "b200", "false", 16, 9000, 25, 60), // misses the SLO
      result(3, "b200", "true", 16, 12000, 22, 30), // 1 replica: 16 GPUs, fewer GPU-hours than point 1
  };
  rs.back().point.values = {"b200", "true"};
  const PlanAnalysis an  = analyse(spec_with(10000, 50), rs);
  CHECK(an.points[0].slo_ok);
  CHECK_FALSE(an.points[2].slo_ok);
  CHECK(an.points[2].slo_margin[0] == Approx(1 - 60.0 / 50));
  CHECK(an.points[0].replicas == 3);
  CHECK(an.points[0].gpus_for_demand == 24);
  CHECK(an.points[0].capacity_margin == Approx(0.2));
  CHECK(an.points[1].gpus_for_demand == 16);
  CHECK(an.best_per_hw.at("h200") == 1);
  CHECK(an.best_per_hw.at("b200") == 3);
  REQUIRE(an.recommended);
  CHECK(*an.recommended == 3); // ties on GPUs with point 1, fewer GPU-hours per token
  CHECK(an.points[3].gpu_hours_per_mtok == Approx(16 * 1e6 / 12000 / 3600));

  // DBO gain: over the twin with DBO off (same hardware).
  REQUIRE(an.points[1].dbo_gain);
  CHECK(*an.points[1].dbo_gain == Approx(5000.0 / 4000 - 1));
  CHECK_FALSE(an.points[0].dbo_gain);

  // Pareto per hardware: on h200, point 0 has more tok/s/user, point 1 more tok/s/GPU: both on the frontier.
  CHECK(an.points[0].pareto);
  CHECK(an.points[1].pareto);
  // On b200 point 3 has more tok/s/GPU but less tok/s/user than point 2: both stay.
  CHECK(an.points[2].pareto);
  rs[2].serving["output_throughput_per_user"] = 21.0; // now dominated by point 3
  CHECK_FALSE(analyse(spec_with(10000, 50), rs).points[2].pareto);
}

TEST_CASE("plan analysis: no point meets the SLOs, failed points count for nothing", "[quick][plan]")
{
  std::vector<PointResult> rs{result(0, "h200", "false", 8, 4000, 20, 40), result(1, "h200", "true", 8, 5000, 18, 45)};
  rs[1].status          = "failed";
  const PlanAnalysis an = analyse(spec_with(10000, 10), rs);
  CHECK_FALSE(an.recommended);
  CHECK(an.best_per_hw.empty());
  CHECK_FALSE(an.points[1].ok);
  CHECK_FALSE(an.points[0].dbo_gain);
}

TEST_CASE("plan analysis: points.csv has one hardware column when hardware is swept", "[quick][plan]")
{
  const std::vector<PointResult> rs{result(0, "h200", "false", 8, 4000, 20, 40),
                                    result(1, "b200", "false", 8, 5000, 18, 45)};
  const PlanSpec spec      = spec_with(10000, 50);
  const std::string csv    = points_csv(spec, rs, analyse(spec, rs));
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header.rfind("point,hardware,overlap.enable_dbo,status,", 0) == 0);
  CHECK(header.find("hardware") == header.rfind("hardware"));
  CHECK(csv.find("\n1,b200,false,ok,") != std::string::npos);
}
