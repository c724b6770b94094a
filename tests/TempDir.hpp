/* dbosim tests — a temporary folder for files a test writes, removed at the end of the test. */
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace dbosim::test {

class TempDir {
public:
  TempDir()
  {
    std::string pattern = (std::filesystem::temp_directory_path() / "dbosim-test-XXXXXX").string();
    path_               = ::mkdtemp(pattern.data());
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&)            = delete;
  TempDir& operator=(const TempDir&) = delete;

  /** @brief Writes `content` to `name` inside the folder; returns its path. */
  std::string write(const std::string& name, const std::string& content) const
  {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

} // namespace dbosim::test
