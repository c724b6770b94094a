/* dbosim — the raw-results file of a calibration run: JSON lines, one Measurement per line.
 * Crash-safe: each record is appended with write + fsync; on open, a torn last line (a run killed while writing)
 * is dropped and the clean file is put back with temp + rename, so a resumed run starts from whole records. */
#pragma once
#include "calibrate/Measurement.hpp"

#include <set>
#include <string>
#include <vector>

namespace dbosim::calib {

class ResultsStore {
public:
  /** @brief Opens (or creates) the file; loads the records already there. Throws std::runtime_error on a corrupt
   *  record that is not the torn last line. */
  explicit ResultsStore(std::string path);
  ~ResultsStore();
  ResultsStore(const ResultsStore&)            = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  bool has(const std::string& key) const { return keys_.count(key) != 0; }
  /** @brief Appends one record and makes it durable (fsync) before returning. A key already present is an error. */
  void append(const Measurement& m);
  const std::vector<Measurement>& records() const { return records_; }
  /** @brief Lines dropped on open (a torn last line); 0 on a clean file. */
  int dropped_lines() const { return dropped_; }
  const std::string& path() const { return path_; }

  /** @brief Reads a raw-results file without opening it for writing (fitting, tests). Same torn-line rule. */
  static std::vector<Measurement> read_file(const std::string& path, int* dropped = nullptr);

private:
  std::string path_;
  int fd_      = -1;
  int dropped_ = 0;
  std::vector<Measurement> records_;
  std::set<std::string> keys_;
};

/** @brief Writes `text` to `path` atomically: a temp file beside it, fsync, rename over the target. */
void write_file_atomically(const std::string& path, const std::string& text);

} // namespace dbosim::calib
