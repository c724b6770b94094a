/* dbosim — JSON text written as it is produced, for outputs too large to hold as a DOM (a 1,024-rank trace is a
 * quarter of a gigabyte as text and ten times that as nlohmann::json). Formats exactly as nlohmann::json::dump()
 * (compact): numbers in its shortest round-trip form, strings escaped as it escapes them; keys are written in the
 * order given, so a caller that gives them sorted writes what dump() of a std::map-backed json writes. */
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace dbosim::sim {

class JsonStream {
public:
  /** @brief Writes to `out`, buffered in chunks; flush() (or finish()) hands the rest over. */
  explicit JsonStream(std::ostream& out);

  JsonStream& begin_object();
  JsonStream& end_object();
  JsonStream& begin_array();
  JsonStream& end_array();
  /** @brief The next member's key (inside an object); its value follows. */
  JsonStream& key(std::string_view k);
  JsonStream& value(double x); ///< as dump(): "12.0", "0.001", null when not finite
  JsonStream& value(std::int64_t x);
  JsonStream& value(int x) { return value(static_cast<std::int64_t>(x)); }
  JsonStream& value(bool b);
  JsonStream& value(std::string_view s);
  JsonStream& value(const char* s) { return value(std::string_view(s)); }
  /** @brief JSON text already formatted (one whole value), written as is. */
  JsonStream& raw(std::string_view json_text);
  /** @brief Appends a newline and hands everything buffered to the stream. */
  void finish();
  void flush();

private:
  void separate(); ///< the comma before a member or element that is not its container's first
  void put(std::string_view s);
  void put_string(std::string_view s); ///< quoted and escaped
  std::ostream& out_;
  std::string buf_;
  std::vector<bool> first_; ///< per open container: nothing written in it yet
  bool after_key_ = false;
};

/** @brief `x` as nlohmann::json::dump() writes a double. */
std::string json_number_text(double x);

} // namespace dbosim::sim
