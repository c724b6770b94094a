/* dbosim validate — trace import: kernels of a measured trace (a Chrome / PyTorch-profiler trace JSON, or the
 * profile-data kernel CSV: stream,start_us,dur_us,phase,chunk_idx,cls,grid,block,name) mapped to dbosim's op kinds,
 * and per-op totals compared with a dbosim trace.json.
 *
 * The rule table (first match wins; each rule tests one field of a kernel against a case-insensitive regex):
 *   field  pattern                                       kind    why
 *   cat    ^host_                                        (skip)  dbosim's host-launch and sync slices
 *   name   ^(A0|A1|D|MLP|S|C)$                           itself  dbosim and overlap-testbed traces name ops already
 *   cls    ep_dispatch | name dispatch                   D       DeepEP dispatch (and its notify/layout kernels)
 *   cls    ep_combine  | name combine                    C       DeepEP combine
 *   cls    wgrad_gemm                                    other   training weight gradients: no serving op
 *   cls    attention_core|gate_topk | name flash|mla|fmha|attn  A1  core attention and the MoE gate (docs/domain.md §1)
 *   phase  ^attn                                         A0      the rest of the attention block: norms, projections
 *   cls    dense_gemm (phase ^mlp)                       S       the dense GEMMs of the MLP block: shared expert
 *   phase  ^mlp | cls expert_grouped_gemm|swiglu         MLP     routed experts and their quantize/activation kernels
 *   otherwise                                            other
 * A rule on a field the input lacks (a Chrome trace has no cls or phase; its "cat" and "args" are used when present)
 * does not match. Kernels of kind "other" are counted but not compared. */
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace dbosim::validate {

struct TraceKernel {
  std::string name, cls, phase, cat;
  std::string stream;
  double start_us = 0;
  double dur_us   = 0;
};

/** @brief The event array of a Chrome trace's text: the document's traceEvents, or the document itself when it is an
 *  array. @throws InputError naming `path` for malformed JSON or a document without an event array. Every Chrome
 *  trace dbosim reads (imported traces, external testbed recordings) goes through it. */
nlohmann::json chrome_trace_events(const std::string& path, const std::string& text);

/** @brief Reads a trace: *.csv (profile-data kernel CSV) or Chrome trace JSON (object with traceEvents, or an array
 *  of events); only complete events (ph "X") are kernels. @throws InputError on a malformed file. */
std::vector<TraceKernel> read_trace(const std::string& path);

/** @brief The op kind of a kernel by the rule table: "A0".."C", "other" or "" (skipped). */
std::string op_kind_of(const TraceKernel& k);

/** @brief Per op kind: kernels, total µs, and the streams they ran on. */
struct OpTotals {
  int kernels     = 0;
  double total_us = 0;
  std::map<std::string, double> us_by_stream;
};
std::map<std::string, OpTotals> op_totals(const std::vector<TraceKernel>& kernels);

/** @brief The printed per-op comparison of a measured trace with a dbosim trace (either may be empty: totals only). */
std::string compare_traces(const std::string& measured_path, const std::string& dbosim_path);

} // namespace dbosim::validate
