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
  int reps  = 0; ///< repeats per rank
  int ranks = 1; ///< ranks recorded (each with its own clock)
  /// op -> (start, end) per repeat, rank-major: rank q's repeat r at q * reps + r
  std::map<std::string, std::vector<std::pair<double, double>>> spans_us;
  int ignored_events = 0; ///< events whose name is no op of the list (other kernels in the trace)
  double median_duration_us(const std::string& op) const; ///< over every rank's repeats
  /// per repeat: the greatest over ranks of that rank's last end minus first start over the listed ops
  double median_makespan_us() const;
};

/** @brief Reads `path` (.json: Chrome trace, an object with traceEvents or a bare event array; .csv: header
 *  `op,start_us,end_us`) for the ops named in `ops`. Every op must occur the same number of times (>= 1).
 *  @throws InputError naming the file, line (CSV) and what is wrong. */
OpRecording load_op_recording(const std::string& path, const std::vector<std::string>& ops);

/** @brief Per-rank recordings of one SPMD op list: `pattern` holds `{rank}`, replaced by 0 .. world_size-1, and each
 *  file is read as by load_op_recording; a pattern without `{rank}` is one file (world size 1 only).
 *  @throws InputError naming the file when one is missing or records another number of repeats than rank 0's. */
OpRecording load_rank_recordings(const std::string& pattern, int world_size, const std::vector<std::string>& ops);

} // namespace dbosim::validate
