/* dbosim tests — sim::JsonStream writes what nlohmann::json::dump() writes (the trace files read the same as when they
 * were built as a JSON tree): numbers of every magnitude a trace holds and beyond, escapes, nesting. */
#include "base/JsonStream.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

using dbosim::sim::json_number_text;
using dbosim::sim::JsonStream;

TEST_CASE("sim::JsonStream: numbers as nlohmann::json::dump() writes them", "[quick]")
{
  std::vector<double> xs = {0.0,  -0.0, 1.0,   12.0,   0.001, 0.1 + 0.2, 1e-4, 1e-5,    123456.789, 1e15,
                            1e16, 1e17, 1e300, 5e-324, -2.5,  41750.472, 1e21, 1.0 / 3, 2.0 / 3,    1e-7};
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> mantissa(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-8, 18);
  for (int i = 0; i < 20000; ++i) {
    const double x = mantissa(g) * std::pow(10.0, exponent(g));
    xs.push_back(x);
    xs.push_back(std::round(x * 1e3) / 1e3); // a trace's times: µs rounded to ns
    xs.push_back(-x);
  }
  for (const double x : xs) {
    INFO(x);
    CHECK(json_number_text(x) == nlohmann::json(x).dump());
  }
  CHECK(json_number_text(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(json_number_text(std::numeric_limits<double>::infinity()) == "null");
}

TEST_CASE("sim::JsonStream: a document as dump() of the same (sorted-key) tree", "[quick]")
{
  std::ostringstream text;
  JsonStream js(text);
  js.begin_object().key("a").begin_array();
  for (int i = 0; i < 3; ++i)
    js.begin_object().key("i").value(i).key("x").value(i * 0.5).key("y").value(i == 1).end_object();
  js.end_array();
  js.key("empty").begin_object().end_object();
  js.key("list").begin_array().end_array();
  js.key("n").value(std::int64_t{-9000000000});
  js.key("s").value("quote \" back \\ tab \t nl \n bell \a utf-8 \xc2\xb5s");
  js.key("z").raw("[1,2]");
  js.end_object();
  js.finish();

  nlohmann::json tree;
  tree["a"] = nlohmann::json::array();
  for (int i = 0; i < 3; ++i)
    tree["a"].push_back({{"i", i}, {"x", i * 0.5}, {"y", i == 1}});
  tree["empty"] = nlohmann::json::object();
  tree["list"]  = nlohmann::json::array();
  tree["n"]     = std::int64_t{-9000000000};
  tree["s"]     = "quote \" back \\ tab \t nl \n bell \a utf-8 \xc2\xb5s";
  tree["z"]     = {1, 2};
  CHECK(text.str() == tree.dump() + "\n");
}
