/* dbosim — one op of the replayed step: what a host thread issues onto a GPU stream. */
#pragma once
#include "models/OpCost.hpp"

#include <array>
#include <cstdint>

namespace dbosim::sim {

using models::OpKind;

/** @brief The two CUDA streams of a rank (vLLM: one shared compute stream, one shared comm stream). */
enum class StreamId : std::uint8_t { compute = 0, comm = 1 };
inline constexpr int num_streams  = 2;
inline constexpr int num_op_kinds = 8;

/** @brief "A0", "A1", "D", "MLP", "S", "C", "D_recv", "C_recv" (no allocation: used in the hot path and in traces). */
const char* op_kind_name(OpKind k);
/** @brief "compute" or "comm". */
const char* stream_name(StreamId s);
/** @brief D and C: all-to-all collectives. */
inline bool is_comm_kind(OpKind k) { return k == OpKind::D || k == OpKind::C; }
/** @brief D_recv and C_recv: the receive kernel of a D or C that runs as a recv hook (a GPU kernel on the comm stream
 *  that waits for its collective's data, then unpacks or reduces it). */
inline bool is_recv_hook(OpKind k) { return k == OpKind::D_recv || k == OpKind::C_recv; }
/** @brief The recv hook of collective `k` (D -> D_recv, C -> C_recv). */
inline OpKind recv_hook_of(OpKind k) { return k == OpKind::D ? OpKind::D_recv : OpKind::C_recv; }
/** @brief Part of an all-to-all: the collective or its recv hook (what the metrics count as comm time). */
inline bool is_all_to_all_part(OpKind k) { return is_comm_kind(k) || is_recv_hook(k); }

/** @brief Cost of one op for one micro-batch shape, as the engine needs it. */
struct OpSpec {
  OpKind kind                    = OpKind::A0;
  double duration_us             = 0; ///< compute: on the whole GPU; D/C: alone on the fabric
  double partitioned_duration_us = 0; ///< compute: on the SMs an SM partition leaves it (= duration_us without one)
  int kernels                    = 1; ///< kernel launches the host issues for it
  /** Under piecewise CUDA graphs (HostParams::piecewise): of `kernels`, those inside a splitting op, launched eagerly
   *  between the graphs, and the graph launches (pieces) that begin in this op. 0 otherwise. */
  int eager_kernels  = 0;
  int graph_launches = 0;
  /** D/C with a recv hook: after its (send) kernel ends, its data is this long in flight (wire, fences; no stream, no
   *  SMs) before the recv hook may start; its collective ends when the last rank's data has landed. 0 = no hook. */
  double flight_us = 0;
};

/** @brief A vertex of the schedule DAG. */
struct Op {
  OpKind kind                    = OpKind::A0;
  int layer                      = 0;
  int ubatch                     = 0;
  StreamId stream                = StreamId::compute;
  int host_thread                = 0; ///< the host thread (micro-batch) that issues it
  int issue_index                = 0; ///< position in the host issue order
  double duration_us             = 0;
  double partitioned_duration_us = 0;
  int kernels                    = 1;
  int eager_kernels              = 0; ///< OpSpec::eager_kernels
  int graph_launches             = 0; ///< OpSpec::graph_launches
  double flight_us               = 0; ///< OpSpec::flight_us
  bool dummy = false; ///< an empty micro-batch's op (DP padding): it still runs, and its collectives are paid
};

} // namespace dbosim::sim
