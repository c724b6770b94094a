#include "serving/StepDiskCache.hpp"

#include "base/AtomicFile.hpp"
#include "base/ByteIo.hpp"
#include "base/ContentHash.hpp"
#include "base/InputError.hpp"
#include "base/SelfExe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace dbosim::serving {

namespace fs = std::filesystem;

namespace {

constexpr const char* env_name = "DBOSIM_STEP_CACHE";
constexpr const char* header   = "dbosim step cache 1";

std::string key_text(const StepKey& k)
{
  return fmt::format("{} {} {} {} {} {} {} {}", k.phase == models::Phase::prefill ? 1 : 0, k.tokens, k.batch,
                     k.context_len, k.decode_tokens, k.decode_batch, k.decode_context_len, k.dp_unsplit ? 1 : 0);
}

/** The fields of one record line after its tag, read in order; any that fails to parse marks the line bad. */
struct Fields {
  const char* p;
  bool ok = true;
  long integer()
  {
    char* end    = nullptr;
    const long v = std::strtol(p, &end, 10);
    ok           = ok && end != p;
    p            = end;
    return v;
  }
  double real()
  {
    char* end      = nullptr;
    const double v = std::strtod(p, &end);
    ok             = ok && end != p;
    p              = end;
    return v;
  }
  StepKey key()
  {
    StepKey k;
    k.phase              = integer() == 1 ? models::Phase::prefill : models::Phase::decode;
    k.tokens             = static_cast<int>(integer());
    k.batch              = static_cast<int>(integer());
    k.context_len        = static_cast<int>(integer());
    k.decode_tokens      = static_cast<int>(integer());
    k.decode_batch       = static_cast<int>(integer());
    k.decode_context_len = static_cast<int>(integer());
    k.dp_unsplit         = integer() == 1;
    return k;
  }
  bool done()
  {
    while (*p == ' ')
      ++p;
    return ok && *p == '\0';
  }
};

std::string hex(double v) { return fmt::format(" {:a}", v); }

/** @brief The shared libraries this process has mapped, each as "lib PATH SIZE MTIME" (sorted, one a line). */
std::string mapped_libraries()
{
  std::set<std::string> libs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos)
      libs.insert(line.substr(slash));
  }
  std::string out;
  for (const std::string& lib : libs) {
    std::error_code ec;
    const auto size = fs::file_size(lib, ec);
    const auto time = fs::last_write_time(lib, ec);
    out += fmt::format("lib {} {} {}\n", lib, ec ? 0 : size, ec ? 0 : time.time_since_epoch().count());
  }
  return out;
}

} // namespace

const std::string& build_identity_text()
{
  static const std::string text = fmt::format(
      "exe {:016x}\n{}", content_hash(read_file_bytes(self_exe("the step cache")).value_or("")), mapped_libraries());
  return text;
}

const std::string& dbosim_build_id()
{
  // A cost model changed in any other build, or another SimGrid (or any library) under this one, prices anew.
  static const std::string id = fmt::format("{:016x}", content_hash(build_identity_text()));
  return id;
}

std::string step_cache_dir()
{
  const char* dir = std::getenv(env_name);
  return dir ? dir : "";
}

void set_step_cache_dir(const std::string& dir, const std::string& flag)
{
  std::error_code ec;
  const fs::path abs = fs::absolute(dir, ec);
  fs::create_directories(abs, ec);
  if (ec || !fs::is_directory(abs))
    throw InputError(flag, 0, 0, "", fmt::format("cannot create the step cache folder {}", dir),
                     "a folder this user can write");
  const fs::path probe = abs / fmt::format(".probe.{}", ::getpid());
  bool wrote           = false;
  {
    std::ofstream out(probe);
    out << header << "\n";
    wrote = static_cast<bool>(out);
  }
  wrote = wrote && fs::exists(probe, ec);
  fs::remove(probe, ec);
  if (!wrote)
    throw InputError(flag, 0, 0, "", fmt::format("cannot write in the step cache folder {}", dir),
                     "a folder this user can write");
  setenv(env_name, abs.string().c_str(), 1);
}

void touch_cache_entry(const fs::path& file)
{
  std::error_code ec;
  fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
}

CachePrune prune_step_cache(const std::string& dir, std::uintmax_t max_bytes)
{
  struct Entry {
    fs::file_time_type used;
    std::uintmax_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  CachePrune out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string ext = e.path().extension().string();
    std::error_code fe;
    if ((ext != ".steps" && ext != ".point") || !e.is_regular_file(fe))
      continue;
    Entry en{e.last_write_time(fe), e.file_size(fe), e.path()};
    if (fe)
      continue; // gone meanwhile (another process pruned it)
    out.bytes_before += en.bytes;
    entries.push_back(std::move(en));
  }
  out.bytes_after = out.bytes_before;
  if (out.bytes_before <= max_bytes)
    return out;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used != b.used ? a.used < b.used : a.path < b.path; });
  const std::uintmax_t target = max_bytes / 10 * 9;
  for (const Entry& en : entries) {
    if (out.bytes_after <= target)
      break;
    std::error_code re;
    if (fs::remove(en.path, re)) {
      out.bytes_after -= en.bytes;
      ++out.removed;
    }
  }
  return out;
}

