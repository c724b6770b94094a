/* dbosim tests — weighted sampling without replacement (models/DistinctDraw) as a property test over random and
 * extreme distributions: every draw returns k distinct items of positive weight, ends in bounded time, and is a
 * function of the generator state; an impossible draw throws instead of looping. */
#include "models/DistinctDraw.hpp"
#include "models/ExpertRouting.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace dbosim::models;

namespace {
/** @brief A random distribution of one of several shapes, some extreme (Zipf up to alpha 16, a 1e-300 weight, zeros,
 *  denormals, one dominant item). */
std::vector<double> random_weights(std::mt19937_64& g, int n, int shape)
{
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) {
    const double u = uniform01(g);
    switch (shape % 6) {
    case 0:
      w[i] = u;
      break;
    case 1:
      w[i] = 1.0 / std::pow(i + 1.0, 16.0 * u);
      break; // steep power laws
    case 2:
      w[i] = u < 0.7 ? 0.0 : u;
      break; // mostly zero
    case 3:
      w[i] = i == 0 ? 1.0 : 1e-300;
      break; // one item holds all but 1e-300s
    case 4:
      w[i] = u < 0.5 ? 4.9e-324 : std::ldexp(u, -1000);
      break; // denormals and tiny normals
    default:
      w[i] = i % 7 == 0 ? 1e300 : (u < 0.5 ? 0.0 : 1e-300);
      break;
    }
  }
  if (std::none_of(w.begin(), w.end(), [](double x) { return x > 0; }))
    w[n - 1] = 1.0;
  return w;
}
} // namespace

