/* dbosim — compute ops' costs kept across the shapes of one deployment where most of their kernels repeat: the
 * kernels that read a step's context (KV cache, a prompt's) re-timed at each shape, the others kept (for the serving
 * oracle's per-rank work, which prices every DP rank's exact shape of every step). */
#pragma once
#include "models/CommSetup.hpp"
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dbosim::models {

/** @brief One kernel's figures as its op sums them (OpCost's duration_us, flops, bytes, weight_bytes, bound). */
struct KernelSums {
  double us           = 0;
  double flops        = 0;
  double bytes        = 0;
  double weight_bytes = 0;
  Bound bound         = Bound::memory;
};

/** @brief Kernels with their figures at one shape (kernel_time's, as their op sums them). */
struct TimedKernels {
  std::vector<KernelWork> kernels;
  std::vector<KernelSums> sums; ///< one per kernel, in order
};

/** @brief `kernels` timed on `hw`. */
TimedKernels time_kernels(const HwProfile& hw, std::vector<KernelWork> kernels);

/** @brief Appends to `out` where each of `context`'s kernels sits in `kernels` (found by name), plus `first`.
 *  @throws InternalError naming `what` when one is not named exactly once there. */
void add_context_positions(const std::vector<KernelWork>& context, const std::vector<KernelWork>& kernels,
                           std::size_t first, const std::string& what, std::vector<std::size_t>& out);

/** @brief A compute op's cost kept by a key of what its kernels read, but for its context kernels (those that read
 *  the KV cache or a prompt's context, which a key of every step's shape would make distinct at nearly every step):
 *  these are timed at each call, every other kernel's time is kept from the key's first costing, and each sum is taken
 *  in launch order as sum_kernels takes it, so duration, flops, bytes, bound and launches are sum_kernels' bit for
 *  bit. Without the op's parts or explanation: for a plan with no SM partition (the parts are the SM-scaling model's
 *  input, duration_on_sms_us). One memo per op, model, profile, parallelism and comm setup. */
class ContextOpMemo {
public:
  /** `key`: what the op's kernels but `context` read (shapes with one key have the same kernels but those);
   *  `context`: those kernels at this shape, each named once in the op's list; `kernels`: the op's whole list at
   *  this shape (called on a new key).
   *  @throws InternalError when a context kernel is not named once in the list or a key's context kernels change. */
  OpCost cost(const HwProfile& hw, OpKind kind, const std::string& sm_family, const std::pair<StepShape, bool>& key,
              const std::vector<KernelWork>& context, const std::function<std::vector<KernelWork>()>& kernels);
  /** @brief The same with the context kernels already timed (time_kernels). */
  OpCost cost_timed(const HwProfile& hw, OpKind kind, const std::string& sm_family,
                    const std::pair<StepShape, bool>& key, const TimedKernels& context,
                    const std::function<std::vector<KernelWork>()>& kernels);

  /** @brief Keys costed so far. */
  std::size_t size() const { return entries_.size(); }

private:
  struct Entry {
    std::vector<KernelSums> kernels;  ///< each kernel's figures at the key's first shape, in launch order
    std::vector<std::size_t> context; ///< where the context kernels sit in the list, in their order
    OpCost launches;                  ///< kind, SM family and launches (the same at every shape of the key)
  };
  std::map<std::pair<StepShape, bool>, Entry> entries_;
};

/** @brief A0 and A1 of one deployment's shapes through ContextOpMemo: attention_a0_kernels' and attention_a1_cost's
 *  numbers, bit for bit, without their parts (a plan with no SM partition). */
class AttentionMemo {
public:
  OpCost a0(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape);
  /** @throws std::invalid_argument as attention_a1_cost throws. */
  OpCost a1(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
            bool moe_layer, const CommSetup& comm);

  /** @brief Keys costed so far: A0's, A1's. */
  std::pair<std::size_t, std::size_t> keys() const { return {a0_.size(), a1_.size()}; }

private:
  /** The context kernels of the shape last asked, timed: a plan asks each micro-batch shape's ops for its dense and
   *  then its MoE layers, whose context kernels are the same. */
  struct LastContext {
    bool set = false;
    StepShape shape;
    TimedKernels context;
  };
  const TimedKernels& context_at(LastContext& last, const HwProfile& hw, const StepShape& shape,
                                 const std::function<std::vector<KernelWork>()>& context);
  ContextOpMemo a0_, a1_;
  LastContext a0_last_, a1_last_;
};

} // namespace dbosim::models
