// bernoulli and multinomial as the user calls them: the generator reserves
// the Philox blocks the draws use (one double uniform each, see
// kernels/cpu/random/sampling.cpp), then the dispatched op draws from
// (seed, first block).
#include <algorithm>
#include <utility>

#include "core/memory_overlap.h"
#include "core/op_decls.h"
#include "core/random_fill.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {
namespace {

// (seed, offset) of `uniforms` fresh uniform numbers from g, or from the default generator.
std::pair<int64_t, int64_t> reserve_uniforms(Generator* g, int64_t uniforms) {
  Generator& gen = g ? *g : default_generator();
  const uint64_t offset = gen.reserve(cpu::blocks_needed_uniform<double>(uniforms));
  return {static_cast<int64_t>(gen.seed()), static_cast<int64_t>(offset)};
}

}  // namespace

Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* g) {
  assert_no_internal_overlap(t, "bernoulli_");
  const auto [seed, offset] = reserve_uniforms(g, t.numel());
  op::bernoulli_.call(t, p, seed, offset);
  return t;
}

Tensor& bernoulli_(Tensor& t, double p, Generator* g) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_: expected p in [0, 1], got ", p);
  return bernoulli_(t, wrap_scalar(Scalar(p)), g);
}

Tensor bernoulli(const Tensor& p, Generator* g) {
  EMBER_CHECK(p.is_floating_point(), "bernoulli: expected floating-point probabilities, got ", p.dtype());
  Tensor out = empty_like(p);
  return bernoulli_(out, p, g);
}

Tensor bernoulli(const Tensor& t, double p, Generator* g) {
  Tensor out = empty_like(t);
  return bernoulli_(out, p, g);
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* g) {
  const int64_t rows = probs.dim() == 2 ? probs.size(0) : 1;
  const int64_t per_row = replacement ? num_samples : (probs.dim() > 0 ? probs.size(-1) : 0);
  const auto [seed, offset] = reserve_uniforms(g, rows * std::max<int64_t>(per_row, 0));
  return op::multinomial.call(probs, num_samples, replacement, seed, offset);
}

Tensor Tensor::bernoulli(Generator* g) const { return ember::bernoulli(*this, g); }
Tensor Tensor::bernoulli(double p, Generator* g) const { return ember::bernoulli(*this, p, g); }
Tensor& Tensor::bernoulli_(double p, Generator* g) { return ember::bernoulli_(*this, p, g); }
Tensor& Tensor::bernoulli_(const Tensor& p, Generator* g) { return ember::bernoulli_(*this, p, g); }
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* g) const {
  return ember::multinomial(*this, num_samples, replacement, g);
}

}  // namespace ember
