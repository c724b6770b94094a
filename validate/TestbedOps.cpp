#include "validate/TestbedOps.hpp"

#include "base/InputError.hpp"
#include "config/YamlMap.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace dbosim::validate {

namespace {

struct KindName {
  TestbedKernelKind kind;
  const char* name;
};
constexpr KindName kind_table[] = {{TestbedKernelKind::gemm, "gemm"},
                                   {TestbedKernelKind::batched_gemm, "batched_gemm"},
                                   {TestbedKernelKind::grouped_gemm, "grouped_gemm"},
                                   {TestbedKernelKind::copy, "copy"},
                                   {TestbedKernelKind::all_to_all, "all_to_all"}};

constexpr int max_dim = 1 << 20;

std::vector<int> read_ranks(YamlMap& m, int world_size)
{
  const YAML::Node list   = m.raw("ranks");
  const std::string valid = fmt::format("a non-empty list of distinct ranks 0..{}", world_size - 1);
  if (!list.IsSequence() || list.size() == 0)
    m.fail("ranks", "must be " + valid);
  std::vector<int> out;
  for (const YAML::Node& e : list) {
    long r = -1;
    try {
      r = e.IsScalar() ? e.as<long>() : -1;
    } catch (const YAML::Exception&) {
      r = -1;
    }
    if (r < 0 || r >= world_size)
      m.fail_at(e, "ranks",
                fmt::format("'{}' is no rank of world_size {}", e.IsScalar() ? e.Scalar() : "?", world_size), valid);
    if (std::find(out.begin(), out.end(), static_cast<int>(r)) != out.end())
      m.fail_at(e, "ranks", fmt::format("rank {} listed twice", r), valid);
    out.push_back(static_cast<int>(r));
  }
  return out;
}

TestbedKernel read_kernel(YamlMap& op, int world_size)
{
  YamlMap m = op.get_map("kernel");
  std::vector<std::string> names;
  for (const KindName& k : kind_table)
    names.emplace_back(k.name);
  const std::string kind = m.get_enum("kind", names);
  TestbedKernel out;
  for (const KindName& k : kind_table)
    if (kind == k.name)
      out.kind = k.kind;
  if (out.kind == TestbedKernelKind::copy) {
    out.bytes              = m.get_double("bytes", 1, 1e12);
    out.ctas               = m.get_int("ctas", 1, 1024);
    out.smem_bytes_per_cta = m.get_int("smem_bytes_per_cta", 0, 1 << 20, 0);
    if (m.has("smem_bytes_per_cta")) { // checked against the profile's SMs when priced (validate/ExternalTestbed.cpp)
      const YAML::Mark at = m.raw("smem_bytes_per_cta").Mark();
      out.smem_line       = at.line + 1;
      out.smem_col        = at.column + 1;
    }
  } else if (out.kind == TestbedKernelKind::all_to_all) {
    out.bytes      = m.get_double("bytes", 0, 1e12);
    out.recv_bytes = m.get_double("recv_bytes", 0, 1e12, out.bytes);
    out.ranks      = read_ranks(m, world_size);
  } else {
    if (out.kind == TestbedKernelKind::batched_gemm)
      out.batch = m.get_int("batch", 1, max_dim);
    else if (out.kind == TestbedKernelKind::grouped_gemm)
      out.batch = m.get_int("groups", 1, 4096);
    out.m                = m.get_int("m", 1, max_dim);
    out.n                = m.get_int("n", 1, max_dim);
    out.k                = m.get_int("k", 1, max_dim);
    const std::string dt = m.get_string("dtype", "bf16");
    if (!models::parse_dtype(dt, out.dtype))
      m.fail("dtype", "unknown dtype '" + dt + "'", models::dtype_names());
  }
  m.finish();
  return out;
}

/* The first cycle through the dependency edges (op -> the ops it depends on), as op names; empty when none. */
std::vector<int> find_cycle(const std::vector<std::vector<int>>& deps)
{
  const std::size_t n = deps.size();
  std::vector<int> state(n, 0), parent(n, -1); // 0 new, 1 on the stack, 2 done
  for (std::size_t root = 0; root < n; ++root) {
    if (state[root] != 0)
      continue;
    std::vector<std::pair<int, std::size_t>> stack{{static_cast<int>(root), 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == deps[v].size()) {
        state[v] = 2;
        stack.pop_back();
        continue;
      }
      const int w = deps[v][next++];
      if (state[w] == 1) { // back edge: the cycle is w ... v on the stack
        std::vector<int> cycle;
        auto it = std::find_if(stack.begin(), stack.end(), [w](const auto& f) { return f.first == w; });
        for (; it != stack.end(); ++it)
          cycle.push_back(it->first);
        cycle.push_back(w);
        return cycle;
      }
      if (state[w] == 0) {
        state[w] = 1;
        stack.emplace_back(w, 0);
      }
    }
  }
  return {};
}

} // namespace

