/* dbosim tests — the fabrics the all-to-all models are compared on (a CUDA one and a ROCm one with MoRI facts), and
 * the per-rank figures two pricings of the same traffic must share to the byte. */
#pragma once
#include "config/HwProfileLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace dbosim::test {

struct All2AllFabric {
  std::string profile;
  models::HwProfile hw;
  models::NetworkFacts net;
};

/** @brief H200 and MI300X with their network facts, loaded once. */
inline const std::vector<All2AllFabric>& all2all_fabrics()
{
  static const std::vector<All2AllFabric> f = {{"h200", load_hw_profile("h200"), load_network_facts("h200")},
                                               {"mi300x", load_hw_profile("mi300x"), load_network_facts("mi300x")}};
  return f;
}

/** @brief Checks that `a` and `b` give every rank the same duration, receive time, bytes and bottleneck, bit for bit.
 */
inline void check_same_ranks(const std::vector<models::RankComm>& a, const std::vector<models::RankComm>& b)
{
  REQUIRE(a.size() == b.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    CHECK(a[r].duration_us == b[r].duration_us);
    CHECK(a[r].recv_us == b[r].recv_us);
    CHECK(a[r].nvlink_bytes == b[r].nvlink_bytes);
    CHECK(a[r].rdma_bytes == b[r].rdma_bytes);
    CHECK(a[r].reported_bytes == b[r].reported_bytes);
    CHECK(a[r].bottleneck == b[r].bottleneck);
  }
}

} // namespace dbosim::test
