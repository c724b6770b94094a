#include "base/JsonStream.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <ostream>

namespace dbosim::sim {
namespace {

constexpr std::size_t chunk_bytes = 1 << 20; // handed to the stream in pieces of about this size

/** The characters of `x` as dump() writes them: nlohmann's own Grisu2 (not the shortest form in every case, so no
 *  other formatter gives the same bytes); tests/sim_json_stream_test.cpp holds the two together. */
std::size_t number_chars(double x, std::array<char, 64>& buf)
{
  if (!std::isfinite(x)) {
    buf = {'n', 'u', 'l', 'l'};
    return 4;
  }
  const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), x);
  return static_cast<std::size_t>(end - buf.data());
}

} // namespace

std::string json_number_text(double x)
{
  std::array<char, 64> buf{};
  return std::string(buf.data(), number_chars(x, buf));
}

JsonStream::JsonStream(std::ostream& out) : out_(out) { buf_.reserve(chunk_bytes + 4096); }

void JsonStream::put(std::string_view s)
{
  buf_.append(s.data(), s.size());
  if (buf_.size() >= chunk_bytes)
    flush();
}

void JsonStream::flush()
{
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

void JsonStream::finish()
{
  buf_ += '\n';
  flush();
  out_.flush();
}

void JsonStream::separate()
{
  if (after_key_) { // the value of a member: its key wrote the separator
    after_key_ = false;
    return;
  }
  if (first_.empty())
    return;
  if (!first_.back())
    buf_ += ',';
  first_.back() = false;
}

JsonStream& JsonStream::begin_object()
{
  separate();
  buf_ += '{';
  first_.push_back(true);
  return *this;
}

JsonStream& JsonStream::end_object()
{
  first_.pop_back();
  put("}");
  return *this;
}

JsonStream& JsonStream::begin_array()
{
  separate();
  buf_ += '[';
  first_.push_back(true);
  return *this;
}

JsonStream& JsonStream::end_array()
{
  first_.pop_back();
  put("]");
  return *this;
}

JsonStream& JsonStream::key(std::string_view k)
{
  separate();
  put_string(k);
  buf_ += ':';
  after_key_ = true;
  return *this;
}

JsonStream& JsonStream::value(double x)
{
  separate();
  std::array<char, 64> buf{};
  buf_.append(buf.data(), number_chars(x, buf));
  return *this;
}

JsonStream& JsonStream::value(std::int64_t x)
{
  separate();
  buf_ += std::to_string(x);
  return *this;
}

JsonStream& JsonStream::value(bool b)
{
  separate();
  buf_ += b ? "true" : "false";
  return *this;
}

JsonStream& JsonStream::value(std::string_view s)
{
  separate();
  put_string(s);
  return *this;
}

void JsonStream::put_string(std::string_view s)
{
  buf_ += '"';
  for (const char ch : s) { // dump()'s escapes (UTF-8 passes through: ensure_ascii is off)
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
    case '"':
      buf_ += "\\\"";
      break;
    case '\\':
      buf_ += "\\\\";
      break;
    case '\b':
      buf_ += "\\b";
      break;
    case '\f':
      buf_ += "\\f";
      break;
    case '\n':
      buf_ += "\\n";
      break;
    case '\r':
      buf_ += "\\r";
      break;
    case '\t':
      buf_ += "\\t";
      break;
    default:
      if (c < 0x20) {
        static constexpr char hex[] = "0123456789abcdef";
        buf_ += "\\u00";
        buf_ += hex[c >> 4];
        buf_ += hex[c & 0xF];
      } else {
        buf_ += ch;
      }
    }
  }
  buf_ += '"';
}

JsonStream& JsonStream::raw(std::string_view json_text)
{
  separate();
  put(json_text);
  return *this;
}

} // namespace dbosim::sim
