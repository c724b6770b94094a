/* dbosim — the launch builders of the engines other than vLLM (plan/LaunchCommand.cpp dispatches on the engine row's
 * LaunchFamily) and what they share with vLLM's. Internal to plan/. */
#pragma once
#include "plan/LaunchCommand.hpp"

#include <string>

namespace dbosim::plan {

/** @brief The Hugging Face id of a zoo model ("https://huggingface.co/ORG/NAME/..." -> "ORG/NAME"), else its name. */
std::string model_id(const models::ModelSpec& m);

/** @brief `python -m sglang.launch_server ...` of `s`, one per node. */
LaunchCommand sglang_launch(const Scenario& s);

/** @brief `trtllm-serve ...` of `s`, with the extra LLM API options a scenario needs as notes. */
LaunchCommand trtllm_launch(const Scenario& s);

} // namespace dbosim::plan
