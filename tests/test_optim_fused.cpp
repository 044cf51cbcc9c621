// The fused optimiser kernels (core/op_decls_optim.h) on their own: the same
// bits for any thread count and wherever an element falls in the SIMD
// blocks, agreement with a plain double-precision reference, and the
// checks on their arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "core/op_decls_optim.h"
#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

Tensor random(IntArrayRef sizes, uint64_t seed, DType dtype = kFloat32) {
  Generator g(seed);
  return randn(sizes, dtype, &g);
}

// Positive values, for the second-moment states.
Tensor random_positive(IntArrayRef sizes, uint64_t seed, DType dtype = kFloat32) {
  return random(sizes, seed, dtype).abs() + 0.01;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

TensorList clones(const TensorList& list) {
  TensorList out;
  for (const Tensor& t : list) out.push_back(t.clone());
  return out;
}

// The state of one fused call: params, grads and up to three state lists.
struct FusedCase {
  TensorList params, grads, s1, s2, s3;
  FusedCase clone() const { return {clones(params), clones(grads), clones(s1), clones(s2), clones(s3)}; }
  TensorList all() const {
    TensorList out = params;
    for (const TensorList* l : {&s1, &s2, &s3}) out.insert(out.end(), l->begin(), l->end());
    return out;
  }
};

// Sizes that make several chunks (32768 elements each), a tensor that spans
// a chunk boundary, SIMD tails, and an empty tensor.
FusedCase make_case(const std::vector<int64_t>& numels, DType dtype, uint64_t seed) {
  FusedCase c;
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t n = numels[i];
    const uint64_t s = seed + 10 * i;
    c.params.push_back(random({n}, s, dtype));
    c.grads.push_back(random({n}, s + 1, dtype));
    c.s1.push_back(random({n}, s + 2, dtype));
    c.s2.push_back(random_positive({n}, s + 3, dtype));
    c.s3.push_back(random_positive({n}, s + 4, dtype));
  }
  return c;
}

// Each configuration of each update, as one call on a case.
struct Update {
  const char* name;
  std::function<void(FusedCase&)> run;
};

std::vector<Update> updates() {
  return {
      {"sgd_nesterov_wd",
       [](FusedCase& c) {
         std::vector<int64_t> fresh(c.params.size(), 0);
         fresh[0] = 1;
         op::_fused_sgd_.call(c.params, c.grads, c.s1, fresh, 0.1, 0.9, 0.0, 0.01, true, false);
       }},
      {"sgd_plain_maximize",
       [](FusedCase& c) { op::_fused_sgd_.call(c.params, c.grads, {}, {}, 0.1, 0.0, 0.0, 0.0, false, true); }},
      {"adam_amsgrad_wd",
       [](FusedCase& c) {
         std::vector<int64_t> steps(c.params.size(), 3);
         op::_fused_adam_.call(c.params, c.grads, c.s1, c.s2, c.s3, steps, 1e-2, 0.9, 0.999, 0.01, 1e-8, true, false,
                               false);
       }},
      {"adamw_maximize",
       [](FusedCase& c) {
         std::vector<int64_t> steps(c.params.size(), 1);
         op::_fused_adam_.call(c.params, c.grads, c.s1, c.s2, {}, steps, 1e-2, 0.8, 0.99, 0.1, 1e-8, false, true, true);
       }},
      {"rmsprop_centered_momentum",
       [](FusedCase& c) {
         // s2 (square averages) must exceed s3^2 (grad averages squared): use s2 + s3^2.
         for (size_t i = 0; i < c.s2.size(); ++i) c.s2[i].add_(c.s3[i] * c.s3[i]);
         op::_fused_rmsprop_.call(c.params, c.grads, c.s2, c.s3, c.s1, 1e-2, 0.99, 1e-8, 0.01, 0.9, true, false);
       }},
      {"adagrad_decay",
       [](FusedCase& c) {
         std::vector<int64_t> steps(c.params.size(), 4);
         op::_fused_adagrad_.call(c.params, c.grads, c.s2, steps, 1e-1, 0.1, 0.01, 1e-10, false);
       }},
  };
}

