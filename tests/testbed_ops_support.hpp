/* dbosim tests — the error an external-testbed op list gets: shared by the op-list tests. */
#pragma once
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "validate/TestbedOps.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace dbosim::test {

/** @brief The InputError's message for the op list `text` (checked to be located in its file); fails if it loads. */
inline std::string testbed_ops_error(const std::string& text)
{
  TempDir dir;
  const std::string path = dir.write("t.yaml", text);
  try {
    validate::load_testbed_ops(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind(path + ":", 0) == 0); // located in the file
    return msg;
  }
  FAIL("no InputError for:\n" << text);
  return "";
}

} // namespace dbosim::test
