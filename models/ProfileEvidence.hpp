/* dbosim — what kind of evidence each kernel family of a hardware profile rests on (measured, derived, published or
 * estimated), classified from the profile's own `source` strings; and which estimated families a step's costs used.
 * The rule (hwprofiles/README.md, "Evidence per family"): a source that starts with "estimate" is an estimate; any
 * other source is what the profile's provenance.kind says (measured, derived) or, in a datasheet profile, a published
 * figure (a datasheet, a kernel benchmark, a README table). */
#pragma once
#include "hw/HwProfile.hpp"
#include "hw/NetworkFacts.hpp"

#include <string>
#include <vector>

namespace dbosim::models {

struct LayerCosts;
struct OpCost;

/** Kinds of evidence, weakest last (a family is as weak as its weakest input). */
enum class Evidence { measured, derived, published, estimated };
std::string evidence_name(Evidence e);

/** @brief The evidence of one `source` string in a profile (or network facts) of provenance kind `profile_kind`. */
Evidence classify_source(const std::string& profile_kind, const std::string& source);

/** @brief One kernel family of a profile: its tables (the shapes they cover) and what prices every other shape (the
 *  roofline's efficiency, the launch floors; for a2a and nccl the network facts; for host the host costs). */
struct FamilyEvidence {
  std::string family;               ///< "gemm", "grouped_gemm", "mla_decode", "attention", "memory", "a2a", ...
  int tables = 0;                   ///< tables of this family in the profile
  Evidence tables_evidence{};       ///< the weakest of their sources (when tables > 0)
  Evidence fallback{};              ///< the weakest source of the keys that price shapes without a table
  std::vector<std::string> weakest; ///< the keys (or tables) at that weakest kind, for the message
  bool has_fallback = false;        ///< whether any fallback key is in the profile
};

/** @brief Every family of `hw` (and of `net`, when given: a2a, nccl), in a fixed order. */
std::vector<FamilyEvidence> profile_evidence(const HwProfile& hw, const NetworkFacts* net);

/** @brief One line per family, "family: kind (detail)", for `dbosim hw`. */
std::string format_profile_evidence(const std::vector<FamilyEvidence>& families);

/** @brief The families priced by estimated numbers in `layers` (kernels timed by an estimated table or by the
 *  roofline whose inputs are estimates; D/C over estimated network facts; the host costs when estimated), each with
 *  the keys behind it: "gemm (efficiency.gemm)". `scale_out`: the all-to-all crosses NVLink domains (the NIC facts
 *  count). Empty when none. */
std::vector<std::string> estimated_families_used(const HwProfile& hw, const NetworkFacts* net,
                                                 const std::vector<const LayerCosts*>& layers,
                                                 const std::vector<const OpCost*>& extra_ops, bool scale_out);

} // namespace dbosim::models
