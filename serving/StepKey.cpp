#include "serving/StepKey.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dbosim::serving {

std::string StepKey::to_string() const
{
  const std::string decodes = decode_batch > 0 ? fmt::format(" decode_tokens={} decode_batch={} decode_context={}",
                                                             decode_tokens, decode_batch, decode_context_len)
                                               : std::string();
  return fmt::format("{} tokens={} batch={} context={}{}{}", phase == models::Phase::decode ? "decode" : "prefill",
                     tokens, batch, context_len, decodes, dp_unsplit ? " dp-unsplit" : "");
}

namespace {

/** Point j of octave 2^k on a grid of `per` points per octave: 2^k (1 + j / per), integer. */
long grid_point(int k, int j, int per) { return (1L << k) + ((1L << k) * j) / per; }

/** The smallest grid point >= n (n > 2^k), on the octaves from 2^k up. */
int grid_ceil(int n, int k, int per)
{
  while ((2L << k) < n)
    ++k;
  for (int j = 0; j <= per; ++j)
    if (grid_point(k, j, per) >= n)
      return static_cast<int>(grid_point(k, j, per));
  return static_cast<int>(2L << k);
}

} // namespace

int Buckets::tokens(int n) const
{
  if (n <= 0)
    return 0;
  if (n <= 4) // vLLM capture sizes 1, 2, 4
    return n == 3 ? 4 : n;
  if (n <= 256)
    return (n + 7) / 8 * 8;
  if (n <= 512)
    return (n + 15) / 16 * 16;
  return grid_ceil(n, 9, token_per_octave);
}

int Buckets::batch(int n) const
{
  if (n <= 16)
    return std::max(n, 0);
  return grid_ceil(n, 4, token_per_octave);
}

int Buckets::context(int n) const
{
  if (n <= 16)
    return std::max(n, 0);
  int k = 4;
  while ((2L << k) <= n)
    ++k;
  long best = grid_point(k, 0, context_per_octave);
  for (int j = 0; j <= context_per_octave; ++j) {
    const long g = grid_point(k, j, context_per_octave);
    if (std::labs(g - n) < std::labs(best - n))
      best = g;
  }
  return static_cast<int>(best);
}

void Buckets::bucket_decode_part(const StepKey& e, StepKey& b) const
{
  // The prompt requests (a few chunks) stay exact; the decoding requests take the batch's rounding, their new tokens
  // in proportion (1 + k each), within what the bucket's tokens leave the prompts (one each at least).
  const int prompts    = e.batch - e.decode_batch;
  b.decode_batch       = b.batch - prompts;
  const int per_decode = (e.decode_tokens + e.decode_batch - 1) / e.decode_batch;
  b.decode_tokens      = std::min(b.decode_batch * per_decode, b.tokens - prompts);
  b.decode_context_len =
      std::max(context(e.decode_context_len), (b.decode_tokens + b.decode_batch - 1) / b.decode_batch);
  if (prompts > 0)
    b.context_len = std::max(b.context_len, (b.tokens - b.decode_tokens + prompts - 1) / prompts);
}

StepKey Buckets::bucket(const StepKey& e) const
{
  StepKey b     = e;
  b.tokens      = tokens(e.tokens);
  b.batch       = std::min(b.tokens, batch(e.batch));
  b.context_len = std::max(1, context(e.context_len));
  // A request attends over at least its own new tokens: keep the bucket a shape the cost model accepts.
  if (b.batch > 0 && e.decode_batch == 0)
    b.context_len = std::max(b.context_len, (b.tokens + b.batch - 1) / b.batch);
  if (e.decode_batch > 0)
    bucket_decode_part(e, b);
  return b;
}

} // namespace dbosim::serving
