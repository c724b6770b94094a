#include "config/RoutingHistogram.hpp"

#include "config/YamlMap.hpp"

namespace dbosim {

std::vector<double> load_routing_histogram(const std::string& path)
{
  YamlMap h(load_yaml_file(path), path, "");
  std::vector<double> weights = h.get_double_list("weights", 0, 1e18);
  h.get_string("source");
  h.finish();
  return weights;
}

} // namespace dbosim
