/* dbosim — memoizes a loader that is a pure function of one file: a process that reads the same profile or zoo model
 * many times (a sweep's validation, the serving oracle, the fuzzers) parses it once. Exact: a hit needs the same key
 * and the same bytes, re-read on every call, so an edited file is parsed afresh; a failed load is never kept. */
#pragma once
#include "base/InputError.hpp"
#include "config/InputFile.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace dbosim {

template <class T> class FileMemo {
public:
  /** @brief `load()`'s value for `path`'s current bytes under `key` (the path, plus whatever else the loader's result
   *  depends on): the memo when both match, else a fresh load, kept when the file did not change meanwhile. */
  template <class Load> T get(const std::string& key, const std::string& path, Load&& load)
  {
    std::string before;
    if (!read(path, before))
      return load(); // the loader reports the missing file
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = memo_.find(key);
      if (it != memo_.end() && it->second.first == before)
        return it->second.second;
    }
    T value = load();
    std::string after;
    if (read(path, after) && after == before) {
      std::lock_guard<std::mutex> lock(mutex_);
      memo_[key] = {std::move(before), value};
    }
    return value;
  }

private:
  /* The whole file through the one input reader (size cap, directories refused); a file it refuses is left to the
   * loader, which reports it. */
  static bool read(const std::string& path, std::string& bytes)
  {
    try {
      bytes = read_input_file(path);
      return true;
    } catch (const InputError&) {
      return false;
    }
  }

  std::mutex mutex_;
  std::map<std::string, std::pair<std::string, T>> memo_; ///< key -> (the file's bytes, the loaded value)
};

} // namespace dbosim