TEST(FusedOptimizerKernels, SameBitsForAnyThreadCount) {
  ThreadCount restore;
  NoGradGuard no_grad;
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Update& u : updates()) {
      SCOPED_TRACE(std::string(u.name) + " " + std::string(dtype_name(dtype)));
      const FusedCase original = make_case({70000, 32768 + 37, 5, 0, 1000}, dtype, 7);
      FusedCase one = original.clone(), two = original.clone();
      set_num_threads(1);
      u.run(one);
      set_num_threads(2);
      u.run(two);
      const TensorList a = one.all(), b = two.all();
      for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], b[i])) << "tensor " << i;
      EXPECT_FALSE(same_bits(one.params[0], original.params[0])) << "the update changed nothing";
    }
  }
}

// An element's result must not depend on whether it falls in a full SIMD
// block or in the masked tail: the same values, shifted by one position,
// must update to the same bits.
TEST(FusedOptimizerKernels, SameBitsInFullBlocksAndTails) {
  NoGradGuard no_grad;
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const Update& u : updates()) {
      SCOPED_TRACE(std::string(u.name) + " " + std::string(dtype_name(dtype)));
      const int64_t n = 53;
      FusedCase shifted = make_case({n + 1}, dtype, 11);
      FusedCase plain;
      const std::pair<TensorList*, TensorList*> lists[] = {{&shifted.params, &plain.params},
                                                           {&shifted.grads, &plain.grads},
                                                           {&shifted.s1, &plain.s1},
                                                           {&shifted.s2, &plain.s2},
                                                           {&shifted.s3, &plain.s3}};
      for (const auto& [from, to] : lists) to->push_back((*from)[0].narrow(0, 1, n).clone());
      u.run(plain);
      u.run(shifted);
      const TensorList a = plain.all(), b = shifted.all();
      for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], b[i].narrow(0, 1, n).contiguous())) << i;
    }
  }
}

// Adam against a plain loop in double over one float64 tensor.
TEST(FusedOptimizerKernels, AdamMatchesAPlainLoop) {
  NoGradGuard no_grad;
  const int64_t n = 1001;
  const double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, wd = 0.01, eps = 1e-8;
  const int64_t step = 3;
  Tensor p = random({n}, 1, kFloat64), g = random({n}, 2, kFloat64), m = random({n}, 3, kFloat64),
         v = random_positive({n}, 4, kFloat64);
  const std::vector<double> p0 = values(p), g0 = values(g), m0 = values(m), v0 = values(v);
  op::_fused_adam_.call({p}, {g}, {m}, {v}, {}, {step}, lr, beta1, beta2, wd, eps, false, false, false);
  const std::vector<double> p1 = values(p), m1 = values(m), v1 = values(v);
  const double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
  for (int64_t i = 0; i < n; ++i) {
    const double grad = g0[i] + wd * p0[i];
    const double mi = beta1 * m0[i] + (1 - beta1) * grad;
    const double vi = beta2 * v0[i] + (1 - beta2) * grad * grad;
    const double pi = p0[i] - lr / bc1 * mi / (std::sqrt(vi) / std::sqrt(bc2) + eps);
    ASSERT_NEAR(m1[i], mi, 1e-15 * (1 + std::abs(mi))) << i;
    ASSERT_NEAR(v1[i], vi, 1e-15 * (1 + std::abs(vi))) << i;
    ASSERT_NEAR(p1[i], pi, 1e-14 * (1 + std::abs(pi))) << i;
  }
}

// SGD with momentum: a fresh buffer takes the direction as is, an old one accumulates.
TEST(FusedOptimizerKernels, SgdFreshAndOldMomentumBuffers) {
  NoGradGuard no_grad;
  Tensor p1 = tensor({1.0, 2.0}), p2 = tensor({1.0, 2.0});
  Tensor g = tensor({0.5, -1.0});
  Tensor b1 = tensor({9.0, 9.0}), b2 = tensor({1.0, 1.0});
  op::_fused_sgd_.call({p1, p2}, {g, g.clone()}, {b1, b2}, {1, 0}, 0.1, 0.9, 0.5, 0.0, false, false);
  EXPECT_EQ(values(b1), (std::vector<double>{0.5, -1.0}));              // fresh: the gradient
  EXPECT_EQ(values(b2), (std::vector<double>{0.9 + 0.25, 0.9 - 0.5}));  // 0.9 b + (1 - 0.5) g
  EXPECT_EQ(values(p1), (std::vector<double>{1.0 - 0.05, 2.0 + 0.1}));
  EXPECT_TRUE(all_close(p2, tensor({1.0 - 0.1 * 1.15, 2.0 - 0.1 * 0.4}), 1e-15, 0));
}

