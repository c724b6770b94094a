/* dbosim tests — run a shell command and capture its stdout and exit code (CLI-level tests). */
#pragma once
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace dbosim::test {

/** @brief Runs `cmd` through the shell; returns its stdout and sets *rc to its exit code (-1 if killed). */
inline std::string run_shell(const std::string& cmd, int* rc)
{
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
    out.append(buf, n);
  const int status = ::pclose(pipe);
  *rc              = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

} // namespace dbosim::test
