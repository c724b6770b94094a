/* dbosim — a step under speculative decoding (scenario speculative_config): the target's forward is the engine's
 * step over 1 + k tokens per decoding request; the draft module's k passes follow it in series (models/SpecDecode),
 * and a request gains the expected accepted tokens per step. Shared by `dbosim run` and the serving oracle. */
#pragma once
#include "config/Scenario.hpp"
#include "models/SpecDecode.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace dbosim::sim {

/** @brief How the drafter issues its passes: vLLM replays the drafter's piecewise CUDA graphs unless the deployment
 *  runs eager (cuda_graph none, or the ROCm host sync after each collective). */
models::DraftIssue draft_issue(const Deployment& s);

/** @brief The draft module's passes after a target step of shape `target` (empty when speculative decoding is off).
 *  InputError (naming speculative_config) when the cost model rejects the draft's shape. */
models::DraftCost scenario_draft_cost(const Deployment& s, const models::StepShape& target);

/** @brief Its `us` through `memo` (models::DraftMemo: the same number bit for bit, the kernels that do not read the
 *  context kept across the calls for `s`); the same InputError. */
double scenario_draft_us(const Deployment& s, const models::StepShape& target, models::DraftMemo& memo);

/** @brief summary.json's "speculative" block: method, k, acceptance, verification tokens, each draft pass, the step
 *  with its draft, expected accepted tokens per request and the TPOT (step / accepted tokens). */
nlohmann::ordered_json spec_decode_json(const Deployment& s, const models::DraftCost& draft, double target_step_us);

/** @brief The block as printed lines. */
std::string spec_decode_text(const nlohmann::ordered_json& block);

} // namespace dbosim::sim
