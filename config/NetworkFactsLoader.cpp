#include "config/NetworkFactsLoader.hpp"

#include "config/DataDir.hpp"
#include "config/FileMemo.hpp"
#include "config/YamlMap.hpp"

#include <fmt/format.h>

#include <cmath>

namespace dbosim {
namespace {

/** @brief Reads `{value, source}` under `key` of `parent`: `read_value(entry)` reads the value; the source is
 *  recorded under the entry's dotted path ("deepep_call_fixed", "mori.call_fixed", "scale_up.link_bandwidth"). */
template <typename ReadValue>
auto sourced_entry(YamlMap& parent, const std::string& key, models::NetworkFacts& f, ReadValue read_value)
{
  YamlMap entry             = parent.get_map(key);
  auto value                = read_value(entry);
  f.sources[entry.prefix()] = entry.get_string("source");
  entry.finish();
  return value;
}

double sourced_quantity(YamlMap& parent, const std::string& key, UnitKind kind, double plain_scale, double lo,
                        double hi, models::NetworkFacts& f)
{
  return sourced_entry(parent, key, f, [&](YamlMap& e) { return e.get_quantity("value", kind, plain_scale, lo, hi); });
}

int sourced_int(YamlMap& parent, const std::string& key, long lo, long hi, models::NetworkFacts& f)
{
  return sourced_entry(parent, key, f, [&](YamlMap& e) { return e.get_int("value", lo, hi); });
}

/** DeepEP's per-EP chunk table: equal-length integer columns, EP strictly ascending. */
models::NetworkFacts::HtChunks ht_chunks(YamlMap& root, models::NetworkFacts& f)
{
  const std::string key = "ht_chunk_tokens";
  YamlMap t             = root.get_map(key);
  models::NetworkFacts::HtChunks c;
  auto column = [&](const std::string& name, std::vector<int>& out) {
    for (double v : t.get_double_list(name, 1, 4096)) {
      if (v != static_cast<int>(v))
        t.fail(name, "must hold whole token counts", "integers in [1, 4096]");
      out.push_back(static_cast<int>(v));
    }
  };
  column("ep", c.ep);
  column("dispatch_nvl", c.dispatch_nvl);
  column("dispatch_rdma", c.dispatch_rdma);
  column("combine_nvl", c.combine_nvl);
  column("combine_rdma", c.combine_rdma);
  f.sources[key] = t.get_string("source");
  for (const std::vector<int>* col : {&c.dispatch_nvl, &c.dispatch_rdma, &c.combine_nvl, &c.combine_rdma})
    if (col->size() != c.ep.size())
      t.fail("ep", "every column must have one entry per EP size", fmt::format("{} entries", c.ep.size()));
  for (std::size_t i = 1; i < c.ep.size(); ++i)
    if (c.ep[i] <= c.ep[i - 1])
      t.fail("ep", "EP sizes must be strictly ascending");
  if (c.ep.empty())
    t.fail("ep", "needs at least one EP size");
  t.finish();
  return c;
}

/** @brief The optional `mori:` map: MoRI-EP's kernel facts, each {value, source}. */
void mori(YamlMap& root, models::NetworkFacts& f)
{
  if (!root.has("mori"))
    return;
  YamlMap m            = root.get_map("mori");
  f.mori.call_fixed_us = 1e6 * sourced_quantity(m, "call_fixed", UnitKind::time, 1e-6, 0, 1e-3, f);
  f.mori.dispatch_efficiency =
      sourced_entry(m, "dispatch_efficiency", f, [](YamlMap& e) { return e.get_double("value", 0.01, 1.0); });
  m.finish();
  f.mori.present = true;
}

/** @brief The optional `scale_up:` map: the topology by registry name and, for a full mesh, its links. */
void scale_up(YamlMap& root, models::NetworkFacts& f)
{
  if (!root.has("scale_up"))
    return;
  YamlMap s                      = root.get_map("scale_up");
  YamlMap topo                   = s.get_map("topology");
  const auto name                = topo.get_string("value");
  f.sources["scale_up.topology"] = topo.get_string("source");
  if (!models::parse_scale_up_topology(name, f.scale_up_topology))
    topo.fail("value", fmt::format("unknown topology '{}'", name), models::scale_up_topology_names());
  topo.finish();
  if (f.scale_up_topology == models::ScaleUpTopology::full_mesh) {
    auto sourced            = [&](const std::string& key, auto read) { return sourced_entry(s, key, f, read); };
    f.mesh_links_per_gpu    = sourced("links_per_gpu", [](YamlMap& e) { return e.get_int("value", 1, 1024); });
    f.mesh_link_bytes_per_s = sourced(
        "link_bandwidth", [](YamlMap& e) { return e.get_quantity("value", UnitKind::bandwidth, 1e9, 1e8, 1e13); });
    f.mesh_link_achievable_bytes_per_s = sourced("link_achievable_bandwidth", [](YamlMap& e) {
      return e.get_quantity("value", UnitKind::bandwidth, 1e9, 1e8, 1e13);
    });
    if (f.mesh_link_achievable_bytes_per_s > f.mesh_link_bytes_per_s)
      s.fail("link_achievable_bandwidth", "exceeds the link's raw rate", "<= link_bandwidth");
    // The per-GPU figure the switch models read must be the links' sum, or the two views of one fabric disagree.
    const double sum = f.mesh_links_per_gpu * f.mesh_link_achievable_bytes_per_s;
    if (std::abs(f.nvlink_achievable_bytes_per_s - sum) > 0.01 * sum)
      root.fail("nvlink_achievable_bandwidth", "on a full mesh must be links_per_gpu x link_achievable_bandwidth",
                fmt::format("{:g} GB/s", sum / 1e9));
  }
  s.finish();
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
  f.deepep_call_fixed_us          = 1e6 * sourced_quantity(root, "deepep_call_fixed", UnitKind::time, 1e-6, 0, 1e-3, f);
  // The receive kernels' fixed parts are parts of the call's fixed cost: at most deepep_call_fixed.
  auto recv_fixed_us = [&](const std::string& key) {
    const double v = 1e6 * sourced_quantity(root, key, UnitKind::time, 1e-6, 0, 1e-3, f);
    if (v > f.deepep_call_fixed_us)
      root.get_map(key).fail("value",
                             fmt::format("{} us exceeds deepep_call_fixed ({} us), the whole call's fixed cost "
                                         "of which the receive kernel's is a part",
                                         v, f.deepep_call_fixed_us),
                             fmt::format("0..{} us", f.deepep_call_fixed_us));
    return v;
  };
  f.deepep_ll_dispatch_recv_fixed_us = recv_fixed_us("deepep_ll_dispatch_recv_fixed");
  f.deepep_ll_combine_recv_fixed_us  = recv_fixed_us("deepep_ll_combine_recv_fixed");
  f.deepep_ht_internode_efficiency   = sourced_entry(root, "deepep_ht_internode_efficiency", f,
                                                     [](YamlMap& e) { return e.get_double("value", 0.1, 1.0); });
  f.ht_chunks                        = ht_chunks(root, f);
  mori(root, f);
  scale_up(root, f);
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
