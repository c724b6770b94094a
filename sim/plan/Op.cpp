#include "sim/plan/Op.hpp"

namespace dbosim::sim {

const char* op_kind_name(OpKind k)
{
  static constexpr std::array<const char*, num_op_kinds> names{"A0", "A1", "D", "MLP", "S", "C", "D_recv", "C_recv"};
  return names[static_cast<int>(k)];
}

const char* stream_name(StreamId s) { return s == StreamId::compute ? "compute" : "comm"; }

} // namespace dbosim::sim
