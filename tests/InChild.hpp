/* dbosim tests — runs a simulation in a forked child: SimGrid allows one simulation per process, so a test that
 * compares two runs does each in a fresh child (base/ChildProcess) and gets plain data back through its pipe. */
#pragma once
#include "base/ChildProcess.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <type_traits>

namespace dbosim::test {

/** @brief What `fn()` returned in a forked child; a value-initialised Result when it threw (so a test can REQUIRE
 *  a field it sets). Result must be trivially copyable. */
template <class Result, class Fn> Result in_child(Fn fn)
{
  static_assert(std::is_trivially_copyable_v<Result>);
  const sim::ChildResult child = sim::run_in_child([&] {
    Result r{};
    try {
      r = fn();
    } catch (...) {
    }
    return std::string(reinterpret_cast<const char*>(&r), sizeof r);
  });
  INFO(child.message);
  REQUIRE(child.ok());
  REQUIRE(child.payload.size() == sizeof(Result));
  Result r{};
  std::memcpy(&r, child.payload.data(), sizeof r);
  return r;
}

} // namespace dbosim::test
