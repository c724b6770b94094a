#include "config/InputFile.hpp"

#include "base/ContentHash.hpp"
#include "base/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

namespace dbosim {

std::size_t first_invalid_utf8(const std::string& text)
{
  const auto* b       = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i       = 0;
  while (i < n) {
    const unsigned c = b[i];
    int len          = 0;
    unsigned lo = 0x80, hi = 0xBF; // the allowed range of the second byte
    if (c < 0x80)
      len = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      lo  = c == 0xE0 ? 0xA0 : 0x80;
      hi  = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      lo  = c == 0xF0 ? 0x90 : 0x80;
      hi  = c == 0xF4 ? 0x8F : 0xBF;
    } else
      return i;
    if (i + static_cast<std::size_t>(len) > n)
      return i;
    for (int k = 1; k < len; ++k) {
      const unsigned x = b[i + static_cast<std::size_t>(k)];
      if (k == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF))
        return i;
    }
    i += static_cast<std::size_t>(len);
  }
  return std::string::npos;
}

namespace {

/** Every input is text: a NUL (which cuts a C string, and so a number, short) or another control byte is refused
 *  where it stands, before any reader parses the bytes. One branch-free pass first (most files are clean). */
void refuse_control_bytes(const std::string& path, const std::string& bytes)
{
  unsigned control = 0; // bitwise, not short-circuit: the loop vectorizes
  for (const char ch : bytes) {
    const unsigned c = static_cast<unsigned char>(ch);
    control |=
        (unsigned(c < 0x20) & unsigned(c != '\t') & unsigned(c != '\n') & unsigned(c != '\r')) | unsigned(c == 0x7F);
  }
  if (control == 0)
    return;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if ((c >= 0x20 && c != 0x7F) || c == '\t' || c == '\n' || c == '\r')
      continue;
    const std::size_t start = bytes.rfind('\n', i == 0 ? 0 : i - 1);
    const std::size_t line  = 1 + static_cast<std::size_t>(std::count(bytes.begin(), bytes.begin() + long(i), '\n'));
    const std::size_t col   = start == std::string::npos ? i + 1 : i - start;
    throw InputError(path, static_cast<int>(line), static_cast<int>(col), "",
                     c == 0 ? std::string("a NUL byte: this is not a text file (inputs are UTF-8 text)")
                            : fmt::format("control byte 0x{:02X}: inputs are UTF-8 text, whose only control bytes are "
                                          "tab, CR and LF",
                                          c));
  }
}

} // namespace

std::string read_input_file(const std::string& path, std::size_t max_bytes)
{
  namespace fs = std::filesystem;
  if (path.empty())
    throw InputError(path, "an empty path names no file");
  if (first_invalid_utf8(path) != std::string::npos)
    throw InputError(path, "the path is not valid UTF-8 (names and paths go into UTF-8 JSON outputs)");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st))
    throw InputError(path, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, fs::exists(st) ? "cannot open file (permission denied?)" : "cannot open file");
  std::string bytes;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (bytes.size() + got > max_bytes)
      throw InputError(path, fmt::format("is larger than the {} MiB limit for this kind of input (a device or an "
                                         "endless file?)",
                                         max_bytes >> 20));
    bytes.append(buf, got);
  }
  if (in.bad())
    throw InputError(path, "read error");
  refuse_control_bytes(path, bytes);
  InputDigest::record(path, bytes);
  return bytes;
}

namespace {
thread_local InputDigest* innermost_digest = nullptr;
} // namespace

namespace {
thread_local bool inputs_fixed = false;
} // namespace

FixedInputs::FixedInputs() : before_(inputs_fixed) { inputs_fixed = true; }

FixedInputs::~FixedInputs() { inputs_fixed = before_; }

bool FixedInputs::active() { return inputs_fixed; }

InputDigest::InputDigest() : outer_(innermost_digest) { innermost_digest = this; }

InputDigest::~InputDigest() { innermost_digest = outer_; }

namespace {

/** content_hash of `bytes`, the file at `path`: kept with the bytes (files up to 4 MiB), so that a file read again
 *  unchanged (a sweep's profile, once per point) is compared, not hashed again. */
std::uint64_t file_hash(const std::string& path, const std::string& bytes)
{
  thread_local std::map<std::string, std::pair<std::string, std::uint64_t>> hashed;
  if (bytes.size() > (std::size_t{4} << 20))
    return content_hash(bytes);
  auto& [kept, h] = hashed[path];
  if (kept.empty() || kept != bytes) {
    kept = bytes;
    h    = content_hash(bytes);
  }
  return h;
}

} // namespace

void InputDigest::record(const std::string& path, const std::string& bytes)
{
  if (!innermost_digest)
    return;
  const std::uint64_t h = file_hash(path, bytes);
  for (InputDigest* d = innermost_digest; d; d = d->outer_)
    d->files_[path] = h;
}

std::string InputDigest::hex(const std::string& except) const
{
  std::set<std::uint64_t> contents; // sorted: the order the files were read in does not matter
  for (const auto& [path, h] : files_)
    if (path != except)
      contents.insert(h);
  std::uint64_t all = content_hash_seed;
  for (const std::uint64_t h : contents)
    all = content_hash(std::string_view(reinterpret_cast<const char*>(&h), sizeof h), all);
  return fmt::format("{:016x}", all);
}

} // namespace dbosim
