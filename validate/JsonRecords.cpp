#include "validate/JsonRecords.hpp"

#include "base/InputError.hpp"
#include "base/StrictJson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace dbosim::validate {

namespace {

using json = nlohmann::json;

/** One JSON object of the file, as written: the whole file, or one line of a JSON-lines file. */
struct Record {
  std::string text;
  std::size_t offset = 0; ///< of `text` in the file
  int line           = 0; ///< the physical line it starts on
};

/** A record made standard JSON, and where its keys are. Python's json module writes float('nan') and float('inf') as
 *  the bare words NaN and Infinity, which are not JSON: they become the strings "NaN" and "Infinity", which the field
 *  checks then reject or read (an unbounded request rate). */
struct Scanned {
  std::string json;
  std::vector<std::size_t> quoted;           ///< offsets in `json` of each word quoted (2 bytes added each)
  std::map<std::string, std::size_t> keys;   ///< offset in the record of each top-level key, first seen
  std::map<std::string, std::size_t> repeat; ///< offset of a key's first repetition within one object
};

bool blank(const std::string& s)
{
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

Scanned scan(const std::string& t)
{
  struct Open {
    bool object = false;
    std::set<std::string> keys;
  };
  Scanned s;
  std::vector<Open> open;
  std::size_t i  = 0;
  auto bare_word = [&]() {
    for (const std::string word : {"NaN", "Infinity", "-Infinity"})
      if (t.compare(i, word.size(), word) == 0) {
        s.quoted.push_back(s.json.size());
        s.json += '"' + word + '"';
        i += word.size();
        return true;
      }
    return false;
  };
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      std::size_t j = i + 1;
      while (j < t.size() && t[j] != '"')
        j += t[j] == '\\' ? 2 : 1;
      const std::size_t end = std::min(j + 1, t.size());
      std::size_t k         = end;
      while (k < t.size() && std::isspace(static_cast<unsigned char>(t[k])) != 0)
        ++k;
      if (!open.empty() && open.back().object && k < t.size() && t[k] == ':') { // a key
        const std::string key = t.substr(i + 1, std::min(j, t.size()) - i - 1);
        if (!open.back().keys.insert(key).second)
          s.repeat.emplace(key, i);
        if (open.size() == 1)
          s.keys.emplace(key, i);
      }
      s.json.append(t, i, end - i);
      i = end;
      continue;
    }
    if (bare_word())
      continue;
    if (c == '{' || c == '[')
      open.push_back({c == '{', {}});
    else if ((c == '}' || c == ']') && !open.empty())
      open.pop_back();
    s.json += c;
    ++i;
  }
  return s;
}

/** 1-based line and column (bytes) of `offset` in `text`. */
FieldAt line_col(const std::string& text, std::size_t offset)
{
  offset                = std::min(offset, text.size());
  const auto lines      = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
  const std::size_t bol = offset == 0 ? 0 : text.rfind('\n', offset - 1);
  const std::size_t col = bol == std::string::npos ? offset + 1 : offset - bol;
  return {static_cast<int>(lines) + 1, static_cast<int>(col)};
}

/** The file split into its records: one document, or one per non-blank line when every such line (two or more) is
 *  an object of its own (vLLM's --append-result, SGLang's appended runs). */
std::vector<Record> records(const std::string& text)
{
  std::vector<Record> lines;
  std::size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    std::size_t nl         = text.find('\n', pos);
    const std::size_t next = nl == std::string::npos ? text.size() : nl + 1;
    std::string one        = text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
    if (!blank(one))
      lines.push_back({std::move(one), pos, line});
    pos = next;
  }
  const bool json_lines = lines.size() >= 2 && std::all_of(lines.begin(), lines.end(), [](const Record& r) {
                            const std::size_t first = r.text.find_first_not_of(" \t\r");
                            return r.text[first] == '{';
                          });
  if (json_lines)
    return lines;
  return {{text, 0, lines.front().line}};
}

JsonRecord parse_record(const std::string& file, const std::string& text, const Record& r, const std::string& valid)
{
  struct {
    json j;
    Scanned scanned;
  } p;
  p.scanned = scan(r.text);
  std::string duplicate;
  try {
    p.j = parse_json_unique_keys(p.scanned.json, duplicate);
  } catch (const json::parse_error& e) {
    // e.byte counts the bytes read of the quoted text: back to the file's offset
    std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    at -= 2 * static_cast<std::size_t>(std::count_if(p.scanned.quoted.begin(), p.scanned.quoted.end(),
                                                     [&](std::size_t q) { return q < at; }));
    const FieldAt where     = line_col(text, r.offset + at);
    const std::string what  = e.what();
    const std::size_t colon = what.find(": ", what.find("column"));
    throw InputError(file, where.line, where.col, "",
                     "not valid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)), valid);
  } catch (const json::exception& e) { // out_of_range: a number past double, such as 1e999
    throw InputError(file, r.line, 1, "", std::string("not valid JSON: ") + e.what(), valid);
  }
  if (!duplicate.empty()) {
    const auto it      = p.scanned.repeat.find(duplicate);
    const FieldAt here = it == p.scanned.repeat.end() ? FieldAt{r.line, 1} : line_col(text, r.offset + it->second);
    throw InputError(file, here.line, here.col, duplicate, "duplicate key (JSON keeps one value per key)",
                     "each key once per object");
  }
  if (!p.j.is_object())
    throw InputError(file, r.line, 1, "", fmt::format("expected a JSON object, got {}", p.j.type_name()), valid);
  JsonRecord out;
  out.value = std::move(p.j);
  out.line  = r.line;
  for (const auto& [key, offset] : p.scanned.keys)
    out.keys.emplace(key, line_col(text, r.offset + offset));
  return out;
}

} // namespace

std::vector<JsonRecord> parse_json_records(const std::string& path, const std::string& text, const std::string& valid)
{
  if (blank(text))
    throw InputError(path, 0, 0, "", "empty file: no JSON object", valid);
  std::vector<JsonRecord> out;
  for (const Record& r : records(text))
    out.push_back(parse_record(path, text, r, valid));
  return out;
}

} // namespace dbosim::validate
