#include "calibrate/CalibDriver.hpp"

#include <chrono>
#include <cstdio>
#include <set>

namespace dbosim::calib {
namespace {

std::string eta_text(double seconds)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return buf;
}

} // namespace

DriverSummary run_plan(const std::vector<MeasureSpec>& plan, ResultsStore& store, MeasurementBackend& backend,
                       const DriverOptions& options)
{
  using clock      = std::chrono::steady_clock;
  const auto start = clock::now();
  auto elapsed_s   = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };

  DriverSummary sum;
  std::set<std::string> seen;
  std::vector<const MeasureSpec*> todo;
  for (const auto& s : plan) {
    if (!seen.insert(s.key()).second)
      continue;
    ++sum.planned;
    if (store.has(s.key()))
      ++sum.present;
    else
      todo.push_back(&s);
  }
  int runs = 0;
  for (const auto& m : store.records())
    runs += m.spec.family == "env";
  Measurement env;
  env.spec                 = MeasureSpec{"env", "", {{"run", runs + 1}}};
  env.info                 = backend.environment();
  env.info["planned"]      = std::to_string(sum.planned);
  env.info["resumed_from"] = std::to_string(sum.present);
  store.append(env);
  if (options.progress && sum.present > 0)
    *options.progress << "resuming: " << sum.present << " of " << sum.planned << " points already recorded in "
                      << store.path() << "\n";

  size_t i = 0;
  for (; i < todo.size(); ++i) {
    if (options.max_measurements >= 0 && sum.measured >= options.max_measurements)
      break;
    if (options.budget_s > 0 && elapsed_s() > options.budget_s) {
      if (options.progress)
        *options.progress << "time budget of " << options.budget_s << " s reached: stopping; run again to resume\n";
      break;
    }
    const MeasureSpec& s = *todo[i];
    Measurement m;
    try {
      m = backend.measure(s);
    } catch (const FatalBackendError&) {
      throw;
    } catch (const std::exception& e) {
      m        = Measurement{};
      m.status = std::string("error: ") + e.what();
    }
    m.spec = s; // the record's key is always the plan's
    store.append(m);
    ++sum.measured;
    sum.failed += m.status.rfind("error", 0) == 0;
    if (options.progress) {
      const long done = sum.present + sum.measured;
      double per      = elapsed_s() / static_cast<double>(sum.measured);
      char line[96];
      std::snprintf(line, sizeof line, "[%5ld/%ld] ", done, sum.planned);
      *options.progress << line << s.key() << ": ";
      if (m.ok())
        *options.progress << format_number(m.us) << " us";
      else
        *options.progress << m.status;
      *options.progress << "  (eta " << eta_text(per * static_cast<double>(todo.size() - i - 1)) << ")\n";
    }
  }
  sum.remaining = static_cast<long>(todo.size() - i);
  if (options.progress)
    *options.progress << "done: " << sum.measured << " measured (" << sum.failed << " errors), " << sum.present
                      << " resumed, " << sum.remaining << " remaining, " << format_number(elapsed_s()) << " s\n";
  return sum;
}

} // namespace dbosim::calib
