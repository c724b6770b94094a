/* dbosim — `dbosim validate`: reference cases, the e2e group (published deployments, each a `dbosim run` child) and
 * the overlap testbed, predicted vs measured, MAPE per group, a CSV, and the regression gate. Exit codes: 0 every
 * checked case within its tolerance (and the gate holds), 3 a case exceeds its tolerance, 4 the gate fails (a group's
 * MAPE above its recorded level + 2 points), 2 bad input. With --bench-result FILE --scenario S.yaml: a user's own
 * serving benchmark against the scenario's serving simulation (cli/BenchResultCommand), reported, not checked: 0 or 2.
 */
#pragma once
#include <CLI/CLI.hpp>

namespace dbosim::cli {

/** @brief Adds the `validate` subcommand (its options live in ValidateCommand.cpp). */
CLI::App* add_validate_command(CLI::App& app);
/** @brief Runs it after the command line was parsed. */
int validate_command();

} // namespace dbosim::cli