TEST_CASE("models::DistinctDraw: k distinct positive items for random and extreme weights, same seed same draw",
          "[quick][routing]")
{
  std::mt19937_64 meta(20);
  const auto start = std::chrono::steady_clock::now();
  for (int trial = 0; trial < 600; ++trial) {
    const int n           = 1 + static_cast<int>(uniform01(meta) * 300);
    std::vector<double> w = random_weights(meta, n, trial);
    DistinctDraw draw(w);
    const int positive = static_cast<int>(std::count_if(w.begin(), w.end(), [](double x) { return x > 0; }));
    REQUIRE(draw.positive() == positive);
    const int k = 1 + static_cast<int>(uniform01(meta) * std::min(positive, 16));
    std::vector<unsigned char> allowed(n, 0);
    int allowed_positive = 0;
    for (int i = 0; i < n; ++i)
      if (uniform01(meta) < 0.5 || w[i] > 0) {
        allowed[i] = 1;
        allowed_positive += w[i] > 0 ? 1 : 0;
      }
    const std::uint64_t seed = meta();
    std::mt19937_64 g1(seed), g2(seed);
    std::vector<int> a, b;
    for (int rep = 0; rep < 20; ++rep) {
      draw.draw(k, g1, a, rep % 2 ? &allowed : nullptr);
      draw.draw(k, g2, b, rep % 2 ? &allowed : nullptr);
      REQUIRE(a == b);
      REQUIRE(static_cast<int>(a.size()) == k);
      REQUIRE(std::set<int>(a.begin(), a.end()).size() == a.size());
      for (int i : a) {
        REQUIRE(w[i] > 0);
        if (rep % 2)
          REQUIRE(allowed[i]);
      }
    }
    // Asking for more items than hold weight throws, whatever the generator.
    CHECK_THROWS_AS(draw.draw(positive + 1, g1, a), std::invalid_argument);
    CHECK(allowed_positive == positive);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("models::DistinctDraw: draws follow the weights renormalised over the items not yet drawn",
          "[quick][routing]")
{
  // Weights 6:3:1, two draws: P(first = 0) = 0.6; P(second = 2 | first = 0) = 1/4; P(pair {1,2}) =
  // 0.3·(1/7) + 0.1·(3/9) = 0.0762. 200k draws: standard errors ~0.001.
  DistinctDraw draw({6.0, 3.0, 1.0});
  std::mt19937_64 g(7);
  std::vector<int> out;
  int first0 = 0, first0_then2 = 0, pair12 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    draw.draw(2, g, out);
    first0 += out[0] == 0;
    first0_then2 += out[0] == 0 && out[1] == 2;
    pair12 += (out[0] == 1 && out[1] == 2) || (out[0] == 2 && out[1] == 1);
  }
  CHECK(first0 / double(n) == Approx(0.6).margin(0.005));
  CHECK(first0_then2 / double(first0) == Approx(0.25).margin(0.005));
  CHECK(pair12 / double(n) == Approx(0.3 / 7 + 0.1 / 3).margin(0.003));
  // The exact scan (a tiny rest after the heavy item) keeps the same law: 1e-300 : 3e-300 after the 1.0.
  DistinctDraw tiny({1.0, 1e-300, 3e-300});
  int third = 0;
  for (int i = 0; i < 20000; ++i) {
    tiny.draw(2, g, out);
    REQUIRE(out[0] == 0);
    third += out[1] == 2;
  }
  CHECK(third / 20000.0 == Approx(0.75).margin(0.015));
}

TEST_CASE("models::DistinctDraw: bad weights throw", "[quick][routing]")
{
  CHECK_THROWS_AS(DistinctDraw({0.0, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(DistinctDraw({1.0, -1.0}), std::invalid_argument);
  CHECK_THROWS_AS(DistinctDraw({1.0, NAN}), std::invalid_argument);
  CHECK_THROWS_AS(DistinctDraw({1.0, INFINITY}), std::invalid_argument);
}

TEST_CASE("cluster::routing: Zipf alpha 8 at EP32 and near-impossible histograms draw in bounded time",
          "[quick][routing]")
{
  RoutingSpec spec;
  spec.seed        = 1;
  spec.dist        = RoutingDist::zipf;
  spec.zipf_alpha  = 8.0;
  const int ep     = 32;
  const auto t0    = std::chrono::steady_clock::now();
  RoutingMatrix rm = route_tokens(spec, place_experts(spec, 256, ep), 256, 8, ep, 8, 256, 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  double copies = 0;
  for (const auto& row : rm.copies)
    for (double c : row)
      copies += c;
  CHECK(copies == 32.0 * 256 * 8);

  // Grouped, with all weight but 1e-300s in one group: still 4 groups and 8 experts per token, quickly.
  spec.dist        = RoutingDist::histogram;
  spec.groups      = 8;
  spec.topk_groups = 4;
  spec.histogram.assign(256, 1e-300);
  for (int e = 0; e < 32; ++e)
    spec.histogram[e] = 1.0;
  const auto t1 = std::chrono::steady_clock::now();
  rm            = route_tokens(spec, place_experts(spec, 256, ep), 256, 8, ep, 8, 256, 0);
  CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(2));
  CHECK(routing_infeasibility(spec, 256, 8).empty());
}

TEST_CASE("cluster::routing: an impossible histogram is named, not drawn forever", "[quick][routing]")
{
  RoutingSpec spec;
  spec.dist        = RoutingDist::histogram;
  spec.groups      = 8;
  spec.topk_groups = 4;
  spec.histogram.assign(256, 0.0);
  for (int e : {0, 1, 2, 3, 100, 101, 102, 103}) // weight in groups 0 and 3 only
    spec.histogram[e] = 1.0;
  CHECK(routing_infeasibility(spec, 256, 8) ==
        "weight only in groups 0, 3 of 8, but each token draws routing_topk_groups 4 distinct groups");
  CHECK_THROWS_AS(route_tokens(spec, place_experts(spec, 256, 32), 256, 8, 32, 8, 16), std::invalid_argument);
  // One weighted expert in each of the 8 groups: any 4 groups hold 4 experts, fewer than top_k 8.
  spec.histogram.assign(256, 0.0);
  for (int gr = 0; gr < 8; ++gr)
    spec.histogram[gr * 32] = 1.0;
  CHECK(routing_infeasibility(spec, 256, 8) ==
        "groups 0, 1, 2, 3 hold only 4 experts with weight between them, fewer than top_k 8 (a token may draw "
        "exactly these routing_topk_groups 4 groups)");
  spec.groups = 0;
  CHECK(routing_infeasibility(spec, 256, 8) == "");
  CHECK(routing_infeasibility(spec, 256, 9) == "only 8 experts have a non-zero weight; top_k is 9");
}
