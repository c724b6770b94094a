/* dbosim — memoizes a loader that is a pure function of one file: a process that reads the same profile or zoo model
 * many times (a sweep's validation, the serving oracle, the fuzzers) parses it once. Exact: a hit needs the same key
 * and the same bytes, re-read on every call, so an edited file is parsed afresh; a failed load is never kept. Under
 * FixedInputs (config/InputFile.hpp) a hit needs the key alone: the file is not read again. */
#pragma once
#include "base/InputError.hpp"
#include "config/InputFile.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace dbosim {

template <class T> class FileMemo {
public:
  /** @brief `load()`'s value for `path`'s current bytes under `key` (the path, plus whatever else the loader's result
   *  depends on): the memo when both match, else a fresh load, kept when the file did not change meanwhile. */
  template <class Load> T get(const std::string& key, const std::string& path, Load&& load)
  {
    if (FixedInputs::active())
      if (std::optional<T> kept = fixed(key, path))
        return std::move(*kept);
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
  /* Under FixedInputs: the value kept for `key`, its bytes recorded as read_input_file records them; none if none. */
  std::optional<T> fixed(const std::string& key, const std::string& path)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = memo_.find(key);
    if (it == memo_.end())
      return std::nullopt;
    InputDigest::record(path, it->second.first);
    return it->second.second;
  }

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
