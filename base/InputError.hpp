/* dbosim — errors in user-supplied files. */
#pragma once
#include <stdexcept>
#include <string>

namespace dbosim {

/** @brief Bad input: a file, line, column and key, and what was wrong. Exit code 2 at the CLI. */
class InputError : public std::runtime_error {
public:
  /** @brief Message formatted as `file:line:col: key: message (valid: valid)`; line/col are 1-based, 0 = unknown. */
  InputError(std::string file, int line, int col, std::string key, std::string message, std::string valid = "");
  /** @brief An error about a whole file (not found, unreadable, not YAML). */
  InputError(std::string file, std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

private:
  std::string file_;
  int line_ = 0;
  std::string key_;
};

/** @brief The message of an InputError's what() about `file`, without its location: `file` and then `:line:col: ` (or
 *  `: `) taken off the front, so that another file's line can carry it. */
std::string message_without_location(std::string what, const std::string& file);

/** @brief A broken invariant inside dbosim (a bug, not bad input). Exit code 1 at the CLI. */
class InternalError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace dbosim
