// bernoulli_ and multinomial on CPU: draws decided by uniform numbers from
// the Philox stream (core/random_fill.h), one per element of a fixed index
// space, so the draws depend on (seed, offset) only, never on threads or layout.
//
//   bernoulli_    element i (row-major) is 1 when uniform i < p[i].
//   multinomial   with replacement: sample s of row r takes uniform
//                 r * num_samples + s, scaled by the row's total weight, and
//                 picks the first category whose running sum exceeds it.
//                 Without replacement: category j of row r takes uniform
//                 r * categories + j and gets the key w_j / E_j, E_j = -log(1 - u)
//                 an exponential draw; the num_samples largest keys are the
//                 sample, in decreasing key order (drawing one category at a
//                 time in proportion to the weights left gives the same law).
// The public functions (core/ops_random.cpp) reserve
// blocks_needed_uniform<double>(count) blocks for `count` uniforms.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/random_fill.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {
namespace {

constexpr int64_t kGrain = 1 << 14;

// `count` uniform numbers in [0, 1) from (seed, offset).
std::vector<double> uniforms(int64_t count, int64_t seed, int64_t offset) {
  std::vector<double> u(static_cast<size_t>(count));
  cpu::fill_uniform(u.data(), count, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), 0.0, 1.0);
  return u;
}

// A floating tensor's values as contiguous doubles.
std::vector<double> as_doubles(const Tensor& t) {
  const Tensor d = t.to(DType::Float64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

Tensor bernoulli__cpu(const Tensor& self, const Tensor& p, int64_t seed, int64_t offset) {
  EMBER_CHECK(is_floating_point(p.dtype()), "bernoulli_: expected a floating-point probability p, got ", p.dtype());
  const DimVector shape = broadcast_shapes(self.sizes(), p.sizes(), "bernoulli_");
  EMBER_CHECK(IntArrayRef(shape) == self.sizes(), "bernoulli_: p of shape ", p.sizes(),
              " does not broadcast to self's shape ", self.sizes());
  const std::vector<double> prob = as_doubles(p.expand(self.sizes()));
  for (double q : prob) {
    EMBER_CHECK(q >= 0 && q <= 1, "bernoulli_: expected every p in [0, 1], got ", q);
  }
  const int64_t n = self.numel();
  const std::vector<double> u = uniforms(n, seed, offset);
  Tensor draws = self.is_contiguous() ? self : make_empty(self.sizes(), self.dtype(), Device::cpu());
  dispatch_dtype(self.dtype(), "bernoulli_", [&]<class T>() {
    T* out = draws.data_ptr<T>();
    parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = T(u[i] < prob[i] ? 1.0f : 0.0f);
    });
  });
  if (!draws.is_same(self)) op::copy_.call(self, draws, false);
  bump_version(self);
  return self;
}

// The weights of each row: finite, non-negative, with a positive sum.
void check_weights(const std::vector<double>& w, int64_t rows, int64_t categories) {
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t j = 0; j < categories; ++j) {
      const double x = w[r * categories + j];
      EMBER_CHECK(std::isfinite(x) && x >= 0, "multinomial: probabilities must be finite and non-negative, got ", x,
                  " in row ", r);
      total += x;
    }
    EMBER_CHECK(total > 0, "multinomial: the probabilities of row ", r, " sum to 0");
  }
}

void sample_with_replacement(const double* w, int64_t categories, const double* u, int64_t num_samples,
                             int64_t* out) {
  std::vector<double> running(static_cast<size_t>(categories));
  std::partial_sum(w, w + categories, running.begin());
  const double total = running.back();
  // The last category of positive weight: where a draw rounding up to `total` lands.
  int64_t last = categories - 1;
  while (w[last] == 0) --last;
  for (int64_t s = 0; s < num_samples; ++s) {
    const double target = u[s] * total;
    const int64_t j = std::upper_bound(running.begin(), running.end(), target) - running.begin();
    out[s] = std::min(j, last);
  }
}

void sample_without_replacement(const double* w, int64_t categories, const double* u, int64_t num_samples,
                                int64_t* out) {
  std::vector<double> key(static_cast<size_t>(categories));
  for (int64_t j = 0; j < categories; ++j) {
    const double e = -std::log1p(-u[j]);  // exponential, in [0, inf)
    key[j] = w[j] == 0 ? 0.0 : (e == 0 ? INFINITY : w[j] / e);
  }
  std::vector<int64_t> order(static_cast<size_t>(categories));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + num_samples, order.end(),
                    [&](int64_t a, int64_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); });
  std::copy(order.begin(), order.begin() + num_samples, out);
}

// probs (k) or (rows, k) -> int64 (num_samples) or (rows, num_samples).
Tensor multinomial_cpu(const Tensor& probs, int64_t num_samples, bool replacement, int64_t seed, int64_t offset) {
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "multinomial: expected probabilities of 1 or 2 dims, got shape ",
              probs.sizes());
  EMBER_CHECK(num_samples > 0, "multinomial: num_samples must be positive, got ", num_samples);
  const int64_t rows = probs.dim() == 2 ? probs.size(0) : 1, categories = probs.size(-1);
  EMBER_CHECK(replacement || num_samples <= categories, "multinomial: cannot draw ", num_samples,
              " samples without replacement from ", categories, " categories");
  DimVector shape(probs.sizes());
  shape.back() = num_samples;
  Tensor out = make_empty(shape, DType::Int64, Device::cpu());
  if (rows == 0) return out;
  EMBER_CHECK(categories > 0, "multinomial: the probabilities have no categories (shape ", probs.sizes(), ")");
  const std::vector<double> w = as_doubles(probs);
  check_weights(w, rows, categories);
  const int64_t per_row = replacement ? num_samples : categories;
  const std::vector<double> u = uniforms(rows * per_row, seed, offset);
  int64_t* o = out.data_ptr<int64_t>();
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max(per_row, categories));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const double* wr = w.data() + r * categories;
      const double* ur = u.data() + r * per_row;
      if (replacement) sample_with_replacement(wr, categories, ur, num_samples, o + r * num_samples);
      else sample_without_replacement(wr, categories, ur, num_samples, o + r * num_samples);
    }
  });
  return out;
}

}  // namespace

void register_cpu_sampling_kernels() {
  op::bernoulli_.impl(DispatchKey::CPU, kAllDTypes, &bernoulli__cpu, "cpu::bernoulli_");
  op::multinomial.impl(DispatchKey::CPU, kFloatingDTypes, &multinomial_cpu, "cpu::multinomial");
}

}  // namespace ember