StepDiskTable::StepDiskTable(const std::string& dir, const std::string& owner)
    : key_(fmt::format("build {}\n{}", dbosim_build_id(), owner))
{
  file_ = fs::path(dir) / fmt::format("{:016x}.steps", content_hash(key_));
  load();
}

const StepTime* StepDiskTable::time(const StepKey& key) const
{
  auto it = times_.find(key);
  return it == times_.end() ? nullptr : &it->second;
}

const RankWork* StepDiskTable::work(const StepKey& key) const
{
  auto it = work_.find(key);
  return it == work_.end() ? nullptr : &it->second;
}

void StepDiskTable::put(const StepKey& key, const StepTime& t)
{
  times_[key]     = t;
  new_times_[key] = t;
}

void StepDiskTable::put(const StepKey& key, const RankWork& w)
{
  work_[key]     = w;
  new_work_[key] = w;
}

void StepDiskTable::load()
{
  std::string text = read_file_bytes(file_.string()).value_or("");
  // Header, "key LEN", the key's text, then one record a line (see the file's comment); lines parsed in place.
  const std::string head = fmt::format("{}\nkey {}\n", header, key_.size());
  if (text.compare(0, head.size(), head) != 0 || text.compare(head.size(), key_.size(), key_) != 0 ||
      text.size() < head.size() + key_.size() + 1 || text[head.size() + key_.size()] != '\n')
    return; // another key under the same name (a collision), another format, or a damaged file: a miss
  std::map<StepKey, StepTime> times;
  std::map<StepKey, RankWork> work;
  std::size_t at = head.size() + key_.size() + 1;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos)
      return; // a record cut short
    text[end]        = '\0';
    const char* line = text.c_str() + at;
    at               = end + 1;
    if (line[0] == '\0' || line[1] != ' ')
      return;
    Fields f{line + 2};
    const StepKey k = f.key();
    if (line[0] == 't') {
      StepTime t;
      for (double* v : {&t.step_us, &t.exposed_comm_us, &t.overlap_us, &t.draft_us, &t.step_work_us, &t.expert_spin_us,
                        &t.hot_rank_load})
        *v = f.real();
      t.ubatches   = static_cast<int>(f.integer());
      t.cuda_graph = f.integer() == 1;
      for (double& v : t.per_op_us)
        v = f.real();
      if (!f.done())
        return;
      times.emplace(k, t);
    } else if (line[0] == 'w') {
      RankWork w;
      w.attention_us = f.real();
      w.step_work_us = f.real();
      w.draft_us     = f.real();
      if (!f.done())
        return;
      work.emplace(k, w);
    } else
      return;
  }
  times_.merge(times); // what this process computed itself stays
  work_.merge(work);
  touch_cache_entry(file_); // used now: the last an entry prune_step_cache removes
}

bool StepDiskTable::save()
{
  if (new_times_.empty() && new_work_.empty())
    return true;
  load(); // what other writers added meanwhile
  std::string out = fmt::format("{}\nkey {}\n{}\n", header, key_.size(), key_);
  for (const auto& [k, t] : times_) {
    out += "t " + key_text(k);
    for (const double v :
         {t.step_us, t.exposed_comm_us, t.overlap_us, t.draft_us, t.step_work_us, t.expert_spin_us, t.hot_rank_load})
      out += hex(v);
    out += fmt::format(" {} {}", t.ubatches, t.cuda_graph ? 1 : 0);
    for (const double v : t.per_op_us)
      out += hex(v);
    out += "\n";
  }
  for (const auto& [k, w] : work_)
    out += "w " + key_text(k) + hex(w.attention_us) + hex(w.step_work_us) + hex(w.draft_us) + "\n";
  try {
    write_file_atomic(file_.string(), out);
  } catch (const InputError&) {
    return false;
  }
  new_times_.clear();
  new_work_.clear();
  return true;
}

namespace {
std::map<std::pair<std::string, std::string>, std::unique_ptr<StepDiskTable>>& open_tables()
{
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<StepDiskTable>> open;
  return open;
}
} // namespace

StepDiskTable& step_disk_table(const std::string& dir, const std::string& owner)
{
  std::unique_ptr<StepDiskTable>& t = open_tables()[{dir, owner}];
  if (!t)
    t = std::make_unique<StepDiskTable>(dir, owner);
  return *t;
}

void save_step_disk_tables()
{
  for (auto& [owner, t] : open_tables())
    t->save(); // a write that fails leaves the cache colder, never a result different
}

} // namespace dbosim::serving
