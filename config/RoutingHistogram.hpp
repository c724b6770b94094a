/* dbosim — the expert-routing histogram file of cluster.routing: histogram. */
#pragma once
#include <string>
#include <vector>

namespace dbosim {

/** @brief Reads `{weights: [w0, w1, ...], source: "..."}` (one weight >= 0 per routed expert; the count is checked
 *  against the model when the plan is built). @throws InputError naming the file, line and key. */
std::vector<double> load_routing_histogram(const std::string& path);

} // namespace dbosim
