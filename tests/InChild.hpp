/* dbosim tests — runs a simulation in a forked child: SimGrid allows one simulation per process, so a test that
 * compares two runs does each in a fresh child and gets plain data back through a pipe. */
#pragma once
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace dbosim::test {

/** @brief What `fn()` returned in a forked child; a value-initialised Result when it threw (so a test can REQUIRE
 *  a field it sets). Result must be trivially copyable. */
template <class Result, class Fn> Result in_child(Fn fn)
{
  static_assert(std::is_trivially_copyable_v<Result>);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    Result r{};
    try {
      r = fn();
    } catch (...) {
    }
    const bool ok = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  Result r{};
  std::size_t got = 0; // a pipe hands over more than PIPE_BUF bytes in pieces
  for (ssize_t k = 1; got < sizeof r && k > 0; got += static_cast<std::size_t>(std::max<ssize_t>(k, 0)))
    k = read(fds[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(got == sizeof r);
  return r;
}

} // namespace dbosim::test
