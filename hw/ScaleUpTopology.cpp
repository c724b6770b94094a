#include "hw/ScaleUpTopology.hpp"

namespace dbosim::models {

const std::vector<ScaleUpTopologyEntry>& scale_up_topology_registry()
{
  static const std::vector<ScaleUpTopologyEntry> r = {
      {"switch", "non-blocking switch (NVSwitch): each GPU's port, up and down, bounds its traffic to all peers",
       ScaleUpTopology::switched},
      {"full_mesh",
       "point-to-point links, one per peer pair (AMD xGMI): each pair's link bounds its traffic; the links' sum bounds "
       "the GPU's",
       ScaleUpTopology::full_mesh},
  };
  return r;
}

std::string scale_up_topology_name(ScaleUpTopology t)
{
  for (const ScaleUpTopologyEntry& e : scale_up_topology_registry())
    if (e.topology == t)
      return e.name;
  return "?";
}

bool parse_scale_up_topology(const std::string& name, ScaleUpTopology& out)
{
  for (const ScaleUpTopologyEntry& e : scale_up_topology_registry())
    if (name == e.name) {
      out = e.topology;
      return true;
    }
  return false;
}

std::string scale_up_topology_names()
{
  std::string s;
  for (const ScaleUpTopologyEntry& e : scale_up_topology_registry())
    s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

} // namespace dbosim::models
