#include "sim/output/TraceSelection.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

namespace dbosim::sim {
namespace {

struct ModeName {
  TraceMode mode;
  const char* name;
};
constexpr ModeName mode_names[] = {
    {TraceMode::automatic, "auto"}, {TraceMode::all, "all"}, {TraceMode::none, "none"}, {TraceMode::ranks, "ranks"}};

const char* name_of(TraceMode m)
{
  for (const ModeName& n : mode_names)
    if (n.mode == m)
      return n.name;
  return "?";
}

std::string valid_forms(int ep)
{
  return fmt::format("auto, all, none, or ranks=LIST: comma-separated ranks in 0..{}", ep - 1);
}

} // namespace

TraceSelection parse_trace_selection(const std::string& text, int ep)
{
  auto fail = [&](const std::string& why) { throw InputError("--trace", 0, 0, "", why, valid_forms(ep)); };
  TraceSelection sel;
  if (text.empty())
    return sel;
  for (const ModeName& n : mode_names)
    if (n.mode != TraceMode::ranks && text == n.name) {
      sel.mode = n.mode;
      return sel;
    }
  const std::string prefix = "ranks=";
  if (text.compare(0, prefix.size(), prefix) != 0)
    fail(fmt::format("unknown value '{}'", text));
  sel.mode              = TraceMode::ranks;
  const std::string all = text.substr(prefix.size());
  std::size_t at        = 0;
  while (true) {
    const std::size_t comma = all.find(',', at);
    const std::string item  = all.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const bool digits       = !item.empty() && item.size() <= 9 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      fail(fmt::format("'{}' in '{}' is not a rank number", item, text));
    const int rank = std::atoi(item.c_str());
    if (rank >= ep)
      fail(fmt::format("rank {} is outside the EP group of {} ranks", rank, ep));
    sel.ranks.push_back(rank);
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  std::sort(sel.ranks.begin(), sel.ranks.end());
  sel.ranks.erase(std::unique(sel.ranks.begin(), sel.ranks.end()), sel.ranks.end());
  return sel;
}

std::string trace_selection_name(const TraceSelection& sel)
{
  if (sel.mode != TraceMode::ranks)
    return name_of(sel.mode);
  return fmt::format("ranks={}", fmt::join(sel.ranks, ","));
}

} // namespace dbosim::sim
