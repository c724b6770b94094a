/* dbosim — the launch of a scenario on its engine (the scenario's `engine:` row, config/EngineTable.hpp): the command
 * (one per node) and the environment that run what dbosim simulated, and a note for each thing dbosim models that the
 * engine has no flag for. Pure: no I/O. SGLang's and TensorRT-LLM's commands are built in plan/EngineLaunches.cpp,
 * each flag with the documentation page that spells it. For vLLM, every flag printed exists in its argument parser
 * (vllm/engine/arg_utils.py, EngineArgs.add_cli_args, whose parallel, scheduler, cache and compilation options mirror
 * vllm/config/{parallel,scheduler,cache,compilation}.py) or in its serve entry point (vllm/entrypoints/cli/serve.py:
 * --headless); the environment in vllm/envs.py. */
#pragma once
#include "config/Scenario.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace dbosim::plan {

struct LaunchCommand {
  std::vector<std::pair<std::string, std::string>> env; ///< name, value (exported on every node)
  std::vector<std::string> nodes;                       ///< the engine's command of each node, head node first
  std::vector<std::string> notes;                       ///< comment lines, each starting "# "
};

/** @brief The launch of `s` on its engine row's family. Multi-node: HEAD_IP is a placeholder for the head node's
 *  address. An engine without a public command (LaunchFamily::none): no nodes, a note. */
LaunchCommand launch_command(const Scenario& s);

/** @brief Nodes up to which format_launch prints every node's command. */
constexpr std::size_t launch_nodes_shown = 4;

/** @brief The launch as shell text: the notes, `export NAME=VALUE` lines, then one command per node (a "# node i"
 *  line above each when there are several); above launch_nodes_shown nodes, nodes 0, 1 and the last, and a line
 *  saying that those between run node 1's command with their own start rank (launch.nodes has them all). */
std::string format_launch(const LaunchCommand& l);

/** @brief summary.json's `launch`: {command (the head node's), env {name: value}, nodes [...], notes [...]}. */
nlohmann::json launch_json(const LaunchCommand& l);

} // namespace dbosim::plan
