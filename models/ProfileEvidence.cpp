#include "models/ProfileEvidence.hpp"

#include "models/OpCost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace dbosim::models {
namespace {

/*** The families: which tables and which sourced keys price each (the keys as HwProfile::sources names them) ***/

struct FamilyInputs {
  const char* family;
  std::vector<std::string> table_prefixes; ///< OpTable::family prefixes of its tables
  std::vector<std::string> keys;           ///< profile keys pricing the shapes without a table
  std::vector<std::string> network_keys;   ///< NetworkFacts keys (a2a, nccl)
};

const std::vector<FamilyInputs>& family_inputs()
{
  static const std::vector<FamilyInputs> all{
      {"gemm",
       {"gemm_", "head_bmm_"}, // MLA's per-head products are batched GEMMs (their floor is the gemm floor)
       {"efficiency.gemm", "efficiency.gemm_fp8", "efficiency.gemm_fp4", "kernel_floors.gemm",
        "kernel_floors.gemm_fp8"},
       {}},
      {"grouped_gemm",
       {"grouped_gemm_"},
       {"efficiency.gemm", "efficiency.gemm_fp8", "efficiency.gemm_fp4", "kernel_floors.grouped_gemm"},
       {}},
      {"mla_decode", {"mla_decode"}, {"efficiency.attention", "kernel_floors.attention"}, {}},
      {"attention", {"attention_"}, {"efficiency.attention", "kernel_floors.attention"}, {}},
      {"memory",
       {"rmsnorm", "silu_mul"},
       {"efficiency.memory", "kernel_floors.rmsnorm", "kernel_floors.silu_mul", "kernel_floors.elementwise",
        "kernel_floors.activation", "kernel_floors.gather", "kernel_floors.quant", "kernel_floors.reduction",
        "kernel_floors.sampling"},
       {}},
      {"host",
       {},
       {"host.launch_cpu", "host.graph_replay_kernel", "host.event", "host.stream_sync", "host.graph_launch",
        "host.eager_kernel_gap", "host.graph_piece_gap", "host.python_launch"},
       {}},
      {"a2a",
       {},
       {},
       {"nvlink_achievable_bandwidth", "nic_achievable_bandwidth", "nvlink_message_overhead", "nic_message_overhead",
        "switch_latency", "deepep_call_fixed", "deepep_ll_dispatch_recv_fixed", "deepep_ll_combine_recv_fixed",
        "deepep_ht_internode_efficiency"}},
      {"nccl",
       {},
       {"nvlink_latency", "nic_latency"},
       {"nvlink_achievable_bandwidth", "nic_achievable_bandwidth", "switch_latency"}},
  };
  return all;
}

/** Network facts files carry no provenance kind: their non-estimate sources are published figures. */
constexpr const char* network_kind = "datasheet";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/** Folds `e` (named `what`) into the running weakest kind and the keys at it. */
void fold(Evidence e, const std::string& what, bool& any, Evidence& weakest, std::vector<std::string>& keys)
{
  if (!any || e > weakest) {
    weakest = e;
    keys.clear();
  }
  any = true;
  if (e == weakest)
    keys.push_back(what);
}

const FamilyInputs& inputs_of(const std::string& family)
{
  for (const FamilyInputs& f : family_inputs())
    if (family == f.family)
      return f;
  return family_inputs().front();
}

/** The family a kernel part belongs to, from its table and floor families. */
std::string part_family(const OpKernelPart& p)
{
  const std::string& t = p.table_family;
  if (starts_with(t, "grouped_gemm") || p.floor_family == "grouped_gemm")
    return "grouped_gemm";
  if (starts_with(t, "gemm") || starts_with(p.floor_family, "gemm"))
    return "gemm";
  if (t == "mla_decode")
    return "mla_decode";
  if (starts_with(t, "attention") || p.floor_family == "attention")
    return "attention";
  return "memory";
}

/** The efficiency key the roofline read for a part of `family` (FP8 GEMMs their own where the profile has it). */
std::string efficiency_key(const HwProfile& hw, const std::string& family, const OpKernelPart& p)
{
  if (family == "gemm" || family == "grouped_gemm")
    return p.compute_dtype == DType::fp8 && hw.gemm_fp8_efficiency > 0   ? "efficiency.gemm_fp8"
           : p.compute_dtype == DType::fp4 && hw.gemm_fp4_efficiency > 0 ? "efficiency.gemm_fp4"
                                                                         : "efficiency.gemm";
  if (family == "mla_decode" || family == "attention")
    return "efficiency.attention";
  return "efficiency.memory";
}

std::string source_of(const std::map<std::string, std::string>& sources, const std::string& key)
{
  const auto it = sources.find(key);
  return it == sources.end() ? std::string() : it->second;
}

} // namespace

std::string evidence_name(Evidence e)
{
  switch (e) {
  case Evidence::measured:
    return "measured";
  case Evidence::derived:
    return "derived";
  case Evidence::published:
    return "published";
  case Evidence::estimated:
    return "estimated";
  }
  return "?";
}

