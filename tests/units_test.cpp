#include "config/Units.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using dbosim::parse_quantity;
using dbosim::UnitKind;

TEST_CASE("config::Units: SimGrid-style unit strings", "[quick]")
{
  CHECK(parse_quantity("450GBps", UnitKind::bandwidth) == Approx(450e9));
  CHECK(parse_quantity("400Gbps", UnitKind::bandwidth) == Approx(50e9));
  CHECK(parse_quantity("1us", UnitKind::time) == Approx(1e-6));
  CHECK(parse_quantity("989Tf", UnitKind::flops) == Approx(989e12));
  CHECK(parse_quantity("141GB", UnitKind::bytes) == Approx(141e9));
  CHECK(parse_quantity("1GiB", UnitKind::bytes) == Approx(1073741824.0));
  CHECK_THROWS_AS(parse_quantity("450 furlongs", UnitKind::bandwidth), std::invalid_argument);
  CHECK_THROWS_AS(parse_quantity("fast", UnitKind::time), std::invalid_argument);
  CHECK_THROWS_AS(parse_quantity("1GBps", UnitKind::time), std::invalid_argument);
}
