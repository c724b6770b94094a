/* dbosim tests — MLA decode below the shortest measured KV length. The H200's FlashMLA tables start at 512 tokens of
 * context; shorter contexts take the line through the 512 and 1024 tables (models/KernelCost between_tables). Checked
 * against FlashMLA itself measured on an H100 at contexts 64-1024 (tests/data/calib/h100_flashmla_decode.jsonl, run
 * 12 in docs/calibration-runs.md), priced on the h100 profile, whose tables are the H200's derived to the H100's HBM.
 */
#include "calibrate/Stats.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "models/AttentionOps.hpp"
#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::models;

namespace {

struct Point {
  int heads = 0, context = 0, batch = 0;
  double measured_us = 0;
};

std::vector<Point> h100_points()
{
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/h100_flashmla_decode.jsonl");
  std::vector<Point> out;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json r = nlohmann::json::parse(line);
    REQUIRE(r.at("info").at("gpu").get<std::string>().find("H100") != std::string::npos);
    const auto& p = r.at("params");
    out.push_back({static_cast<int>(p.at("heads").get<double>()), static_cast<int>(p.at("context").get<double>()),
                   static_cast<int>(p.at("tokens").get<double>()), r.at("us").get<double>()});
  }
  return out;
}

/** The FlashMLA call of one decode step of `p`'s shape (DeepSeek-V3's 128 heads split over tp = 128 / heads). */
KernelWork mla_decode_kernel(const ModelSpec& m, const Point& p)
{
  ParallelSpec par;
  par.tp = 128 / p.heads;
  StepShape s;
  s.phase = Phase::decode, s.tokens = p.batch, s.batch = p.batch, s.context_len = p.context;
  for (const KernelWork& k : a1_context_kernels(m, par, s))
    if (k.name == "mla_decode")
      return k;
  FAIL("no mla_decode kernel in A1's context kernels");
  return {};
}

double median_abs_error_pct(std::vector<double> e)
{
  for (double& x : e)
    x = std::abs(x);
  return calib::median(std::move(e));
}

} // namespace

TEST_CASE("models::KernelCost: MLA decode below the shortest measured context, checked on an H100's FlashMLA",
          "[quick]")
{
  const HwProfile hw              = load_hw_profile("h100");
  const ModelSpec m               = load_model_zoo("deepseek-v3");
  const std::vector<Point> points = h100_points();
  REQUIRE(points.size() == 390);                       // 3 head counts x 10 contexts x 13 batches
  std::map<int, std::vector<double>> priced, roofline; // by context: the errors in %
  for (const Point& p : points) {
    if (p.context > 1024)
      continue;
    const KernelWork k  = mla_decode_kernel(m, p);
    KernelWork no_table = k;
    no_table.table_family.clear();
    no_table.table_interp_dim.clear();
    priced[p.context].push_back(100 * (kernel_time(hw, k).us / p.measured_us - 1));
    roofline[p.context].push_back(100 * (kernel_time(hw, no_table).us / p.measured_us - 1));
  }
  std::string table = fmt::format("{:>8} {:>22} {:>22}\n", "context", "median |err| priced", "median |err| roofline");
  for (const auto& [context, e] : priced)
    table += fmt::format("{:>8} {:>21.1f}% {:>21.1f}%\n", context, median_abs_error_pct(e),
                         median_abs_error_pct(roofline.at(context)));
  WARN("FlashMLA decode on an H100 against the h100 profile's price:\n" << table);
  // The derived tables where they were measured on the H200 (512, 1024), and the line below them.
  CHECK(median_abs_error_pct(priced.at(1024)) < 10);
  CHECK(median_abs_error_pct(priced.at(512)) < 10);
  CHECK(median_abs_error_pct(priced.at(256)) < 15);
  CHECK(median_abs_error_pct(priced.at(128)) < 30);
  CHECK(median_abs_error_pct(priced.at(64)) < 45);
  // Below 512 the line is closer than the roofline these contexts took before.
  for (int context : {64, 128, 256})
    CHECK(median_abs_error_pct(priced.at(context)) < median_abs_error_pct(roofline.at(context)));
}
