#include "validate/RefCases.hpp"

#include "validate/E2eCases.hpp"

#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/YamlMap.hpp"
#include "models/All2AllTable.hpp"
#include "models/AttentionOps.hpp"
#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace dbosim::validate {

namespace {

namespace fs = std::filesystem;
using models::DType;

const models::HwProfile& profile(const std::string& name)
{
  static std::map<std::string, models::HwProfile> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, load_hw_profile(name)).first;
  return it->second;
}

const models::NetworkFacts& network(const std::string& name)
{
  static std::map<std::string, models::NetworkFacts> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, load_network_facts(name)).first;
  return it->second;
}

const models::ModelSpec& model(const std::string& name)
{
  static std::map<std::string, models::ModelSpec> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, load_model_zoo(name)).first;
  return it->second;
}

DType dtype_of(YamlMap& m)
{
  const std::string d = m.get_enum("dtype", {"bf16", "fp8"});
  return d == "fp8" ? DType::fp8 : DType::bf16;
}

models::StepShape shape_of(YamlMap& m)
{
  models::StepShape s;
  s.phase  = m.get_enum("phase", {"decode", "prefill"}) == "decode" ? models::Phase::decode : models::Phase::prefill;
  s.tokens = m.get_int("tokens", 1, 1 << 24);
  s.batch  = m.get_int("batch", 1, 1 << 24, s.phase == models::Phase::decode ? s.tokens : 1);
  s.context_len = m.get_int("context", 1, 1 << 24, 4096);
  return s;
}

/** us or a rate of `amount` (FLOPs or bytes) per duration, in the case's unit. */
double in_unit(YamlMap& m, const std::string& metric, double us, double flops, double bytes)
{
  if (metric == "us")
    return us;
  if (metric == "tflops")
    return flops / us * 1e-6;
  if (metric == "gbps")
    return bytes / us * 1e-3;
  m.fail("metric", "unknown metric", "us, tflops, gbps");
}

double predict_all_to_all(YamlMap& m, const std::string& metric)
{
  const models::HwProfile& hw = profile(m.get_string("profile"));
  const models::ModelSpec& md = model(m.get_string("model"));
  models::ParallelSpec par;
  par.ep = m.get_int("ep", 1, 4096);
  par.dp = m.get_int("dp", 1, 4096, par.ep);
  std::vector<std::string> backends;
  for (const models::All2AllTraits& t : models::all2all_traits)
    backends.push_back(t.name);
  const std::string backend = m.get_enum("backend", backends);
  for (const models::All2AllTraits& t : models::all2all_traits)
    if (backend == t.name)
      par.backend = t.backend;
  const models::OpKind kind = m.get_enum("op", {"D", "C"}) == "D" ? models::OpKind::D : models::OpKind::C;
  const models::StepShape s = shape_of(m);
  // The benchmark's fabric: the profile's network facts (or `network`), its NVLink domain, the kernel's SMs.
  models::CommSetup comm;
  comm.net                    = &network(m.get_string("network", hw.name));
  comm.gpus_per_node          = hw.nvlink_domain_size;
  comm.comm_sms               = m.get_int("comm_sms", 0, hw.sm_count, 0);
  const models::LayerCosts lc = models::layer_costs(md, hw, par, s, true, comm);
  const models::OpCost* op    = lc.find(kind);
  if (!op)
    m.fail("op", "the layer has no such op");
  return in_unit(m, metric, op->duration_us, op->flops, op->bytes);
}

double predict_gemm(YamlMap& m, const std::string& metric)
{
  const models::HwProfile& hw = profile(m.get_string("profile"));
  const int groups            = m.get_int("groups", 1, 4096, 1);
  const int rows              = m.get_int("m", 1, 1 << 24); // per group
  const int n                 = m.get_int("n", 1, 1 << 20);
  const int k                 = m.get_int("k", 1, 1 << 20);
  const DType dt              = dtype_of(m);
  const models::KernelWork w =
      groups == 1 ? models::gemm_kernel("gemm", rows, n, k, dt)
                  : models::grouped_gemm_kernel("grouped_gemm", double(rows) * groups, groups, groups, n, k, dt);
  const double us = models::kernel_time(hw, w).us;
  return in_unit(m, metric, us, w.flops, w.bytes);
}

