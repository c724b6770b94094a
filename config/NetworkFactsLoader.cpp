#include "config/NetworkFactsLoader.hpp"

#include "config/DataDir.hpp"
#include "config/FileMemo.hpp"
#include "config/YamlMap.hpp"

namespace dbosim {
namespace {

double sourced_quantity(YamlMap& root, const std::string& key, UnitKind kind, double plain_scale, double lo, double hi,
                        models::NetworkFacts& f)
{
  YamlMap entry  = root.get_map(key);
  double value   = entry.get_quantity("value", kind, plain_scale, lo, hi);
  f.sources[key] = entry.get_string("source");
  entry.finish();
  return value;
}

int sourced_int(YamlMap& root, const std::string& key, long lo, long hi, models::NetworkFacts& f)
{
  YamlMap entry  = root.get_map(key);
  int value      = entry.get_int("value", lo, hi);
  f.sources[key] = entry.get_string("source");
  entry.finish();
  return value;
}

models::NetworkFacts parse_network_facts(const std::string& path)
{
  YamlMap root(load_yaml_file(path), path, "");
  models::NetworkFacts f;
  f.name = root.get_string("name");
  f.nvlink_achievable_bytes_per_s =
      sourced_quantity(root, "nvlink_achievable_bandwidth", UnitKind::bandwidth, 1e9, 1e9, 1e14, f);
  f.nic_achievable_bytes_per_s =
      sourced_quantity(root, "nic_achievable_bandwidth", UnitKind::bandwidth, 1e9, 1e8, 1e13, f);
  f.nvlink_message_overhead_bytes = sourced_quantity(root, "nvlink_message_overhead", UnitKind::bytes, 1, 0, 1e7, f);
  f.nic_message_overhead_bytes    = sourced_quantity(root, "nic_message_overhead", UnitKind::bytes, 1, 0, 1e7, f);
  f.switch_latency_us             = 1e6 * sourced_quantity(root, "switch_latency", UnitKind::time, 1e-6, 0, 1e-3, f);
  f.leaf_switch_down_ports        = sourced_int(root, "leaf_switch_down_ports", 1, 4096, f);
  f.ht_nvl_chunk_tokens           = sourced_int(root, "ht_nvl_chunk_tokens", 1, 4096, f);
  f.ht_rdma_chunk_tokens          = sourced_int(root, "ht_rdma_chunk_tokens", 1, 4096, f);
  f.nccl_channels                 = sourced_int(root, "nccl_channels", 1, 1024, f);
  root.finish();
  return f;
}

} // namespace

models::NetworkFacts load_network_facts(const std::string& name_or_path)
{
  const std::string path = resolve_data_file("hwprofiles/network", name_or_path);
  static FileMemo<models::NetworkFacts> memo;
  return memo.get(path, path, [&] { return parse_network_facts(path); });
}

} // namespace dbosim