Evidence classify_source(const std::string& profile_kind, const std::string& source)
{
  std::string head = source.substr(0, 8);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  if (head == "estimate")
    return Evidence::estimated;
  if (profile_kind == "measured")
    return Evidence::measured;
  if (profile_kind == "derived")
    return Evidence::derived;
  return Evidence::published;
}

std::vector<FamilyEvidence> profile_evidence(const HwProfile& hw, const NetworkFacts* net)
{
  std::vector<FamilyEvidence> out;
  for (const FamilyInputs& in : family_inputs()) {
    if (!in.network_keys.empty() && !net)
      continue;
    FamilyEvidence f;
    f.family        = in.family;
    bool tables_any = false;
    std::vector<std::string> table_keys;
    for (const OpTable& t : hw.tables)
      for (const std::string& prefix : in.table_prefixes)
        if (starts_with(t.family, prefix)) {
          ++f.tables;
          fold(classify_source(hw.provenance.kind, t.us_by_tokens.source), t.family, tables_any, f.tables_evidence,
               table_keys);
        }
    for (const std::string& key : in.keys)
      if (hw.sources.count(key))
        fold(classify_source(hw.provenance.kind, hw.sources.at(key)), key, f.has_fallback, f.fallback, f.weakest);
    for (const std::string& key : in.network_keys)
      if (net->sources.count(key))
        fold(classify_source(network_kind, net->sources.at(key)), key, f.has_fallback, f.fallback, f.weakest);
    out.push_back(std::move(f));
  }
  return out;
}

std::string format_profile_evidence(const std::vector<FamilyEvidence>& families)
{
  std::string s;
  for (const FamilyEvidence& f : families) {
    std::string what;
    if (f.tables > 0)
      what = fmt::format("{} table{} {}", f.tables, f.tables == 1 ? "" : "s", evidence_name(f.tables_evidence));
    if (f.has_fallback) {
      what += (what.empty() ? "" : "; other shapes ") + evidence_name(f.fallback);
      if (f.fallback == Evidence::estimated) // name what to measure
        what += fmt::format(" ({})", fmt::join(f.weakest, ", "));
    }
    if (what.empty())
      what = "none in the profile";
    s += fmt::format("  {:<13} {}\n", f.family, what);
  }
  return s;
}

std::vector<std::string> estimated_families_used(const HwProfile& hw, const NetworkFacts* net,
                                                 const std::vector<const LayerCosts*>& layers,
                                                 const std::vector<const OpCost*>& extra_ops, bool scale_out)
{
  std::map<std::string, std::set<std::string>> used; // family -> the estimated keys behind it
  auto note_key = [&](const std::string& family, const std::string& key, const std::string& kind) {
    const std::string src = key.empty() ? std::string() : source_of(hw.sources, key);
    if (!src.empty() && classify_source(kind, src) == Evidence::estimated)
      used[family].insert(key);
  };
  auto note_part = [&](const OpKernelPart& p) {
    const std::string family = part_family(p);
    if (p.floored) {
      note_key(family, "kernel_floors." + p.floor_family, hw.provenance.kind);
      return;
    }
    if (!p.timed_by.empty()) {
      const OpTable* t = nullptr;
      for (const OpTable& candidate : hw.tables)
        if (candidate.family == p.timed_by && candidate.dims == p.table_dims)
          t = &candidate;
      if (t && classify_source(hw.provenance.kind, t->us_by_tokens.source) == Evidence::estimated)
        used[family].insert(p.timed_by);
      return;
    }
    note_key(family, efficiency_key(hw, family, p), hw.provenance.kind);
  };
  bool comm    = false;
  auto note_op = [&](const OpCost& op) {
    if (op.kind == OpKind::D || op.kind == OpKind::C || op.kind == OpKind::D_recv || op.kind == OpKind::C_recv)
      comm = true; // priced by the network facts
    for (const OpKernelPart& p : op.parts)
      if (p.on_links)
        comm = true; // a collective inside a compute op (the TP all-reduce): priced by the network facts
      else
        note_part(p);
  };
  for (const LayerCosts* l : layers)
    for (const OpCost& op : l->ops)
      note_op(op);
  for (const OpCost* op : extra_ops)
    note_op(*op);
  if (comm && net)
    for (const std::string& key : inputs_of("a2a").network_keys) {
      const bool nic_key =
          key == "nic_achievable_bandwidth" || key == "nic_message_overhead" || key == "switch_latency";
      if (nic_key && !scale_out)
        continue; // one NVLink domain: the NIC and the switches carry none of it
      const std::string src = source_of(net->sources, key);
      if (!src.empty() && classify_source(network_kind, src) == Evidence::estimated)
        used["a2a"].insert(key);
    }
  for (const std::string& key : inputs_of("host").keys)
    note_key("host", key, hw.provenance.kind);
  std::vector<std::string> out;
  for (const FamilyInputs& in : family_inputs())
    if (used.count(in.family))
      out.push_back(fmt::format("{} ({})", in.family, fmt::join(used.at(in.family), ", ")));
  return out;
}

} // namespace dbosim::models
