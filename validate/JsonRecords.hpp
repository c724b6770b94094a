/* dbosim validate — the JSON objects of a result file a Python benchmark writes: the whole file, or one per line
 * (JSON lines, as a run appended to the file), each parsed with a key given twice in one object refused
 * (base/StrictJson) and every error and every top-level key located as file:line:col. Python's json module writes
 * float('nan') and float('inf') as the bare words NaN, Infinity and -Infinity, which are not JSON: they are read as
 * the strings "NaN", "Infinity" and "-Infinity", for the reader of the fields to reject or interpret. */
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief Where something sits in a file (1-based; 0: not in the file). */
struct FieldAt {
  int line = 0, col = 0;
};

/** @brief One JSON object of the file. */
struct JsonRecord {
  nlohmann::json value;                ///< an object
  int line = 0;                        ///< the physical line it starts on
  std::map<std::string, FieldAt> keys; ///< where each top-level key is written (its first occurrence)
};

/** @brief The objects of `text`, the file `path`: the whole text, or one per non-blank line when every such line (two
 *  or more) starts an object. @throws InputError (`valid` says what the file should hold) on a blank file, text that
 *  is not JSON (where the error is), a key given twice in one object (where it is given again), a record that is not
 *  an object. */
std::vector<JsonRecord> parse_json_records(const std::string& path, const std::string& text, const std::string& valid);

} // namespace dbosim::validate
