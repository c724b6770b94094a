#include "calibrate/StageCheck.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace dbosim::calib {
namespace {

/** An implementation a table's or curve's source names, and the stage that measures kernels with it. The markers
 *  are the words the kernel scripts write into each record's `impl` (the scripts of kernels/), which the fit copies
 * into the sources. */
struct Impl {
  const char* marker;
  const char* name;
  const char* table_stage; ///< the stage that measures tables with it
  const char* curve_stage; ///< the stage that measures SM-scaling curves with it
};
constexpr Impl kImpls[] = {
    {"DeepGEMM", "DeepGEMM", "deepgemm", "deepgemm_sm"},
    {"FlashMLA", "FlashMLA", "flashmla", "flashmla"},
    {"SDPA", "PyTorch SDPA", "torch", "suite"},
    {"torch.bmm", "PyTorch bmm", "torch", "suite"},
};

bool mentions(const std::string& text, const char* marker) { return text.find(marker) != std::string::npos; }

/** The stage whose records make a table family: the suite's cuBLAS kernels unless an implementation says otherwise. */
std::string table_stage(const std::string& source)
{
  for (const Impl& i : kImpls)
    if (mentions(source, i.marker))
      return i.table_stage;
  return "suite";
}

} // namespace

const std::vector<std::string>& calibration_stages()
{
  static const std::vector<std::string> stages{"build",    "suite",    "torch",       "graph_gaps",
                                               "flashmla", "deepgemm", "deepgemm_sm", "verify"};
  return stages;
}

std::vector<MissingStage> check_stages(const FittedProfile& fit, const models::HwProfile& reference, bool has_verify)
{
  std::vector<MissingStage> out;
  // tables: each family, and each implementation a family's tables name
  std::set<std::string> seen;
  for (const models::OpTable& ref : reference.tables) {
    if (!seen.insert(ref.family + "|" + ref.us_by_tokens.source).second)
      continue;
    std::vector<const FitTable*> ours;
    for (const FitTable& t : fit.tables)
      if (t.family == ref.family)
        ours.push_back(&t);
    if (ours.empty()) {
      if (seen.insert(ref.family + "|missing").second)
        out.push_back({table_stage(ref.us_by_tokens.source), "tables." + ref.family});
      continue;
    }
    for (const Impl& i : kImpls) {
      const bool has = std::any_of(ours.begin(), ours.end(), [&](const FitTable* t) {
        return mentions(t->source, i.marker) ||
               (fit.preferred_tables.count(ref.family) && mentions(fit.preferred_tables.at(ref.family).impl, i.marker));
      });
      if (mentions(ref.us_by_tokens.source, i.marker) && !has && seen.insert(ref.family + "|" + i.name).second)
        out.push_back({i.table_stage, fmt::format("tables.{} measured with {}", ref.family, i.name)});
    }
  }
  // SM-scaling curves: each family, and the implementation it was measured with
  for (const auto& [family, ref] : reference.sm_scaling) {
    const auto ours = fit.sm_scaling.find(family);
    if (ours == fit.sm_scaling.end()) {
      out.push_back({"suite", "sm_scaling." + family});
      continue;
    }
    for (const Impl& i : kImpls)
      if (mentions(ref.speed.source, i.marker) && !mentions(ours->second.source, i.marker))
        out.push_back({i.curve_stage, fmt::format("sm_scaling.{} measured with {} (these records have another "
                                                  "implementation's curve only)",
                                                  family, i.name)});
  }
  if (!reference.sm_tables.empty() && fit.sm_tables.empty())
    out.push_back({"suite", "sm_tables (the suite's --full run)"});
  for (const auto& [key, value] :
       std::initializer_list<std::pair<const char*, double>>{{"graph_launch", reference.graph_launch_us},
                                                             {"eager_kernel_gap", reference.eager_kernel_gap_us},
                                                             {"graph_piece_gap", reference.graph_piece_gap_us}})
    if (value >= 0 && !fit.host_us.count(key))
      out.push_back({"graph_gaps", std::string("host.") + key});
  for (const auto& [key, value] : reference.kernel_floor_us)
    if (!fit.kernel_floors.count(key))
      out.push_back({"torch", "kernel_floors." + key});
  if (reference.provenance.details.count("verification") && !has_verify)
    out.push_back({"verify", "provenance.verification (a fresh pass: OUT/verify.jsonl)"});
  // one line per part, the stages in the order the job runs them
  const auto& order = calibration_stages();
  std::stable_sort(out.begin(), out.end(), [&](const MissingStage& a, const MissingStage& b) {
    return std::find(order.begin(), order.end(), a.stage) < std::find(order.begin(), order.end(), b.stage);
  });
  return out;
}

std::string missing_stages_text(const std::vector<MissingStage>& missing, const std::string& reference_file,
                                const std::string& out_dir)
{
  std::string text = fmt::format("the records lack {} part(s) that {} has; a profile fitted from them would fall "
                                 "back to other kernels there and differ for that reason alone:\n",
                                 missing.size(), reference_file);
  std::set<std::string> stages;
  for (const MissingStage& m : missing) {
    text += fmt::format("  {:<12} {}\n", m.stage, m.part);
    stages.insert(m.stage);
  }
  std::string names;
  for (const std::string& s : calibration_stages())
    if (stages.count(s))
      names += (names.empty() ? "" : ", ") + s;
  text += fmt::format("run the stage(s) {} on the GPU: calibrate/run_on_gpu.sh {} [--deepgemm DIR] [--flashmla DIR] "
                      "(finished stages are kept), then fit again",
                      names, out_dir);
  return text;
}

} // namespace dbosim::calib
