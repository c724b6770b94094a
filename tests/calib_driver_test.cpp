#include "calibrate/CalibDriver.hpp"
#include "calibrate/SuitePlan.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace dbosim::calib;

namespace {

/** A backend whose "duration" is a function of the key; counts calls; can fail on chosen keys. */
class FakeBackend : public MeasurementBackend {
public:
  std::vector<std::string> calls;
  std::set<std::string> fail_keys, fatal_keys;
  Measurement measure(const MeasureSpec& spec) override
  {
    calls.push_back(spec.key());
    if (fatal_keys.count(spec.key()))
      throw FatalBackendError("device lost");
    if (fail_keys.count(spec.key()))
      throw std::runtime_error("no algorithm");
    Measurement m;
    summarize_samples(m, {10.0 + static_cast<double>(spec.key().size())});
    return m;
  }
  std::map<std::string, std::string> environment() override { return {{"gpu_name", "fake"}, {"sm_count", "132"}}; }
};

std::string temp_path(const std::string& name)
{
  auto dir = std::filesystem::temp_directory_path() / ("dbosim_calib_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

} // namespace

TEST_CASE("calib::run_plan: a killed run resumes where it stopped, each point measured once", "[quick]")
{
  const auto plan        = build_plan(SuiteSize::quick, 132);
  const std::string path = temp_path("resume.jsonl");
  FakeBackend first;
  {
    ResultsStore store(path);
    DriverOptions opt;
    opt.max_measurements = 25; // the "kill": the run stops after 25 points
    auto sum             = run_plan(plan, store, first, opt);
    CHECK(sum.measured == 25);
    CHECK(sum.remaining == static_cast<long>(plan.size()) - 25);
    CHECK_FALSE(sum.complete());
  }
  { // and it was killed in the middle of writing the 26th record
    std::ofstream out(path, std::ios::app);
    out << R"({"family":"gemm_bf16","key":"gemm_bf16/k=7168,n=4)";
  }
  FakeBackend second;
  std::ostringstream progress;
  ResultsStore store(path);
  CHECK(store.dropped_lines() == 1);
  DriverOptions opt;
  opt.progress = &progress;
  auto sum     = run_plan(plan, store, second, opt);
  CHECK(sum.present == 25);
  CHECK(sum.complete());
  CHECK(second.calls.size() == plan.size() - 25);
  CHECK(progress.str().find("resuming: 25 of") != std::string::npos);
  // no point measured twice, every point recorded once, two env records (run 1 and its resume)
  std::set<std::string> measured(first.calls.begin(), first.calls.end());
  for (const auto& k : second.calls)
    CHECK(measured.insert(k).second);
  CHECK(measured.size() == plan.size());
  auto records = ResultsStore::read_file(path);
  CHECK(records.size() == plan.size() + 2);
  CHECK(store.has("env/run=1"));
  CHECK(store.has("env/run=2"));
}

TEST_CASE("calib::run_plan: errors are recorded and skipped, a fatal error stops without recording", "[quick]")
{
  std::vector<MeasureSpec> plan = {{"rmsnorm", "", {{"hidden", 7168}, {"tokens", 1}}},
                                   {"rmsnorm", "", {{"hidden", 7168}, {"tokens", 2}}},
                                   {"rmsnorm", "", {{"hidden", 7168}, {"tokens", 4}}}};
  const std::string path        = temp_path("errors.jsonl");
  FakeBackend b;
  b.fail_keys  = {plan[0].key()};
  b.fatal_keys = {plan[2].key()};
  {
    ResultsStore store(path);
    CHECK_THROWS_AS(run_plan(plan, store, b, {}), FatalBackendError);
    CHECK(store.has(plan[0].key()));
    CHECK(store.has(plan[1].key()));
    CHECK_FALSE(store.has(plan[2].key()));
    CHECK(store.records()[1].status.rfind("error: no algorithm", 0) == 0);
  }
  b.fatal_keys.clear();
  ResultsStore store(path);
  auto sum = run_plan(plan, store, b, {});
  CHECK(sum.measured == 1); // only the point the fatal error interrupted
  CHECK(sum.complete());
}

TEST_CASE("calib::SuitePlan: unique keys, the acceptance points, skew", "[quick]")
{
  for (auto size : {SuiteSize::quick, SuiteSize::full}) {
    auto plan = build_plan(size, 132);
    std::set<std::string> keys;
    for (const auto& s : plan)
      CHECK(keys.insert(s.key()).second);
    CHECK(keys.count("gemm_bf16/k=7168,n=4096,tokens=4096"));
    CHECK(keys.count("copy_kernel/ctas=24,mib=1024"));
    CHECK(keys.count("sm_scaling/gemm_bf16/k=7168,n=4096,sms=68,tokens=4096"));
    CHECK(keys.count(
        "interference/gemm_bf16/comm_ctas=20,comm_smem_bytes=196608,k=7168,n=4096,partitioned=1,tokens=4096"));
  }
  CHECK(build_plan(SuiteSize::quick, 132).size() < build_plan(SuiteSize::full, 132).size());
  for (const auto& s : build_verify_plan())
    CHECK(s.key().size() > 0);
  auto t   = skewed_tokens(32, 64);
  long sum = 0;
  for (int x : t)
    sum += x;
  CHECK(sum == 32 * 64);
  CHECK(t.front() > 4 * 64); // the hottest expert gets several times the mean
  CHECK(t.back() >= 1);
}
