/* dbosim tests — the calibration as one job: calibrate/run_on_gpu.sh's refusals, `dbosim-calibrate fit OUT` (its
 * stage check against the reference profile, its refusal to overwrite, the gate it prints), the job templates under
 * calibrate/jobs/, and diff's handling of a scenario neither profile runs. */
#include "TempDir.hpp"
#include "calibrate/DiffCommand.hpp"
#include "calibrate/ProfileFit.hpp"
#include "calibrate/ResultsStore.hpp"
#include "calibrate/StageCheck.hpp"
#include "config/HwProfileLoader.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace dbosim;
using namespace dbosim::calib;

namespace {

const std::string kSrc  = DBOSIM_SOURCE_DIR;
const std::string kData = kSrc + "/tests/data/calib/";

/** Runs a shell command; its exit code (-1 when it did not exit). */
int run(const std::string& cmd)
{
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/** A job folder holding `raw` and `verify` as OUT/raw.jsonl and OUT/verify.jsonl (links, not copies). */
std::string job_folder(const test::TempDir& dir, const std::string& raw, const std::string& verify)
{
  const std::string out = dir.path() + "/out";
  std::filesystem::create_directories(out);
  std::filesystem::create_symlink(raw, out + "/raw.jsonl");
  std::filesystem::create_symlink(verify, out + "/verify.jsonl");
  return out;
}

std::set<std::string> stages_of(const std::vector<MissingStage>& missing)
{
  std::set<std::string> s;
  for (const MissingStage& m : missing)
    s.insert(m.stage);
  return s;
}

} // namespace

TEST_CASE("calib::check_stages: the shipped records cover h200.yaml, a run of the old README's commands does not",
          "[quick]")
{
  const auto h200 = load_hw_profile(kSrc + "/hwprofiles/h200.yaml");
  CHECK(check_stages(fit_profile(ResultsStore::read_file(kData + "h200_raw.jsonl")), h200, true).empty());
  // without the verification pass, only that is missing
  const auto no_verify = check_stages(fit_profile(ResultsStore::read_file(kData + "h200_raw.jsonl")), h200, false);
  CHECK(stages_of(no_verify) == std::set<std::string>{"verify"});
  // node 2 of the reproduction check ran the suite, the torch kernels and DeepGEMM's tables: no FlashMLA, no graph
  // gaps, no DeepGEMM SM scaling (its gemm curves would be cuBLAS's on green contexts)
  const auto missing = check_stages(fit_profile(ResultsStore::read_file(kData + "h200_repro2_raw.jsonl")), h200, true);
  CHECK(stages_of(missing) == std::set<std::string>{"flashmla", "graph_gaps", "deepgemm_sm"});
  bool gemm_curve = false;
  for (const MissingStage& m : missing)
    gemm_curve |= m.stage == "deepgemm_sm" && m.part.rfind("sm_scaling.gemm measured with DeepGEMM", 0) == 0;
  CHECK(gemm_curve);
  // the stages come in the order the job runs them
  CHECK(missing.front().stage == "graph_gaps");
  CHECK(missing.back().stage == "deepgemm_sm");
  const std::string text = missing_stages_text(missing, "hwprofiles/h200.yaml", "OUT");
  CHECK(text.find("graph_gaps, flashmla, deepgemm_sm") != std::string::npos);
  CHECK(text.find("calibrate/run_on_gpu.sh OUT") != std::string::npos);
}

TEST_CASE("calib job records: the one-command run on a fresh H200 covers every stage and names its trees' commits",
          "[quick]")
{
  // tests/data/calib/h200_job_*: calibrate/run_on_gpu.sh's records of its acceptance run (docs/calibration-runs.md)
  const auto h200 = load_hw_profile(kSrc + "/hwprofiles/h200.yaml");
  CHECK(check_stages(fit_profile(ResultsStore::read_file(kData + "h200_job_raw.jsonl")), h200, true).empty());
  const std::regex sha40("[0-9a-f]{40}");
  std::ifstream in(kData + "h200_job_raw.jsonl");
  int envs = 0, deepgemm = 0, flashmla = 0;
  for (std::string line; std::getline(in, line);) {
    const auto r             = nlohmann::json::parse(line);
    const std::string family = r.at("family").get<std::string>();
    const auto info          = r.value("info", nlohmann::json::object()); // only some records describe their kernel
    if (family == "env") {
      ++envs;
      CHECK(info.at("git_commit").get<std::string>().size() >= 7);
    } else if (family.find("deepgemm") != std::string::npos) {
      ++deepgemm;
      const std::string impl = info.at("impl").get<std::string>();
      CHECK(std::regex_search(impl, std::regex("@[0-9a-f]{40} \\(CUTLASS [0-9a-f]{7,40}\\)")));
    } else if (family == "mla_decode_flashmla") {
      ++flashmla;
      CHECK(std::regex_match(info.at("flashmla_commit").get<std::string>(), sha40));
      CHECK(std::regex_match(info.at("cutlass_commit").get<std::string>(), sha40));
    }
  }
  CHECK(envs >= 4); // one per measuring process: suite, torch, deepgemm, deepgemm_sm
  CHECK(deepgemm > 0);
  CHECK(flashmla > 0);
}

TEST_CASE("calib fit OUT: exit 2 naming the stages the records lack, no profile written", "[quick]")
{
  test::TempDir dir;
  const std::string out     = job_folder(dir, kData + "h200_repro2_raw.jsonl", kData + "h200_repro2_verify.jsonl");
  const std::string profile = dir.path() + "/new.yaml", err = dir.path() + "/err.txt";
  CHECK(run(fmt::format("{} fit {} --out {} >/dev/null 2>{}", DBOSIM_CALIBRATE_BINARY, out, profile, err)) == 2);
  const std::string msg = slurp(err);
  CHECK(msg.find("deepgemm_sm") != std::string::npos);
  CHECK(msg.find("flashmla") != std::string::npos);
  CHECK(msg.find("host.graph_launch") != std::string::npos);
  CHECK(!std::filesystem::exists(profile));
}

TEST_CASE("calib fit OUT: writes a new file only, and prints the gate against the reference", "[quick]")
{
  test::TempDir dir;
  const std::string out     = job_folder(dir, kData + "h200_raw.jsonl", kData + "h200_verify.jsonl");
  const std::string profile = dir.path() + "/new.yaml", log = dir.path() + "/log.txt";
  const std::string fit = fmt::format("{} fit {} --out {}", DBOSIM_CALIBRATE_BINARY, out, profile);
  REQUIRE(run(fit + " >" + log + " 2>&1") == 0);
  const std::string printed = slurp(log);
  CHECK(printed.find("dbosim-calibrate diff ") != std::string::npos);
  CHECK(printed.find("hwprofiles/h200.yaml " + profile + " --max-step-ratio 1.03") != std::string::npos);
  // the shipped records and base give the shipped profile's tables
  const auto fresh = load_hw_profile(profile);
  CHECK(fresh.tables.size() == load_hw_profile(kSrc + "/hwprofiles/h200.yaml").tables.size());
  CHECK(fresh.provenance.details.at("fit_base") == "tests/data/calib/h200_datasheet.yaml");
  // an existing --out: refused without --force, replaced with it
  std::filesystem::resize_file(profile, 0);
  CHECK(run(fit + " >/dev/null 2>&1") == 2);
  CHECK(std::filesystem::file_size(profile) == 0);
  CHECK(run(fit + " --force >/dev/null 2>&1") == 0);
  CHECK(std::filesystem::file_size(profile) > 0);
  // bad input: no raw.jsonl in the folder; a reference that is no fitted profile; --reference without OUT
  std::filesystem::create_directories(dir.path() + "/empty");
  CHECK(run(fmt::format("{} fit {}/empty --out {}/x.yaml 2>/dev/null", DBOSIM_CALIBRATE_BINARY, dir.path(),
                        dir.path())) == 2);
  CHECK(run(fmt::format("{} fit {} --reference b200 --out {}/x.yaml >/dev/null 2>&1", DBOSIM_CALIBRATE_BINARY, out,
                        dir.path())) == 2);
  CHECK(run(fmt::format("{} fit --raw {}h200_raw.jsonl --reference h200 --out {}/x.yaml >/dev/null 2>&1",
                        DBOSIM_CALIBRATE_BINARY, kData, dir.path())) == 2);
  CHECK(!std::filesystem::exists(dir.path() + "/x.yaml"));
}

TEST_CASE("calib run_on_gpu.sh: refuses before measuring when a tree's commit is unknown or an option is wrong",
          "[quick]")
{
  test::TempDir dir;
  // a DeepGEMM tree of the right shape, outside any git work tree and without a COMMIT file
  const std::string dg = dir.path() + "/dg";
  std::filesystem::create_directories(dg + "/deep_gemm/jit");
  std::filesystem::create_directories(dg + "/third-party/cutlass/include/cute");
  dir.write("dg/deep_gemm/jit/compiler.py", "");
  dir.write("dg/third-party/cutlass/include/cute/tensor.hpp", "");
  const std::string script = kSrc + "/calibrate/run_on_gpu.sh " + dir.path() + "/out";
  const std::string quiet  = " >/dev/null 2>&1";
  if (run("git -C " + kSrc + " rev-parse HEAD" + quiet) == 0) {            // the dbosim commit comes from git
    CHECK(run(script + " --skip flashmla --deepgemm " + dg + quiet) == 2); // no commit
    CHECK(run(script + " --skip flashmla --deepgemm " + dg + " --commit deepgemm=55ab91f" + quiet) == 2); // CUTLASS's
    dir.write("dg/COMMIT", "55ab91fb0000000000000000000000000000000a\n");
    CHECK(run(script + " --skip flashmla --deepgemm " + dg + quiet) == 2); // still none for its CUTLASS
  }
  CHECK(run(script + " --deepgemm " + dg + " --commit deepgemm=5zab91f" + quiet) == 2); // not a commit
  CHECK(run(script + " --skip nonsense" + quiet) == 2);
  CHECK(run(script + " --skip deepgemm --skip deepgemm_sm" + quiet) == 2); // FlashMLA neither given nor skipped
  CHECK(!std::filesystem::exists(dir.path() + "/out"));                    // nothing started
}

TEST_CASE("calib jobs: the Slurm and Kubernetes templates run calibrate/run_on_gpu.sh with options it takes", "[quick]")
{
  const std::string script = slurp(kSrc + "/calibrate/run_on_gpu.sh");
  REQUIRE(!script.empty());
  const std::regex call(R"(calibrate/run_on_gpu\.sh ([^\n]*))"), option(R"((--[a-z][a-z-]*))");
  for (const char* job : {"calibrate/jobs/slurm.sh", "calibrate/jobs/k8s-job.yaml"}) {
    INFO(job);
    const std::string text = slurp(kSrc + "/" + job);
    int calls              = 0;
    for (std::istringstream lines(text); lines;) {
      std::string line;
      std::getline(lines, line);
      std::smatch m;
      if (line.find('#') != std::string::npos && line.find('#') < line.find("calibrate/run_on_gpu.sh"))
        continue; // a comment
      if (!std::regex_search(line, m, call))
        continue;
      ++calls;
      const std::string args = m[1];
      for (auto it = std::sregex_iterator(args.begin(), args.end(), option); it != std::sregex_iterator(); ++it) {
        INFO((*it)[1].str());
        CHECK(script.find("  " + (*it)[1].str() + ")") != std::string::npos); // a branch of the option parser
      }
      CHECK(args.find("--deepgemm") != std::string::npos);
      CHECK(args.find("--flashmla") != std::string::npos);
    }
    CHECK(calls == 1);
    // the sources at the commits the calibration names
    const std::string readme = slurp(kSrc + "/calibrate/README.md");
    for (const char* commit : {"55ab91f", "9241ae3"})
      CHECK(readme.find(commit) != std::string::npos);
    if (std::string(job).find("k8s") != std::string::npos)
      for (const char* commit : {"55ab91f", "9241ae3"})
        CHECK(text.find(commit) != std::string::npos);
  }
}

TEST_CASE("calib diff: a scenario neither profile runs (MoRI under two CUDA profiles) is skipped, not failed",
          "[quick]")
{
  DiffOptions o;
  o.profile_a        = "h200";
  o.profile_b        = "h800";
  o.scenarios        = {"dsv3_decode_ep8_mi300x_mori", "dsv3_decode_ep8_serial"};
  o.max_step_ratio   = 2;
  const DiffReport r = profile_diff(o);
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].failed.empty());
  CHECK(r.steps[0].skipped.find("runs under neither profile: ") == 0);
  CHECK(r.steps[0].skipped.find("MoRI") != std::string::npos);
  CHECK(r.steps[1].ratio > 0);
  CHECK(r.text.find("failed") == std::string::npos);
  CHECK(r.exit_code == 0);
}
