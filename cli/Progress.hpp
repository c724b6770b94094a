/* dbosim — the progress line of a long command (sweep points, serving requests) on stderr, with the elapsed time and
 * an ETA from the rate so far. Only when stderr is a terminal: a log, a pipe or a test sees nothing, so outputs stay
 * reproducible. Updates are throttled to a few per second; the last one ends the line. */
#pragma once
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace dbosim::cli {

class Progress {
public:
  using Clock = std::chrono::steady_clock;
  Progress(std::string what, std::size_t total, bool enabled = isatty(STDERR_FILENO) != 0)
      : what_(std::move(what)), total_(total), enabled_(enabled), t0_(Clock::now()), last_(t0_ - throttle)
  {
  }
  /** @brief `done` of the total are finished (`first` of them were done before this run started: not in the rate). */
  void update(std::size_t done, std::size_t first = 0)
  {
    if (!enabled_)
      return;
    const auto now = Clock::now();
    if (done < total_ && now - last_ < throttle)
      return;
    last_                 = now;
    const double elapsed  = std::chrono::duration<double>(now - t0_).count();
    const std::size_t ran = done > first ? done - first : 0;
    std::string eta       = "eta --";
    if (ran > 0 && done < total_)
      eta = fmt::format("eta {:.0f} s", elapsed / static_cast<double>(ran) * static_cast<double>(total_ - done));
    fmt::print(stderr, "\r{}: {}/{}, {:.0f} s, {}   ", what_, done, total_, elapsed, done < total_ ? eta : "done");
    if (done >= total_)
      fmt::print(stderr, "\n");
    std::fflush(stderr);
  }

private:
  static constexpr Clock::duration throttle = std::chrono::milliseconds(250);
  std::string what_;
  std::size_t total_;
  bool enabled_;
  Clock::time_point t0_, last_;
};

} // namespace dbosim::cli
