/* dbosim — the one rule for an output folder (`--out` of every verb), checked before any work: a non-empty path that
 * is, or can be made, a folder this process can write a file in. A problem is an InputError (exit 2) naming the
 * path, before anything is simulated or written. */
#pragma once
#include <string>

namespace dbosim {

/** @brief Creates `dir` (and parents) if needed and proves a file can be written in it (a probe file, removed).
 *  @throws InputError when `dir` is empty, names a file, cannot be created, or cannot be written in (read-only,
 *  immutable, full). `flag` names the option in the message (e.g. "--out"). */
void prepare_out_dir(const std::string& dir, const std::string& flag = "--out");

} // namespace dbosim
