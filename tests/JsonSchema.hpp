/* dbosim tests — a validator for the subset of JSON Schema (draft 2020-12) that docs/summary.schema.json uses: type,
 * properties, required, additionalProperties, items, minItems, enum, minimum, maximum, $ref to "#/$defs/NAME", and
 * the annotations $schema, $id, $comment, title, description, $defs. A schema keyword outside this subset is itself
 * reported, so that a schema never claims a check that is not made. */
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::test {

/** @brief Where `doc` breaks `schema` (or, given `def`, the schema's $defs/`def`), one line each ("/path: what");
 *  empty when it conforms. */
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& doc,
                                           const std::string& def = "");

} // namespace dbosim::test
