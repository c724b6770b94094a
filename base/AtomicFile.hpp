/* dbosim — output files are written to a temporary sibling and renamed, so a killed run never leaves a
 * half-written summary or trace that looks complete. */
#pragma once
#include <functional>
#include <iosfwd>
#include <string>

namespace dbosim {

/** @brief Writes `content` to `path` atomically (temp file in the same folder, flush, rename). Creates parents.
 *  @throws InputError naming the path on failure (exit 2: the output place, not dbosim, is at fault), with the temp
 *  file removed. */
void write_file_atomic(const std::string& path, const std::string& content);

/** @brief The same for content streamed by `write` (a file too large to build in memory first). An exception `write`
 *  throws removes the temp file and propagates. */
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);

} // namespace dbosim
