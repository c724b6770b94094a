/* dbosim validate — a measured run of an external testbed: every op's start and end per repeat, read from a Chrome
 * trace (complete events "ph": "X" named by the op, ts and dur in µs) or a CSV (op,start_us,end_us). Repeats: the
 * k-th occurrence of an op's name in the file belongs to repeat k (a Chrome event's args.rep, when every event has
 * one, says it instead); each repeat may have its own time origin. */
#pragma once
#include <map>
#include <string>
#include <vector>

namespace dbosim::validate {

struct OpRecording {
  int reps = 0;
  std::map<std::string, std::vector<std::pair<double, double>>> spans_us; ///< op -> (start, end) per repeat
  int ignored_events = 0; ///< events whose name is no op of the list (other kernels in the trace)
  double median_duration_us(const std::string& op) const;
  double median_makespan_us() const; ///< per repeat: last end minus first start over the listed ops
};

/** @brief Reads `path` (.json: Chrome trace, an object with traceEvents or a bare event array; .csv: header
 *  `op,start_us,end_us`) for the ops named in `ops`. Every op must occur the same number of times (>= 1).
 *  @throws InputError naming the file, line (CSV) and what is wrong. */
OpRecording load_op_recording(const std::string& path, const std::vector<std::string>& ops);

} // namespace dbosim::validate
