#include "calibrate/DiffCommand.hpp"

#include "config/DataDir.hpp"
#include "config/HwProfileLoader.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::calib {
namespace {

std::string profile_line(const char* label, const std::string& file, const models::HwProfile& hw)
{
  return fmt::format("{}: {} ({}, {}; {} {})\n", label, file, hw.name, hw.gpu, hw.provenance.kind, hw.provenance.date);
}

nlohmann::ordered_json profile_json(const std::string& file, const models::HwProfile& hw)
{
  return {
      {"file", file}, {"name", hw.name}, {"gpu", hw.gpu}, {"kind", hw.provenance.kind}, {"date", hw.provenance.date}};
}

bool all_ones(const FamilyDiff& f)
{
  return f.points > 0 && f.min_ratio == 1 && f.max_ratio == 1 && f.only_a.empty() && f.only_b.empty() &&
         f.notes.empty();
}

} // namespace

DiffReport profile_diff(const DiffOptions& opt)
{
  const std::string file_a  = resolve_data_file("hwprofiles", opt.profile_a);
  const std::string file_b  = resolve_data_file("hwprofiles", opt.profile_b);
  const models::HwProfile a = load_hw_profile(file_a);
  const models::HwProfile b = load_hw_profile(file_b);
  DiffReport r;
  r.families           = diff_profiles(a, b);
  const long same      = std::count_if(r.families.begin(), r.families.end(), all_ones);
  const long one_sided = std::count_if(r.families.begin(), r.families.end(),
                                       [](const FamilyDiff& f) { return !f.only_a.empty() || !f.only_b.empty(); });
  r.text               = profile_line("A", file_a, a) + profile_line("B", file_b, b);
  r.text += "ratios are B/A; tables and curves are compared at the union of both grids' points inside the range "
            "both cover, each read with the simulator's interpolation\n\n";
  r.text += family_diff_text(r.families);
  r.text += fmt::format("{} families: {} the same (every ratio 1), {} differ, {} with entries in one profile only\n",
                        r.families.size(), same, static_cast<long>(r.families.size()) - same, one_sided);
  r.json = {{"a", profile_json(file_a, a)}, {"b", profile_json(file_b, b)}, {"families", family_diff_json(r.families)}};

  if (opt.steps) {
    const std::vector<std::string> files = [&] {
      if (opt.scenarios.empty())
        return shipped_scenarios();
      std::vector<std::string> v;
      for (const std::string& s : opt.scenarios)
        v.push_back(resolve_data_file("scenarios", s));
      return v;
    }();
    r.steps = diff_steps(a, b, files);
    r.text += "\nstep time of each single-step scenario under A and under B (network facts: cluster.network, else "
              "the profile's; a speculative step includes the draft's passes):\n";
    r.text += step_diff_text(r.steps);
    const double worst         = worst_step_ratio(r.steps);
    const int failed           = failed_steps(r.steps);
    r.json["steps"]            = step_diff_json(r.steps);
    r.json["worst_step_ratio"] = worst;
    r.text += fmt::format("largest step change: x{:.4f} (max of B/A and A/B)\n", worst);
    if (opt.max_step_ratio > 0) {
      const bool pass          = worst <= opt.max_step_ratio && failed == 0;
      r.exit_code              = pass ? 0 : 1;
      r.json["max_step_ratio"] = opt.max_step_ratio;
      r.json["gate"]           = pass ? "pass" : "fail";
      r.text += fmt::format("gate --max-step-ratio {:g}: {}{}\n", opt.max_step_ratio, pass ? "pass" : "FAIL",
                            failed ? fmt::format(" ({} scenario(s) ran under one profile only)", failed) : "");
    }
  }
  return r;
}

} // namespace dbosim::calib