const char* testbed_kernel_kind_name(TestbedKernelKind k)
{
  for (const KindName& e : kind_table)
    if (e.kind == k)
      return e.name;
  return "?";
}

int TestbedOps::num_ubatches() const
{
  int n = 0;
  for (const TestbedOp& op : ops)
    n = std::max(n, op.ubatch + 1);
  return n;
}

namespace {

/** One op of the list: its name (unique: `index` maps names to positions), stream, micro-batch and kernel; the
 *  names it depends on go to `deps`. */
TestbedOp read_testbed_op(YamlMap& m, const YAML::Node& node, std::size_t i, int world_size,
                          std::map<std::string, int>& index, std::vector<std::string>& deps)
{
  TestbedOp op;
  op.line = node.Mark().line + 1;
  op.name = m.get_string("name");
  if (op.name.empty() || op.name.find_first_of(",\"\n") != std::string::npos)
    m.fail("name", "must be non-empty, without commas, quotes or line breaks (it names the op in recordings)");
  if (!index.emplace(op.name, static_cast<int>(i)).second)
    m.fail("name", fmt::format("duplicate op name '{}'", op.name));
  op.stream = m.get_enum("stream", {"compute", "comm"}) == "comm" ? sim::StreamId::comm : sim::StreamId::compute;
  op.ubatch = m.get_int("ubatch", 0, 63, 0);
  if (m.has("depends_on")) {
    const YAML::Node d = m.raw("depends_on");
    if (!d.IsSequence())
      m.fail("depends_on", "must be a list of op names");
    for (const YAML::Node& e : d) {
      if (!e.IsScalar())
        m.fail_at(e, "depends_on", "must be a list of op names");
      deps.push_back(e.as<std::string>());
    }
  }
  op.kernel = read_kernel(m, world_size);
  m.finish();
  return op;
}

/** Each op's dependencies by position: known ops, not itself, no cycle, each listed before the op (host issue
 *  order). */
void resolve_dependencies(const YAML::Node& list, std::vector<YamlMap>& maps,
                          const std::vector<std::vector<std::string>>& dep_names,
                          const std::map<std::string, int>& index, TestbedOps& t)
{
  std::vector<std::vector<int>> deps(t.ops.size());
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const YAML::Node d = list[i]["depends_on"];
    for (std::size_t j = 0; j < dep_names[i].size(); ++j) {
      auto it = index.find(dep_names[i][j]);
      if (it == index.end())
        maps[i].fail_at(d[j], "depends_on",
                        fmt::format("op '{}' depends on unknown op '{}'", t.ops[i].name, dep_names[i][j]));
      if (it->second == static_cast<int>(i))
        maps[i].fail_at(d[j], "depends_on", fmt::format("op '{}' depends on itself", t.ops[i].name));
      deps[i].push_back(it->second);
    }
  }
  const std::vector<int> cycle = find_cycle(deps);
  if (!cycle.empty()) {
    std::string names;
    for (int v : cycle)
      names += (names.empty() ? "" : " -> ") + t.ops[static_cast<std::size_t>(v)].name;
    maps[static_cast<std::size_t>(cycle.front())].fail("depends_on", "dependency cycle: " + names);
  }
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    for (std::size_t j = 0; j < deps[i].size(); ++j) {
      if (deps[i][j] > static_cast<int>(i))
        maps[i].fail_at(list[i]["depends_on"][j], "depends_on",
                        fmt::format("op '{}' depends on '{}', listed later: ops are in host issue order and a wait "
                                    "must follow the op it waits for",
                                    t.ops[i].name, dep_names[i][j]));
      t.ops[i].depends_on.push_back(deps[i][j]);
    }
}

} // namespace

