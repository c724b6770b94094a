#include "calibrate/ResultsStore.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace dbosim::calib;

namespace {

std::string temp_path(const std::string& name)
{
  auto dir = std::filesystem::temp_directory_path() / ("dbosim_calib_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

Measurement point(double tokens, double us)
{
  Measurement m;
  m.spec                      = MeasureSpec{"gemm_bf16", "", {{"n", 4096}, {"k", 7168}, {"tokens", tokens}}};
  std::vector<double> samples = {us * 0.9, us, us * 1.1};
  summarize_samples(m, samples);
  m.extra["tflops"] = 1.5;
  return m;
}

std::string slurp(const std::string& p)
{
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("calib::Measurement: canonical keys and JSON round trip", "[quick]")
{
  Measurement m = point(512, 44.25);
  CHECK(m.spec.key() == "gemm_bf16/k=7168,n=4096,tokens=512");
  CHECK(MeasureSpec{"host", "launch", {}}.key() == "host/launch/");
  CHECK(format_number(0.5) == "0.5");
  Measurement back = measurement_from_json(to_json(m));
  CHECK(back.spec.key() == m.spec.key());
  CHECK(back.us == m.us);
  CHECK(back.us_p90 == m.us_p90);
  CHECK(back.extra.at("tflops") == 1.5);
  auto bad   = to_json(m);
  bad["key"] = "gemm_bf16/k=1";
  CHECK_THROWS_WITH(measurement_from_json(bad), Catch::Contains("does not match"));
  auto nan  = to_json(m);
  nan["us"] = -1.0;
  CHECK_THROWS_WITH(measurement_from_json(nan), Catch::Contains("non-positive"));
}

TEST_CASE("calib::ResultsStore: append, reopen, torn last line, corrupt middle line", "[quick]")
{
  const std::string path = temp_path("store.jsonl");
  {
    ResultsStore s(path);
    CHECK(s.records().empty());
    s.append(point(1, 26.5));
    s.append(point(2, 26.9));
    CHECK(s.has("gemm_bf16/k=7168,n=4096,tokens=2"));
    CHECK_THROWS_WITH(s.append(point(2, 30)), Catch::Contains("already present"));
  }
  const std::string clean = slurp(path);
  { // a run killed while writing its third record
    std::ofstream out(path, std::ios::app);
    out << R"({"key":"gemm_bf16/k=7168,n=4096,tokens=4","family":"gemm_bf16","par)";
  }
  {
    ResultsStore s(path);
    CHECK(s.dropped_lines() == 1);
    CHECK(s.records().size() == 2);
    CHECK(slurp(path) == clean); // rewritten without the torn line (temp + rename)
    s.append(point(4, 27.1));
  }
  int dropped = -1;
  CHECK(ResultsStore::read_file(path, &dropped).size() == 3);
  CHECK(dropped == 0);
  { // a corrupt record that is not the last line is an error, not silently skipped
    std::string text = slurp(path);
    text.insert(text.find('\n') + 1, "{not json}\n");
    std::ofstream(path, std::ios::trunc) << text;
  }
  CHECK_THROWS_WITH(ResultsStore(path), Catch::Contains(":2:1: record: corrupt raw-results record"));
}

TEST_CASE("calib::ResultsStore: a key given twice in one record is an input error, even on the last line", "[quick]")
{
  const std::string path = temp_path("dup.jsonl");
  {
    ResultsStore s(path);
    s.append(point(1, 26.5));
  }
  const std::string one = slurp(path);
  const auto us         = one.find("\"us\":");
  REQUIRE(us != std::string::npos);
  std::string twice = one;
  twice.insert(us, R"("us":99,)"); // the same record saying two times
  std::ofstream(path, std::ios::trunc) << twice;
  CHECK_THROWS_WITH(ResultsStore(path), Catch::Contains(":1:1: record.us: a key given twice in one record"));
  std::ofstream(path, std::ios::trunc) << one << twice.substr(0, twice.size() - 1); // the last line, unterminated
  CHECK_THROWS_WITH(ResultsStore(path), Catch::Contains(":2:1: record.us: a key given twice"));
}

TEST_CASE("calib::write_file_atomically: replaces the whole file", "[quick]")
{
  const std::string path = temp_path("atomic.txt");
  write_file_atomically(path, "first version, longer\n");
  write_file_atomically(path, "second\n");
  CHECK(slurp(path) == "second\n");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
}
