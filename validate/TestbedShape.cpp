#include "validate/TestbedShape.hpp"

#include "base/InputError.hpp"
#include "config/YamlMap.hpp"

namespace dbosim::validate {

static GemmDims read_dims(YamlMap& parent, const std::string& key)
{
  YamlMap m = parent.get_map(key);
  GemmDims d{m.get_int("n", 1, 1 << 20), m.get_int("k", 1, 1 << 20)};
  m.finish();
  return d;
}

TestbedShapes load_testbed_shapes(const std::string& path)
{
  const YAML::Node root = load_yaml_file(path);
  YamlMap top(root, path, "");
  TestbedShapes out;
  out.gemm_family       = top.get_enum("gemm_family", {"gemm_bf16"});
  const int smem_bytes  = top.get_int("comm_smem_bytes", 0, 1 << 18, 0);
  const YAML::Node list = top.raw("shapes");
  if (!list.IsSequence() || list.size() == 0)
    top.fail("shapes", "must be a non-empty list of shapes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap m(list[i], path, "shapes[" + std::to_string(i) + "]");
    TestbedShape s;
    s.name   = m.get_string("name");
    s.tokens = m.get_int("tokens", 2, 1 << 20);
    if (s.tokens % 2 != 0)
      m.fail("tokens", "must be even (dbo splits it in two)");
    s.layers               = m.get_int("layers", 1, 256);
    s.comm_ctas            = m.get_int("comm_ctas", 1, 1024);
    s.comm_bytes_per_token = m.get_double("comm_bytes_per_token", 16, 1e9);
    s.comm_smem_bytes      = smem_bytes;
    s.a0                   = read_dims(m, "a0");
    s.a1                   = read_dims(m, "a1");
    s.mlp                  = read_dims(m, "mlp");
    s.s                    = read_dims(m, "s");
    m.finish();
    for (const TestbedShape& prev : out.shapes)
      if (prev.name == s.name)
        m.fail("name", "duplicate shape name '" + s.name + "'");
    out.shapes.push_back(s);
  }
  top.finish();
  return out;
}

const std::vector<TestbedVariant>& testbed_variants()
{
  using sim::ScheduleId;
  static const std::vector<TestbedVariant> v = {{"serial", ScheduleId::serial, false, false},
                                                {"async_combine", ScheduleId::async_combine, false, false},
                                                {"dbo", ScheduleId::dbo, false, false},
                                                {"dbo_green", ScheduleId::dbo, true, false},
                                                {"async_combine_hiprio", ScheduleId::async_combine, false, true},
                                                {"dbo_hiprio", ScheduleId::dbo, false, true}};
  return v;
}

} // namespace dbosim::validate
