/* dbosim — SIGINT and SIGTERM, while a long command (sweep, plan) runs, only set a flag: the command stops its points,
 * writes nothing that looks finished, and exits 128 + signal. Instances nest (a plan runs a sweep): they share one
 * flag, and each restores the handlers it found. */
#pragma once
#include <csignal>

#include <signal.h>

namespace dbosim::cli {

class StopOnSignal {
public:
  StopOnSignal()
  {
    struct sigaction sa {};
    sa.sa_handler = [](int sig) { signal_ = sig; };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignal()
  {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignal(const StopOnSignal&)            = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  /** @brief The signal that asked this process to stop, else 0. */
  static int requested() { return signal_; }

private:
  static inline volatile std::sig_atomic_t signal_ = 0;
  struct sigaction old_int_ {
  }, old_term_{};
};

} // namespace dbosim::cli