TestbedOps load_testbed_ops(const std::string& path)
{
  const YAML::Node root = load_yaml_file(path);
  YamlMap top(root, path, "");
  TestbedOps t;
  t.file       = path;
  t.name       = top.get_string("name", std::filesystem::path(path).stem().string());
  t.profile    = top.get_string("profile");
  t.world_size = top.get_int("world_size", 1, 4096, 1);
  if (top.has("partition")) {
    YamlMap p               = top.get_map("partition");
    t.partition_compute_sms = p.get_int("compute_sms", 1, 4096);
    t.partition_comm_sms    = p.get_int("comm_sms", 1, 4096);
    p.finish();
  }
  t.comm_high_priority  = top.get_enum("comm_priority", {"default", "high"}, "default") == "high";
  const YAML::Node list = top.raw("ops");
  if (!list.IsSequence() || list.size() == 0)
    top.fail("ops", "must be a non-empty list of ops");
  std::vector<YamlMap> maps;
  std::vector<std::vector<std::string>> dep_names;
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < list.size(); ++i) {
    maps.emplace_back(list[i], path, "ops[" + std::to_string(i) + "]");
    std::vector<std::string> deps;
    TestbedOp op = read_testbed_op(maps.back(), list[i], i, t.world_size, index, deps);
    dep_names.push_back(std::move(deps));
    t.ops.push_back(std::move(op));
  }
  top.finish();

  resolve_dependencies(list, maps, dep_names, index, t);
  return t;
}

std::string testbed_ops_yaml(const TestbedOps& t, const std::string& header_comment)
{
  std::string out = header_comment;
  out += fmt::format("name: {}\nprofile: {}\n", t.name, t.profile);
  if (t.world_size > 1)
    out += fmt::format("world_size: {}\n", t.world_size);
  if (t.partition_compute_sms > 0)
    out += fmt::format("partition: {{compute_sms: {}, comm_sms: {}}}\n", t.partition_compute_sms, t.partition_comm_sms);
  if (t.comm_high_priority)
    out += "comm_priority: high\n";
  out += "ops:\n";
  for (const TestbedOp& op : t.ops) {
    std::string deps;
    for (int d : op.depends_on)
      deps += (deps.empty() ? "" : ", ") + t.ops[static_cast<std::size_t>(d)].name;
    const TestbedKernel& k = op.kernel;
    std::string kernel;
    switch (k.kind) {
    case TestbedKernelKind::copy:
      kernel = fmt::format("{{kind: copy, bytes: {:.0f}, ctas: {}, smem_bytes_per_cta: {}}}", k.bytes, k.ctas,
                           k.smem_bytes_per_cta);
      break;
    case TestbedKernelKind::all_to_all:
      kernel = fmt::format("{{kind: all_to_all, bytes: {:.0f}, recv_bytes: {:.0f}, ranks: [{}]}}", k.bytes,
                           k.recv_bytes, fmt::join(k.ranks, ", "));
      break;
    case TestbedKernelKind::batched_gemm:
    case TestbedKernelKind::grouped_gemm:
      kernel = fmt::format("{{kind: {}, {}: {}, m: {}, n: {}, k: {}, dtype: {}}}", testbed_kernel_kind_name(k.kind),
                           k.kind == TestbedKernelKind::batched_gemm ? "batch" : "groups", k.batch, k.m, k.n, k.k,
                           models::dtype_name(k.dtype));
      break;
    case TestbedKernelKind::gemm:
      kernel =
          fmt::format("{{kind: gemm, m: {}, n: {}, k: {}, dtype: {}}}", k.m, k.n, k.k, models::dtype_name(k.dtype));
      break;
    }
    out += fmt::format("  - {{name: {}, stream: {}, ubatch: {}, depends_on: [{}],\n     kernel: {}}}\n", op.name,
                       sim::stream_name(op.stream), op.ubatch, deps, kernel);
  }
  return out;
}

} // namespace dbosim::validate