TEST(FusedOptimizerKernels, BumpTheVersionsOfWhatTheyWrite) {
  NoGradGuard no_grad;
  Tensor p = random({4}, 1), g = random({4}, 2), m = zeros({4}), v = zeros({4});
  const uint32_t vp = p._version(), vg = g._version(), vm = m._version(), vv = v._version();
  const TensorList out =
      op::_fused_adam_.call({p}, {g}, {m}, {v}, {}, {1}, 1e-3, 0.9, 0.999, 0, 1e-8, false, false, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_same(p));
  EXPECT_GT(p._version(), vp);
  EXPECT_GT(m._version(), vm);
  EXPECT_GT(v._version(), vv);
  EXPECT_EQ(g._version(), vg);
}

TEST(FusedOptimizerKernels, RejectBadLists) {
  NoGradGuard no_grad;
  const Tensor p = random({3, 4}, 1), g = random({3, 4}, 2);
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {}, {}, {}, 0.1, 0, 0, 0, false, false), "_fused_sgd_",
                     "one entry of grads per parameter (1), got 0");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {random({4, 3}, 2)}, {}, {}, 0.1, 0, 0, 0, false, false),
                     "grads[0] is float32 [4, 3]", "expected the parameter's float32 [3, 4]");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {g.to(kFloat64)}, {}, {}, 0.1, 0, 0, 0, false, false), "grads[0]",
                     "float64");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p, p.to(kFloat64)}, {g, g.to(kFloat64)}, {}, {}, 0.1, 0, 0, 0, false, false),
                     "params[1] is float64 but params[0] is float32");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p.t()}, {g.t()}, {}, {}, 0.1, 0, 0, 0, false, false),
                     "params[0] of shape [4, 3] is not contiguous");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {g}, {zeros({3, 4})}, {}, 0.1, 0, 0, 0, false, false),
                     "expected no momentum_buffers for this configuration");
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {g}, {zeros({3, 4})}, {}, 0.1, 0.9, 0, 0, false, false),
                     "one entry of new_buffers per parameter");
  EXPECT_EMBER_ERROR(op::_fused_adam_.call({p}, {g}, {zeros({3, 4})}, {zeros({3, 4})}, {}, {0}, 1e-3, 0.9, 0.999, 0,
                                           1e-8, false, false, false),
                     "_fused_adam_", "steps[0] is 0, expected >= 1");
  EXPECT_EMBER_ERROR(op::_fused_adam_.call({p}, {g}, {zeros({3, 4})}, {zeros({3, 4})}, {}, {1}, 1e-3, 0.9, 0.999, 0,
                                           1e-8, true, false, false),
                     "one entry of max_exp_avg_sqs per parameter");
  EXPECT_EMBER_ERROR(
      op::_fused_adagrad_.call({p.to(kInt64)}, {g.to(kInt64)}, {g.to(kInt64)}, {1}, 0.1, 0, 0, 1e-10, false),
      "_fused_adagrad_", "int64");
}

// The ops have no derivative: with grad mode on, a parameter that requires
// grad makes the call an error that says to use NoGradGuard.
TEST(FusedOptimizerKernels, RefuseToRecordAGraph) {
  Tensor p = random({3}, 1).requires_grad_();
  EXPECT_EMBER_ERROR(op::_fused_sgd_.call({p}, {random({3}, 2)}, {}, {}, 0.1, 0, 0, 0, false, false), "_fused_sgd_",
                     "NoGradGuard");
}

}  // namespace
}  // namespace ember::testing
