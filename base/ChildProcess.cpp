#include "base/ChildProcess.hpp"

#include "base/ByteIo.hpp"
#include "base/InputError.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace dbosim::sim {

const char* child_outcome_name(ChildOutcome o)
{
  switch (o) {
  case ChildOutcome::ok:
    return "ok";
  case ChildOutcome::input_error:
    return "input error";
  case ChildOutcome::internal_error:
    return "internal error";
  case ChildOutcome::killed:
    return "killed";
  }
  return "?";
}

namespace {

/** The child's side: runs `fn`, ships its result or its error's message, and leaves with the outcome's exit code. */
[[noreturn]] void child_main(const std::function<std::string()>& fn, int fd)
{
  int rc = 0;
  std::string out;
  try {
    out = fn();
  } catch (const InputError& e) {
    rc  = 2;
    out = e.what();
  } catch (const std::exception& e) {
    rc  = 1;
    out = e.what();
  } catch (...) {
    rc  = 1;
    out = "an exception that is not a std::exception";
  }
  if (!write_all(fd, out.data(), out.size()) && rc == 0)
    rc = 1;
  close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(rc);
}

} // namespace

ChildProcess::ChildProcess(const std::function<std::string()>& fn)
{
  int fds[2];
  // Close-on-exec: a child that runs another program hands the parent the pipe's end at once.
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw InternalError(fmt::format("child process: pipe failed ({})", std::strerror(errno)));
  std::fflush(stdout); // else the child's exit would print what the parent had buffered a second time
  std::fflush(stderr);
  pid_ = fork();
  if (pid_ < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw InternalError(fmt::format("child process: fork failed ({})", std::strerror(err)));
  }
  if (pid_ == 0) {
    close(fds[0]);
    child_main(fn, fds[1]);
  }
  close(fds[1]);
  fd_ = fds[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK); // drain() never blocks; wait() blocks in poll()
}

ChildProcess::~ChildProcess()
{
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  release();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), fd_(std::exchange(other.fd_, -1)), bytes_(std::move(other.bytes_))
{
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept
{
  if (this != &other) {
    ChildProcess dropped(std::move(*this)); // kills and reaps what this held
    pid_   = std::exchange(other.pid_, -1);
    fd_    = std::exchange(other.fd_, -1);
    bytes_ = std::move(other.bytes_);
  }
  return *this;
}

void ChildProcess::release()
{
  if (fd_ >= 0)
    close(fd_);
  fd_ = -1;
}

bool ChildProcess::drain()
{
  char buf[65536];
  while (fd_ >= 0) {
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n > 0) {
      bytes_.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      release();
    } else if (errno != EINTR) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return false;
      release(); // a broken pipe: what came is all that will
    }
  }
  return true;
}

ChildResult ChildProcess::wait()
{
  if (pid_ <= 0)
    throw InternalError("child process: wait() on a child already waited for");
  while (!drain()) {
    pollfd p{fd_, POLLIN, 0};
    poll(&p, 1, -1); // EINTR and POLLHUP alike: drain again
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR)
      throw InternalError(fmt::format("child process: waitpid failed ({})", std::strerror(errno)));
  }
  return finish(status);
}

std::optional<ChildResult> ChildProcess::try_wait()
{
  if (pid_ <= 0)
    throw InternalError("child process: try_wait() on a child already waited for");
  drain();
  int status      = 0;
  const pid_t got = waitpid(pid_, &status, WNOHANG);
  if (got == 0 || (got < 0 && errno == EINTR))
    return std::nullopt;
  if (got < 0)
    throw InternalError(fmt::format("child process: waitpid failed ({})", std::strerror(errno)));
  while (!drain()) { // the child has ended: the rest of its bytes are in the pipe
    pollfd p{fd_, POLLIN, 0};
    poll(&p, 1, -1);
  }
  return finish(status);
}

void ChildProcess::kill(int sig)
{
  if (pid_ > 0)
    ::kill(pid_, sig);
}

ChildResult ChildProcess::finish(int status)
{
  pid_ = -1;
  release();
  ChildResult r;
  if (WIFSIGNALED(status)) {
    r.outcome   = ChildOutcome::killed;
    r.signal    = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
    r.message   = fmt::format("killed by signal {} ({})", r.signal, strsignal(r.signal));
    return r;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  r.outcome   = r.exit_code == 0   ? ChildOutcome::ok
                : r.exit_code == 2 ? ChildOutcome::input_error
                                   : ChildOutcome::internal_error;
  if (r.ok())
    r.payload = std::move(bytes_);
  else
    r.message = bytes_.empty() ? fmt::format("exited {}", r.exit_code) : std::move(bytes_);
  bytes_.clear();
  return r;
}

ChildResult run_in_child(const std::function<std::string()>& fn) { return ChildProcess(fn).wait(); }

} // namespace dbosim::sim
