#include "calibrate/ResultsStore.hpp"

#include "base/InputError.hpp"
#include "base/StrictJson.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace dbosim::calib {
namespace {

std::runtime_error sys_error(const std::string& what, const std::string& path)
{
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, const std::string& text, const std::string& path)
{
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw sys_error("write failed", path);
    }
    done += static_cast<size_t>(n);
  }
}

/** @brief Parses the whole file; `clean` receives the text of the whole records, in order. */
std::vector<Measurement> parse(const std::string& path, const std::string& text, int& dropped, std::string& clean)
{
  std::vector<Measurement> out;
  dropped    = 0;
  size_t pos = 0;
  int line   = 0;
  while (pos < text.size()) {
    size_t nl       = text.find('\n', pos);
    bool terminated = nl != std::string::npos;
    std::string one = text.substr(pos, terminated ? nl - pos : std::string::npos);
    size_t next     = terminated ? nl + 1 : text.size();
    ++line;
    if (one.find_first_not_of(" \t\r") == std::string::npos) {
      pos = next;
      continue;
    }
    std::string duplicate;
    bool whole = false; // the line is JSON (a torn last line is not)
    try {
      const nlohmann::json record = parse_json_unique_keys(one, duplicate);
      whole                       = true;
      out.push_back(measurement_from_json(record));
      clean += one + "\n";
    } catch (const std::exception& e) {
      if (next == text.size()) { // the last line: a run killed while writing it
        ++dropped;
      } else {
        throw InputError(path, line, 1, "record", std::string("corrupt raw-results record: ") + e.what(),
                         "one JSON object per line: {key, family, params, status, us, ...}");
      }
    }
    if (whole && !duplicate.empty()) // a record that says two things
      throw InputError(path, line, 1, "record." + duplicate, "a key given twice in one record", "one value per key");
    pos = next;
  }
  return out;
}

std::string slurp(const std::string& path, bool& exists)
{
  std::ifstream in(path, std::ios::binary);
  exists = static_cast<bool>(in);
  if (!exists)
    return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

void write_file_atomically(const std::string& path, const std::string& text)
{
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd                = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw sys_error("cannot create", tmp);
  try {
    write_all(fd, text, tmp);
    if (::fsync(fd) != 0)
      throw sys_error("fsync failed", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw sys_error("rename failed", path);
  }
}

std::vector<Measurement> ResultsStore::read_file(const std::string& path, int* dropped)
{
  bool exists      = false;
  std::string text = slurp(path, exists);
  if (!exists)
    throw InputError(path, "cannot open raw-results file");
  int n = 0;
  std::string clean;
  auto records = parse(path, text, n, clean);
  if (dropped)
    *dropped = n;
  return records;
}

ResultsStore::ResultsStore(std::string path) : path_(std::move(path))
{
  bool exists      = false;
  std::string text = slurp(path_, exists);
  std::string clean;
  records_ = parse(path_, text, dropped_, clean);
  for (const auto& m : records_)
    keys_.insert(m.spec.key());
  if (!exists || clean != text)
    write_file_atomically(path_, clean);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND);
  if (fd_ < 0)
    throw sys_error("cannot open for appending", path_);
}

ResultsStore::~ResultsStore()
{
  if (fd_ >= 0)
    ::close(fd_);
}

void ResultsStore::append(const Measurement& m)
{
  const std::string key = m.spec.key();
  if (has(key))
    throw std::runtime_error(path_ + ": record '" + key + "' is already present");
  write_all(fd_, to_json(m).dump() + "\n", path_);
  if (::fsync(fd_) != 0)
    throw sys_error("fsync failed", path_);
  records_.push_back(m);
  keys_.insert(key);
}

} // namespace dbosim::calib
