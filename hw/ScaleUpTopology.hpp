/* dbosim — the scale-up fabric inside one GPU domain, chosen by name in the network facts (`scale_up.topology`): a
 * switch (NVSwitch: each GPU's own port bounds its traffic) or a full mesh of point-to-point links (AMD xGMI: each
 * peer pair has one link, so the busiest pair bounds a transfer, not the GPU's summed links). */
#pragma once
#include <string>
#include <vector>

namespace dbosim::models {

enum class ScaleUpTopology {
  switched, ///< every GPU's port goes to a non-blocking switch: a GPU reaches any peer at its whole port rate
  full_mesh ///< one link per peer pair: a GPU reaches one peer at one link's rate, all peers at the links' sum
};

/** @brief A registry row: {name, one-line doc, topology}. */
struct ScaleUpTopologyEntry {
  const char* name;
  const char* doc;
  ScaleUpTopology topology;
};

const std::vector<ScaleUpTopologyEntry>& scale_up_topology_registry();

/** @brief The registry name of `t` ("switch", "full_mesh"). */
std::string scale_up_topology_name(ScaleUpTopology t);

/** @brief The topology named `name`; false when no row has that name. */
bool parse_scale_up_topology(const std::string& name, ScaleUpTopology& out);

/** @brief Every registry name, comma-separated (for error messages). */
std::string scale_up_topology_names();

} // namespace dbosim::models
