/* dbosim — deterministic random draws for workloads. std::mt19937_64's bit stream is fixed by the standard, but
 * std::*_distribution are implementation-defined, so every transform from uniform bits is our own: outputs are
 * byte-identical across compilers and machines. */
#pragma once
#include <cstdint>
#include <random>

namespace dbosim::serving {

class DetRng {
public:
  explicit DetRng(std::uint64_t seed) : gen_(seed) {}

  /** @brief Uniform in [0, 1): the top 53 bits of one draw. */
  double uniform01();
  /** @brief Uniform integer in [lo, hi] (inclusive); lo when hi <= lo. */
  long uniform_int(long lo, long hi);
  /** @brief Exponential with mean `mean`. */
  double exponential(double mean);
  /** @brief Standard normal (Box-Muller, the cosine branch only, so each call uses exactly two draws). */
  double normal();
  /** @brief Gamma(shape, scale) (Marsaglia-Tsang; shape < 1 by the u^(1/shape) boost). */
  double gamma(double shape, double scale);

private:
  std::mt19937_64 gen_;
};

} // namespace dbosim::serving