double predict_attention(YamlMap& m, const std::string& metric)
{
  const models::HwProfile& hw = profile(m.get_string("profile"));
  const models::ModelSpec& md = model(m.get_string("model"));
  models::ParallelSpec par;
  par.tp                    = m.get_int("tp", 1, 1024, 1);
  const models::StepShape s = shape_of(m);
  const std::string kernel  = m.get_string("kernel");
  for (const models::KernelWork& w : models::attention_a1_kernels(md, par, s, true))
    if (w.name == kernel)
      return in_unit(m, metric, models::kernel_time(hw, w).us, w.flops, w.bytes);
  m.fail("kernel", "A1 of this model and shape has no kernel named '" + kernel + "'");
}

CaseResult run_case(YamlMap& m)
{
  CaseResult r;
  r.name                   = m.get_string("name");
  r.group                  = m.get_string("group");
  const std::string pred   = m.get_enum("predictor", {"all_to_all", "gemm", "attention"});
  const std::string metric = m.get_enum("metric", {"us", "tflops", "gbps"});
  r.metric                 = m.get_string("what", metric);
  r.unit                   = metric == "us" ? "us" : metric == "tflops" ? "TFLOPS" : "GB/s";
  r.measured               = m.get_double("measured", 1e-9, 1e12);
  r.tolerance_pct          = m.get_double("tolerance_pct", 0.1, 1000);
  m.get_string("tolerance_basis"); // required: why this tolerance
  r.source = m.get_string("source");
  try {
    if (pred == "all_to_all")
      r.predicted = predict_all_to_all(m, metric);
    else if (pred == "gemm")
      r.predicted = predict_gemm(m, metric);
    else
      r.predicted = predict_attention(m, metric);
  } catch (const std::invalid_argument& e) { // the cost models' own check of a layout or shape (ep=80 on 256 experts)
    const YAML::Mark at = m.node().Mark();
    throw InputError(m.file(), at.line + 1, at.column + 1, m.prefix(),
                     std::string("the case's layout or shape does not fit its model: ") + e.what(),
                     "a layout and step shape the model accepts");
  }
  m.allow({"note"});
  m.finish();
  return r;
}

} // namespace

std::vector<CaseResult> run_reference_cases(const std::string& dir)
{
  if (!fs::is_directory(dir))
    throw InputError(dir, 0, 0, "--cases", "not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml" && !is_e2e_case_file(e.path().filename().string()))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<CaseResult> rows;
  for (const std::string& f : files) {
    const YAML::Node root = load_yaml_file(f);
    YamlMap top(root, f, "");
    const YAML::Node list = top.raw("cases");
    if (!list.IsSequence() || list.size() == 0)
      top.fail("cases", "must be a non-empty list of cases");
    top.allow({"defaults"});
    const YAML::Node defaults = root["defaults"];
    if (defaults && !defaults.IsNull())
      YamlMap(defaults, f, "defaults"); // a mapping with plain, unique keys, else an InputError
    for (std::size_t i = 0; i < list.size(); ++i) {
      YAML::Node c = YAML::Clone(list[i]);
      if (!c.IsMap())
        top.fail("cases", "case " + std::to_string(i) + " is not a mapping");
      if (defaults && defaults.IsMap())
        for (const auto& kv : defaults)
          if (!c[kv.first.as<std::string>()])
            c[kv.first.as<std::string>()] = kv.second;
      YamlMap m(c, f, "cases[" + std::to_string(i) + "]");
      rows.push_back(run_case(m));
    }
    top.finish();
  }
  return rows;
}

} // namespace dbosim::validate
