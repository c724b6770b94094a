#include "validate/ErrorBand.hpp"

#include "validate/CaseResult.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace dbosim::validate {

std::optional<ErrorBand> load_error_band(const std::string& baseline_file, const std::string& generation)
{
  if (baseline_file.empty() || !std::filesystem::exists(baseline_file))
    return std::nullopt;
  const Baseline b = load_baseline_file(baseline_file);
  const auto it    = b.mape_pct.find(band_group);
  if (it == b.mape_pct.end())
    return std::nullopt;
  ErrorBand band;
  band.source   = baseline_file;
  band.group    = band_group;
  band.mape_pct = it->second;
  if (const auto c = b.cases.find(band_group); c != b.cases.end())
    band.cases = c->second;
  if (generation.empty())
    return band;
  const auto gens = b.generations.find(band_group);
  const auto g    = gens == b.generations.end() ? nullptr : [&]() -> const GenerationBand* {
    const auto f = gens->second.find(generation);
    return f == gens->second.end() ? nullptr : &f->second;
  }();
  if (!g)
    band.note = fmt::format("no {} cases recorded: every case's band", generation);
  else if (g->cases.size() < min_generation_cases)
    band.note = fmt::format("{} {} case(s) recorded, fewer than {}: every case's band", g->cases.size(), generation,
                            min_generation_cases);
  else {
    band.mape_pct   = g->mape_pct;
    band.cases      = g->cases;
    band.generation = generation;
  }
  return band;
}

std::string band_text(const std::optional<ErrorBand>& band, const std::string& baseline_file)
{
  if (!band)
    return fmt::format("band: not measured (no `{}` group in {})", band_group,
                       baseline_file.empty() ? "a validate baseline" : baseline_file);
  std::string names;
  for (std::size_t i = 0; i < band->cases.size(); ++i)
    names += (i ? ", " : ": ") + band->cases[i];
  return fmt::format("band ±{:.1f}% from validate {} group{} ({} cases{}) in {}{}", band->mape_pct, band->group,
                     band->generation.empty() ? "" : ", its " + band->generation + " cases", band->cases.size(), names,
                     band->source, band->note.empty() ? "" : " (" + band->note + ")");
}

} // namespace dbosim::validate
