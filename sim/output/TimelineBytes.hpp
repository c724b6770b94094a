/* dbosim — a timeline as bytes and back: a SimGrid child process (one simulation per process) ships the op records
 * it replayed back to its parent over a pipe (base/ChildProcess), one rank's or every rank class's. */
#pragma once
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/Timeline.hpp"

#include <string>

namespace dbosim::sim {

/** @brief A timeline as bytes (a child process ships it back over its pipe) and back. */
std::string timeline_bytes(const Timeline& tl);
Timeline timeline_from_bytes(const std::string& bytes);

/** @brief Every class's timeline and the step times as bytes (a SimGrid child ships them back over its pipe), and
 *  back. */
std::string cluster_timeline_bytes(const ClusterTimeline& ct);
ClusterTimeline cluster_timeline_from_bytes(const std::string& bytes);

} // namespace dbosim::sim
