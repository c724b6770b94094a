/* dbosim validate — the CI gate on the committed H200 overlap-testbed recordings: the recorded MAPE per group holds,
 * serial makespans are within 10%, and a deliberately broken profile (SM-scaling curves replaced by linear ones, or
 * the interference factors removed) makes the gate fail. */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {
using dbosim::test::run_shell;

const std::string src  = DBOSIM_SOURCE_DIR;
const std::string gate = " --baseline " + src + "/validate/baseline.yaml";

std::string validate(const std::string& args, const std::string& out_dir, int* rc)
{
  return run_shell(std::string(DBOSIM_BINARY) + " validate " + args + " --out " + out_dir + " 2>&1", rc);
}

/** The shipped H200 profile with `edit` applied, written to `dir`. */
template <class Edit> std::string broken_profile(const dbosim::test::TempDir& dir, Edit edit)
{
  YAML::Node p = YAML::LoadFile(src + "/hwprofiles/h200.yaml");
  edit(p);
  std::ostringstream s;
  s << p;
  return dir.write("h200_broken.yaml", s.str());
}

} // namespace

TEST_CASE("validate: the committed testbed recordings and reference cases hold the recorded MAPE", "[quick]")
{
  dbosim::test::TempDir dir;
  int rc                = 0;
  const std::string out = validate("--no-e2e" + gate, dir.path(), &rc); // the e2e group: validate_e2e_test [slow]
  INFO(out);
  // 3: some cases exceed their tolerance today (recorded in the baseline); 4 would be the gate.
  CHECK((rc == 0 || rc == 3));
  CHECK(out.find("gate: ok") != std::string::npos);
  CHECK(out.find("no recording") == std::string::npos);
  std::ifstream csv(dir.path() + "/validate.csv");
  std::string line;
  int serial = 0;
  while (std::getline(csv, line))
    if (line.rfind("testbed_makespan/serial,", 0) == 0) {
      ++serial;
      CHECK(line.find(",ok,") != std::string::npos); // acceptance: serial makespans within 10%
    }
  CHECK(serial == 4);
}

TEST_CASE("validate: linear SM-scaling curves and tables make the gate fail", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string prof = broken_profile(dir, [](YAML::Node& p) {
    for (auto fam : p["sm_scaling"]) {
      YAML::Node speed     = fam.second["speed"];
      const YAML::Node sms = fam.second["sms"];
      const double full    = sms[sms.size() - 1].as<double>();
      for (std::size_t i = 0; i < sms.size(); ++i)
        speed[i] = sms[i].as<double>() / full;
    }
    const double sm_count = p["sm_count"]["value"].as<double>(); // and the per-shape tables, which come first
    for (auto t : p["sm_tables"]) {
      YAML::Node speed = t["speed"];
      for (std::size_t i = 0; i < speed.size(); ++i)
        speed[i] = t["sms"].as<double>() / sm_count;
    }
  });
  int rc                 = 0;
  const std::string out  = validate("--no-cases --profile " + prof + gate, dir.path(), &rc);
  INFO(out);
  CHECK(rc == 4);
  CHECK(out.find("gate: group testbed_makespan/dbo_green") != std::string::npos);
}

TEST_CASE("validate: removing the interference factors makes the gate fail", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string prof = broken_profile(dir, [](YAML::Node& p) { p.remove("interference"); });
  int rc                 = 0;
  const std::string out  = validate("--no-cases --profile " + prof + gate, dir.path(), &rc);
  INFO(out);
  CHECK(rc == 4);
  CHECK(out.find("gate: group testbed_makespan/dbo:") != std::string::npos);
}

TEST_CASE("validate: the unbroken profile passes the same gate (the gate tests can fail)", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string prof = broken_profile(dir, [](YAML::Node&) {});
  int rc                 = 0;
  const std::string out  = validate("--no-cases --profile " + prof + gate, dir.path(), &rc);
  INFO(out);
  // --no-cases: the reference groups are absent, which the gate does not count against this run
  CHECK(rc != 4);
}
