/* dbosim-calibrate-run — runs the calibration suite on this machine's GPU into a raw-results file (JSON lines).
 * Resumable: points already in the file are skipped. Fitting is done elsewhere (dbosim-calibrate fit). */
#include "calibrate/CalibDriver.hpp"
#include "calibrate/SuitePlan.hpp"
#include "kernels/CudaBackend.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

namespace {

void usage()
{
  std::cout
      << "usage: dbosim-calibrate-run --out FILE [--quick | --full] [--verify] [--budget-s S] [--only PREFIX]\n"
         "                            [--git-commit SHA] [--device N] [--arena-gib G] [--sm-table-timing T]\n"
         "  --quick      smoke suite (< 3 min on an H200); --full (default) the whole suite (< 15 min)\n"
         "  --verify     only the fresh-measurement pass (GEMM 4096x4096x7168 BF16, copy kernel)\n"
         "  --budget-s   stop starting new points after S seconds; run again to resume\n"
         "  --only       measure only points whose key starts with PREFIX (comma-separated list)\n"
         "  --sm-table-timing  settle=MS (default settle="
      << dbosim::calib::sm_table_settle_ms
      << "): MS ms of back-to-back launches before each sm_table point's timed repeats;\n"
         "               rest=MS: the GPU idles MS ms before a ~15 ms burst; cold: the timing of the other points\n";
}

} // namespace

int main(int argc, char** argv)
{
  using namespace dbosim;
  std::string out, commit = "unknown", only;
  bool quick = false, verify = false;
  double budget = 0, arena_gib = 32;
  std::map<std::string, double> sm_timing = {{"settle_ms", calib::sm_table_settle_ms}};
  int device                              = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next     = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = next();
    else if (a == "--quick")
      quick = true;
    else if (a == "--full")
      quick = false;
    else if (a == "--verify")
      verify = true;
    else if (a == "--budget-s")
      budget = std::stod(next());
    else if (a == "--only")
      only = next();
    else if (a == "--git-commit")
      commit = next();
    else if (a == "--device")
      device = std::stoi(next());
    else if (a == "--arena-gib")
      arena_gib = std::stod(next());
    else if (a == "--sm-table-timing") {
      const std::string t = next();
      const auto eq       = t.find('=');
      if (t == "cold")
        sm_timing.clear();
      else if (eq != std::string::npos && (t.substr(0, eq) == "rest" || t.substr(0, eq) == "settle"))
        sm_timing = {{t.substr(0, eq) + "_ms", std::stod(t.substr(eq + 1))}};
      else {
        std::cerr << "--sm-table-timing: settle=MS, rest=MS or cold, not " << t << "\n";
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      std::cerr << "unknown argument " << a << "\n";
      usage();
      return 2;
    }
  }
  if (out.empty()) {
    usage();
    return 2;
  }
  try {
    kern::CudaBackend backend(device, commit, static_cast<size_t>(arena_gib * (1u << 30)));
    auto plan = verify
                    ? calib::build_verify_plan()
                    : calib::build_plan(quick ? calib::SuiteSize::quick : calib::SuiteSize::full, backend.sm_count());
    for (auto& s : plan)
      if (s.family == "sm_table") {
        s.params.erase("rest_ms");
        s.params.erase("settle_ms");
        s.params.insert(sm_timing.begin(), sm_timing.end());
      }
    if (!only.empty()) {
      std::vector<std::string> prefixes;
      for (size_t pos = 0; pos <= only.size();) {
        size_t comma = only.find(',', pos);
        prefixes.push_back(only.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        pos = comma == std::string::npos ? only.size() + 1 : comma + 1;
      }
      std::erase_if(plan, [&](const calib::MeasureSpec& s) {
        for (const auto& p : prefixes)
          if (s.key().rfind(p, 0) == 0)
            return false;
        return true;
      });
    }
    calib::ResultsStore store(out);
    if (store.dropped_lines() > 0)
      std::cout << "dropped " << store.dropped_lines() << " torn line(s) at the end of " << out << "\n";
    calib::DriverOptions opt;
    opt.budget_s = budget;
    opt.progress = &std::cout;
    auto sum     = calib::run_plan(plan, store, backend, opt);
    return sum.complete() ? 0 : 3;
  } catch (const std::exception& e) {
    std::cerr << "dbosim-calibrate-run: " << e.what() << "\n";
    return 1;
  }
}
