#include "serving/PointDiskCache.hpp"

#include "base/AtomicFile.hpp"
#include "base/ByteIo.hpp"
#include "base/ContentHash.hpp"
#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "serving/StepDiskCache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace dbosim::serving {

namespace fs = std::filesystem;

namespace {

constexpr const char* header = "dbosim point result 1";

/** A cursor over an entry's text; any read past its end or off its format sets `bad`. */
struct Reader {
  const std::string& text;
  std::size_t at = 0;
  bool bad       = false;
  std::string line()
  {
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) {
      bad = true;
      return {};
    }
    std::string l = text.substr(at, end - at);
    at            = end + 1;
    return l;
  }
  std::string bytes(std::size_t n)
  {
    if (text.size() - at < n + 1 || text[at + n] != '\n') {
      bad = true;
      return {};
    }
    std::string b = text.substr(at, n);
    at += n + 1;
    return b;
  }
};

/** "WORD N REST": N parsed whole; false when the line is not of that form. */
bool split_counted(const std::string& line, const std::string& word, std::uint64_t& n, std::string& rest, int base)
{
  if (line.compare(0, word.size() + 1, word + " ") != 0)
    return false;
  const char* p   = line.c_str() + word.size() + 1;
  char* end       = nullptr;
  const auto v    = std::strtoull(p, &end, base);
  const bool some = end != p && *end == ' ';
  if (!some)
    return false;
  n    = v;
  rest = std::string(end + 1);
  return true;
}

} // namespace

const std::string& point_build_identity()
{
  static const std::string id = fmt::format("build {}\n", dbosim_build_id());
  return id;
}

std::string point_key(const std::string& scenario_text, const std::string& engine)
{
  return fmt::format("{}engine {}\ndata {}\nscenario {}\n{}", point_build_identity(), engine, data_dir(),
                     scenario_text.size(), scenario_text);
}

PointDiskCache::PointDiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string PointDiskCache::entry_path(const std::string& key) const
{
  return (fs::path(dir_) / fmt::format("{:016x}.point", content_hash(key))).string();
}

std::optional<std::uint64_t> PointDiskCache::input_hash(const std::string& path)
{
  auto it = seen_.find(path);
  if (it == seen_.end()) {
    const std::optional<std::string> bytes = read_file_bytes(path);
    it = seen_.emplace(path, bytes ? std::optional<std::uint64_t>(content_hash(*bytes)) : std::nullopt).first;
  }
  return it->second;
}

std::optional<std::vector<PointFile>> PointDiskCache::find(const std::string& key, std::string& note)
{
  note                                  = "";
  const std::string path                = entry_path(key);
  const std::optional<std::string> text = read_file_bytes(path);
  if (!text)
    return std::nullopt; // no entry
  Reader r{*text};
  std::uint64_t n = 0;
  std::string rest;
  if (r.line() != header || !split_counted(r.line() + " ", "key", n, rest, 10) || r.bad) {
    note = fmt::format("point cache entry {} ignored: not a point entry of this format", path);
    return std::nullopt;
  }
  if (r.bytes(n) != key || r.bad) {
    note = fmt::format("point cache entry {} ignored: it holds another key (another build, engine or scenario)", path);
    return std::nullopt;
  }
  std::vector<PointFile> files;
  for (;;) {
    const std::string l = r.line();
    if (r.bad)
      break;
    if (l == "end") {
      if (r.at != text->size())
        break;
      touch_cache_entry(path); // used now: the last an entry prune_step_cache removes
      return files;
    }
    std::uint64_t v = 0;
    if (split_counted(l, "input", v, rest, 16)) {
      const std::optional<std::uint64_t> now = input_hash(rest);
      if (!now || *now != v) {
        note = fmt::format("point cache entry {} not used: its input {} changed since", path, rest);
        return std::nullopt;
      }
    } else if (split_counted(l, "file", v, rest, 10) && !rest.empty() && rest.find('/') == std::string::npos) {
      std::string bytes = r.bytes(v);
      if (r.bad)
        break;
      files.emplace_back(rest, std::move(bytes));
    } else {
      break;
    }
  }
  note = fmt::format("point cache entry {} ignored: cut short or damaged", path);
  return std::nullopt;
}

bool PointDiskCache::store(const std::string& key, const std::map<std::string, std::uint64_t>& inputs,
                           const std::vector<PointFile>& files) const
{
  std::string out = fmt::format("{}\nkey {}\n{}\n", header, key.size(), key);
  for (const auto& [path, h] : inputs)
    out += fmt::format("input {:016x} {}\n", h, path);
  for (const auto& [name, bytes] : files) {
    out += fmt::format("file {} {}\n", bytes.size(), name);
    out += bytes;
    out += "\n";
  }
  out += "end\n";
  try {
    write_file_atomic(entry_path(key), out);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

} // namespace dbosim::serving
