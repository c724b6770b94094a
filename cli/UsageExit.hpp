/* dbosim — a command line's parse error as an exit code, for every binary (dbosim, dbosim-calibrate): --help exits 0,
 * a usage error 2 with CLI11's message, except that a first word naming no subcommand is said as such (CLI11 reports
 * only "A subcommand is required" there). Header-only, CLI11 only. */
#pragma once
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

namespace dbosim::cli {

/** @brief What `app` prints for the parse error `e` and the exit code: 0 for --help, else 2. */
inline int usage_exit(CLI::App& app, const CLI::ParseError& e, const char* program)
{
  const auto remaining = app.remaining();
  if (dynamic_cast<const CLI::RequiredError*>(&e) && !remaining.empty() && app.get_subcommands().empty()) {
    std::string valid;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      valid += (valid.empty() ? "" : ", ") + sub->get_name();
    std::fprintf(stderr, "%s: '%s' is no subcommand (valid: %s)\nRun with --help for more information.\n", program,
                 remaining.front().c_str(), valid.c_str());
    return 2;
  }
  return app.exit(e) == 0 ? 0 : 2;
}

} // namespace dbosim::cli
