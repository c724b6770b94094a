/* dbosim — runs work in a forked child process. SimGrid allows one simulation per process, so every second
 * simulation (a --compare mode, a serving step shape, a validate replay, a test's second run) runs in a child; this is
 * the one place that forks, ships the child's result bytes back over a pipe and reads how it ended. */
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace dbosim::sim {

/** @brief How a child ended. The exit codes are dbosim's own (0 ok, 2 bad input, 1 internal error), so a child that
 *  runs the dbosim program (exec) reads the same way as one that runs a callable. */
enum class ChildOutcome {
  ok,             ///< exit 0: the callable returned; ChildResult::payload holds what it returned
  input_error,    ///< exit 2: it threw InputError; ChildResult::message is its what()
  internal_error, ///< exit 1 (it threw anything else; message is its what()) or any other exit code
  killed,         ///< ended by a signal (an abort, a crash, a kill)
};

/** @brief The name of an outcome ("ok", "input error", "internal error", "killed"). */
const char* child_outcome_name(ChildOutcome o);

/** @brief What came back from a child. */
struct ChildResult {
  ChildOutcome outcome = ChildOutcome::internal_error;
  std::string payload; ///< ok: the bytes the callable returned (any size)
  std::string
      message;       ///< not ok: the child's error message; "exited N" / "killed by signal N (name)" when it left none
  int exit_code = 0; ///< the shell's view: the exit status, or 128 + signal when killed
  int signal    = 0; ///< killed: the signal number

  bool ok() const { return outcome == ChildOutcome::ok; }
};

/** @brief One forked child running `fn`. The constructor flushes stdio and forks; the child runs `fn` and leaves with
 *  _exit (no atexit handlers, no destructors of the parent's objects): exit 0 with fn's result written to the pipe;
 *  exit 2 with the message of an InputError; exit 1 with the message of any other exception. `fn` may also exec
 *  another program (the pipe closes on exec) or _exit itself: its exit status is then read as above.
 *  The destructor kills (SIGKILL) and reaps a child nobody waited for. */
class ChildProcess {
public:
  /** @throws InternalError when the pipe or the fork fails. */
  explicit ChildProcess(const std::function<std::string()>& fn);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&)            = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  /** @brief Blocks until the child has ended (reading its pipe meanwhile, so a result larger than the pipe's buffer
   *  never stalls it) and returns how. Call once. */
  ChildResult wait();
  /** @brief The result when the child has ended, else nothing; never blocks (it reads what the pipe holds). */
  std::optional<ChildResult> try_wait();
  /** @brief Sends `sig` to the child when it still runs. */
  void kill(int sig);

private:
  pid_t pid_ = -1;
  int fd_    = -1; ///< the read end of the child's pipe; -1 once at its end
  std::string bytes_;
  bool drain(); ///< reads what the pipe holds without blocking; true at its end
  ChildResult finish(int status);
  void release();
};

/** @brief Runs `fn` in a forked child and waits for it. */
ChildResult run_in_child(const std::function<std::string()>& fn);

} // namespace dbosim::sim
