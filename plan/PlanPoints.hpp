/* dbosim — the points of a plan: the cartesian product of its sweep axes (first axis slowest), each a scenario,
 * less those their engine cannot be launched to run (PlanSpec::dropped). */
#pragma once
#include "plan/PlanSpec.hpp"

#include <string>
#include <utility>
#include <vector>

namespace dbosim::plan {

struct PlanPoint {
  std::size_t index = 0;
  std::vector<std::string> keys;                   ///< every axis key, in axis order
  std::vector<YAML::Node> nodes;                   ///< the value of each key at this point
  std::vector<std::string> values;                 ///< the same values as text
  std::string value(const std::string& key) const; ///< "" when the key is not an axis
  std::string label() const;                       ///< "parallel.ep=8, overlap.enable_dbo=true"
};

/** @brief Every point of the plan, in point order: the sweep's product less spec.dropped (the points their engine
 *  cannot be launched to run), numbered from 0 in that order. */
std::vector<PlanPoint> enumerate_points(const PlanSpec& spec);

/** @brief The scenario YAML of one point: the base with the point's values set. */
std::string point_yaml(const PlanSpec& spec, const PlanPoint& point);

/** @brief A scenario file for `dbosim sweep` that runs exactly `points` (one zipped axis of every key), in order. */
std::string shard_sweep_yaml(const PlanSpec& spec, const std::vector<PlanPoint>& points);

} // namespace dbosim::plan
