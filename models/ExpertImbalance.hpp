/* dbosim — the expert load left unequal across EP ranks after EPLB, as a published measurement gives it, and what
 * it makes the busiest rank carry. Pure functions: no SimGrid, no I/O.
 *
 * Source: NVIDIA TensorRT-LLM tech blog "Scaling Expert Parallelism in TensorRT-LLM (Part 1: Design and
 * Implementation of Large-scale EP)", docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md
 * (NVIDIA/TensorRT-LLM @1d263f15a979ef2902c60de3f6238bcc0952bb29), Table 1: DeepSeek-R1 on GB200, a machine
 * translation dataset, routed token copies each EP rank receives per MoE layer and decode iteration (average of the
 * per-layer, per-iteration statistics):
 *
 *   | deployment                       | mean | std by rank | (max - mean) / mean by rank |
 *   | no EPLB, EP32, 8 slots per rank  | 1024 | 491.6       | 1.564                       |
 *   | EPLB,    EP32, 9 slots per rank  | 1024 |  52.0       | 0.109                       |
 *   | EPLB,    EP36, 8 slots per rank  | 1024 |  53.9       | 0.115                       |
 *
 * It is a standard deviation and a max/mean ratio, not a per-expert histogram, so it is modelled as one: the load of
 * each of the `ep` ranks is normal around the mean with a relative variance that has two parts,
 *   sigma^2(c) = sigma_sys^2 + (1 - 1/ep) / c,
 * the routing noise of c copies per rank (multinomial over ep ranks) and a systematic residual that EPLB's placement
 * leaves (expert popularity it did not even out). sigma_sys comes from the EP32 EPLB row: its relative std
 * 52.0 / 1024 minus the routing noise of its own 1024 copies. The step waits for the busiest rank, whose expected
 * load over the mean is the expected maximum of ep such normals: 1 + sigma(c) * E[max of ep standard normals].
 * At the row's own batch this gives 1.105 (published 1.109) and, with the same sigma_sys, 1.107 at EP36 (published
 * 1.115). Assumed: sigma_sys does not depend on EP or on the dataset (one measurement); ranks independent.
 *
 * Without EPLB (contiguous placement, vLLM's default) the same table's no-EPLB row is used, but through its max/mean
 * rather than its std: the load over ranks is then skewed (a few popular experts make one rank hot), so a normal with
 * the row's std (491.6 / 1024) gives a busiest rank of 1.99x the mean where the row measured 2.564x. The step waits
 * for the busiest rank, so sigma_sys is taken from the max: sigma(c) = 1.564 / E[max of 32 normals] at the row's own
 * 1024 copies, less the routing noise. One row, so no cross-check; for the EPLB rows the two routes agree (1.105 by
 * the std, 1.109 published). A rank holding more experts than the row's 8 averages over more of them: the
 * systematic part shrinks as 1/sqrt(slots per rank) (independent expert popularity, assumed). */
#pragma once
#include <string>

namespace dbosim::models {

/** @brief How routed tokens spread over the EP ranks in a step's cost. */
enum class ExpertLoadModel {
  ideal,         ///< balanced (expected-value) routing: every rank receives the mean
  eplb_residual, ///< the busiest rank carries the post-EPLB residual imbalance (ExpertImbalance.hpp)
  no_eplb,       ///< the busiest rank carries the imbalance measured without EPLB (contiguous placement)
};
std::string expert_load_model_name(ExpertLoadModel m);

/** @brief One row of the published table (routed token copies received per rank, per MoE layer and iteration). */
struct ExpertLoadFigure {
  int ep                      = 0;
  int slots_per_rank          = 0;
  double mean_copies_per_rank = 0;
  double std_copies_per_rank  = 0;
  double imbalance_ratio      = 0; ///< (max - mean) / mean over the ranks
};

/** @brief TensorRT-LLM blog 4, Table 1, "EPLB (9 per-rank slots and EP 32)": the figure the model rests on. */
inline constexpr ExpertLoadFigure trtllm_r1_eplb_ep32{32, 9, 1024.0, 52.0, 0.109};
/** @brief Same table, "EPLB (8 per-rank slots and EP 36)": the cross-check. */
inline constexpr ExpertLoadFigure trtllm_r1_eplb_ep36{36, 8, 1024.0, 53.9, 0.115};
/** @brief Same table, "No EPLB (8 per-rank slots and EP 32)": what EPLB removed. */
inline constexpr ExpertLoadFigure trtllm_r1_no_eplb_ep32{32, 8, 1024.0, 491.6, 1.564};

/** @brief Where the figures come from, for summaries and notes. */
inline constexpr const char* expert_load_source =
    "NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md "
    "@1d263f15, Table 1 (DeepSeek-R1, GB200, EPLB EP32: std 52.0 of mean 1024 copies per rank, max/mean 1.109)";
/** @brief The no-EPLB row's source. */
inline constexpr const char* no_eplb_load_source =
    "NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md "
    "@1d263f15, Table 1 (DeepSeek-R1, GB200, no EPLB EP32: mean 1024 copies per rank, max/mean 2.564)";
/** @brief The source behind `m`, or what `ideal` means. */
std::string expert_load_source_of(ExpertLoadModel m);

/** @brief E[max of n independent standard normals] (0 for n = 1), by numerical integration. */
double expected_max_std_normal(int n);

/** @brief The relative std of a rank's load that routing noise does not explain in `f`:
 *  sqrt((std/mean)^2 - (1 - 1/ep)/mean), 0 when the noise explains it all. */
double systematic_rel_std(const ExpertLoadFigure& f);

/** @brief The relative std of a rank's load that routing noise does not explain, from the row's max/mean:
 *  the std whose expected maximum over the row's ep ranks is its imbalance ratio, less the routing noise. */
double systematic_rel_std_from_max(const ExpertLoadFigure& f);

/** @brief The busiest of `ep` ranks' load over the mean when each receives `copies_per_rank` routed copies on
 *  average and holds `slots_per_rank` expert slots: 1 under ideal routing, for ep <= 1 or no copies; else
 *  1 + sigma(c) E[max of ep normals], at most ep. Without EPLB the systematic part is the sum of the rank's experts'
 *  popularity: taken as independent over experts, its relative std scales as sqrt(row's slots / slots_per_rank) from
 *  the no-EPLB row's 8 slots per rank (an assumption: the source has one EP size). The EPLB residual does not
 *  depend on the slots (the EP32 and EP36 rows, 9 and 8 slots, agree). */
double hot_rank_load(ExpertLoadModel m, int ep, double copies_per_rank, double slots_per_rank);

} // namespace dbosim::models
