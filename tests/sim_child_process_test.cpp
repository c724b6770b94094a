/* sim::ChildProcess: every way a forked child can end reads back as one outcome, with its result or its message. */
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

using namespace dbosim;
using namespace dbosim::sim;

TEST_CASE("sim::ChildProcess: a callable that returns ships its bytes back (ok, exit 0)", "[quick]")
{
  const ChildResult r = run_in_child([] { return std::string("step 42\0us", 10); });
  CHECK(r.outcome == ChildOutcome::ok);
  CHECK(r.ok());
  CHECK(r.exit_code == 0);
  CHECK(r.payload == std::string("step 42\0us", 10)); // bytes, not a C string
  CHECK(r.message.empty());
}

TEST_CASE("sim::ChildProcess: a result larger than the pipe's buffer comes back whole", "[quick]")
{
  std::string big(4 << 20, '\0'); // 4 MiB: many times a pipe's 64 KiB
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>(i * 7 + i / 4099);
  const ChildResult r = run_in_child([&] { return big; });
  REQUIRE(r.ok());
  CHECK(r.payload.size() == big.size());
  CHECK(r.payload == big);
}

TEST_CASE("sim::ChildProcess: a thrown InputError is an input error (exit 2) with its message", "[quick]")
{
  const ChildResult r = run_in_child([]() -> std::string { throw InputError("s.yaml", 3, 5, "workload", "bad"); });
  CHECK(r.outcome == ChildOutcome::input_error);
  CHECK(r.exit_code == 2);
  CHECK(r.message == "s.yaml:3:5: workload: bad");
  CHECK(r.payload.empty());
}

TEST_CASE("sim::ChildProcess: any other exception is an internal error (exit 1) with its message", "[quick]")
{
  SECTION("a std::exception")
  {
    const ChildResult r = run_in_child([]() -> std::string { throw std::logic_error("broken invariant"); });
    CHECK(r.outcome == ChildOutcome::internal_error);
    CHECK(r.exit_code == 1);
    CHECK(r.message == "broken invariant");
  }
  SECTION("something that is not a std::exception")
  {
    const ChildResult r = run_in_child([]() -> std::string { throw 7; });
    CHECK(r.outcome == ChildOutcome::internal_error);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.message, Catch::Contains("not a std::exception"));
  }
  SECTION("an exit code of its own (a program that failed to start)")
  {
    const ChildResult r = run_in_child([]() -> std::string { _exit(127); });
    CHECK(r.outcome == ChildOutcome::internal_error);
    CHECK(r.exit_code == 127);
    CHECK(r.message == "exited 127");
  }
}

TEST_CASE("sim::ChildProcess: a child ended by a signal is killed, exit code 128 + signal", "[quick]")
{
  SECTION("abort")
  {
    const ChildResult r = run_in_child([]() -> std::string { std::abort(); });
    CHECK(r.outcome == ChildOutcome::killed);
    CHECK(r.signal == SIGABRT);
    CHECK(r.exit_code == 128 + SIGABRT);
    CHECK_THAT(r.message, Catch::Contains("signal " + std::to_string(SIGABRT)));
  }
  SECTION("a kill from the parent, seen by try_wait")
  {
    ChildProcess child([]() -> std::string {
      pause();
      return "never";
    });
    CHECK_FALSE(child.try_wait().has_value()); // still running
    child.kill(SIGTERM);
    const ChildResult r = child.wait();
    CHECK(r.outcome == ChildOutcome::killed);
    CHECK(r.signal == SIGTERM);
    CHECK(r.exit_code == 128 + SIGTERM);
  }
}

TEST_CASE("sim::ChildProcess: try_wait polls a child to its end without blocking", "[quick]")
{
  ChildProcess child([] { return std::string(200000, 'x'); }); // more than the pipe holds: try_wait must read
  std::optional<ChildResult> r;
  for (int i = 0; i < 2000 && !r; ++i) {
    r = child.try_wait();
    if (!r)
      usleep(5000);
  }
  REQUIRE(r.has_value());
  CHECK(r->ok());
  CHECK(r->payload == std::string(200000, 'x'));
}

TEST_CASE("sim::ChildProcess: the outcomes have names", "[quick]")
{
  CHECK(std::string(child_outcome_name(ChildOutcome::ok)) == "ok");
  CHECK(std::string(child_outcome_name(ChildOutcome::input_error)) == "input error");
  CHECK(std::string(child_outcome_name(ChildOutcome::internal_error)) == "internal error");
  CHECK(std::string(child_outcome_name(ChildOutcome::killed)) == "killed");
}
