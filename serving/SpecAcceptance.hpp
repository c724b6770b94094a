/* dbosim — which drafts a verification step accepts. Draft i is accepted with probability a_i once drafts 1..i-1
 * were (speculative_config.acceptance_rate); the draw for a request's step is a hash of (seed, request id, tokens
 * generated so far, draft position), so a request's draws do not depend on the step times or on the other
 * requests, and a run is byte-identical for the same inputs and seed. */
#pragma once
#include "models/SpecDecode.hpp"

#include <cstdint>

namespace dbosim::serving {

/** @brief Uniform in [0, 1) from (seed, request, generated, position): splitmix64 over the mixed key, top 53 bits. */
double acceptance_draw(std::uint64_t seed, int request_id, int generated, int position);

/** @brief Drafts accepted out of the `drafts` (<= k) a request verified this step: the leading run of accepted
 *  positions. */
int accepted_drafts(const models::SpecDecodeSpec& spec, std::uint64_t seed, int request_id, int generated, int drafts);

} // namespace dbosim::serving
