// The CUDA backend against the CPU one: every CUDA op on random inputs
// (contiguous, transposed, broadcast, CPU scalars, 0-d and empty tensors,
// every dtype) must give what the CPU kernel gives, up to the last bits of the
// math library for transcendental functions. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "core/tensor_util.h"
#include "cuda_test_util.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "test_util.h"
#ifdef EMBER_WITH_CUDA
#include "kernels/cuda/cuda_allocator.h"
#endif

namespace ember {
namespace {

using namespace cuda_testing;
using testing::all_close;
using testing::values;

// Input pairs of every layout the launcher distinguishes.
struct Pair {
  std::string name;
  Tensor a, b;
};
std::vector<Pair> binary_layouts(DType ta, DType tb) {
  std::vector<Pair> v;
  v.push_back({"contiguous", random_cpu({17, 33}, ta), random_cpu({17, 33}, tb)});
  v.push_back({"transposed", random_cpu({33, 17}, ta).t(), random_cpu({17, 33}, tb)});
  v.push_back({"broadcast", random_cpu({17, 1}, ta), random_cpu({33}, tb)});
  v.push_back({"0-d tensor", random_cpu({5, 7}, ta), random_cpu({}, tb)});
  v.push_back({"misaligned slice", random_cpu({1001}, ta).slice(0, 1), random_cpu({1000}, tb)});
  v.push_back({"large", random_cpu({100003}, ta), random_cpu({100003}, tb)});
  v.push_back({"empty", random_cpu({0, 3}, ta), random_cpu({3}, tb)});
  return v;
}

using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;
std::vector<std::pair<std::string, BinaryFn>> binary_ops() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return op::add.call(a, b, 1); }},
      {"add alpha", [](const Tensor& a, const Tensor& b) { return op::add.call(a, b, 3); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return op::sub.call(a, b, 1); }},
      {"sub alpha", [](const Tensor& a, const Tensor& b) { return op::sub.call(a, b, 2); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return op::mul.call(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return op::div.call(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return op::pow.call(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return op::maximum.call(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return op::minimum.call(a, b); }},
      {"remainder", [](const Tensor& a, const Tensor& b) { return op::remainder.call(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return op::eq.call(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return op::ne.call(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return op::lt.call(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return op::le.call(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return op::gt.call(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return op::ge.call(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return op::logical_and.call(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return op::logical_or.call(a, b); }},
      {"logical_xor", [](const Tensor& a, const Tensor& b) { return op::logical_xor.call(a, b); }},
  };
}

// b with no zeros (integer remainder refuses them) and half its elements equal to a (for comparisons).
Tensor second_operand(const Tensor& a, const Tensor& b) {
  Tensor nz = is_integral(b.dtype(), true) ? where(b == 0, wrap_scalar(1).to(b.dtype()), b) : b;
  if (a.numel() == 0 || a.sizes() != b.sizes()) return nz;
  return where(rand(a.sizes()) < 0.5, a.to(nz.dtype()), nz);
}

TEST(CudaBinary, EveryOpAndDTypeMatchesTheCpuKernel) {
  REQUIRE_CUDA();
  for (const auto& [name, f] : binary_ops()) {
    for (DType t : kEveryDType) {
      for (const Pair& p : binary_layouts(t, t)) {
        const Tensor b = name == "pow" && is_integral(t) ? p.b.abs().remainder(4) : second_operand(p.a, p.b);
        check_op(name + " " + str(t) + " " + p.name,
                 [&](const std::vector<Tensor>& x) { return f(x[0], x[1]); }, {p.a, b});
      }
    }
  }
}

TEST(CudaBinary, MixedDTypesAndCpuScalarsPromoteAsOnTheCpu) {
  REQUIRE_CUDA();
  const std::vector<std::pair<DType, DType>> pairs = {
      {kFloat32, kInt64}, {kInt32, kFloat64}, {kFloat16, kFloat32}, {kBFloat16, kFloat16},
      {kUInt8, kInt32},   {kBool, kFloat32},  {kInt64, kBool},     {kFloat16, kInt32}};
  for (const auto& [name, f] : binary_ops()) {
    for (const auto& [ta, tb] : pairs) {
      const Tensor a = random_cpu({9, 10}, ta), b = second_operand(a, random_cpu({9, 10}, tb));
      check_op(name + " " + str(ta) + "," + str(tb), [&](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
               {a, b});
    }
    for (DType t : kEveryDType) {
      for (const Scalar& s : {Scalar(2.5), Scalar(int64_t{3}), Scalar(true)}) {
        const Tensor a = random_cpu({13, 7}, t);
        check_op(name + " " + str(t) + " with CPU scalar", [&](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
                 {a, wrap_scalar(s)});
        check_op(name + " CPU scalar with " + str(t), [&](const std::vector<Tensor>& x) { return f(x[0], x[1]); },
                 {wrap_scalar(s), a});
      }
    }
  }
}

TEST(CudaBinary, InPlaceFormsWriteIntoSelf) {
  REQUIRE_CUDA();
  const std::vector<std::pair<std::string, BinaryFn>> ops = {
      {"add_", [](const Tensor& a, const Tensor& b) { return op::add_.call(a, b, 2); }},
      {"sub_", [](const Tensor& a, const Tensor& b) { return op::sub_.call(a, b, 1); }},
      {"mul_", [](const Tensor& a, const Tensor& b) { return op::mul_.call(a, b); }},
      {"div_", [](const Tensor& a, const Tensor& b) { return op::div_.call(a, b); }},
      {"pow_", [](const Tensor& a, const Tensor& b) { return op::pow_.call(a, b); }},
  };
  for (const auto& [name, f] : ops) {
    for (DType t : kEveryDType) {
      const Tensor base = random_cpu({8, 12}, t);
      const Tensor b = name == "pow_" ? random_cpu({12}, t).abs().remainder(3) : second_operand(base, random_cpu({12}, t));
      SCOPED_TRACE(name + " " + str(t));
      Tensor cpu_self = base.clone();
      Tensor cuda_self = base.cuda().t().contiguous().t();  // a transposed self
      bool cpu_ok = true;
      try {
        f(cpu_self, b);
      } catch (const Error&) {
        cpu_ok = false;
      }
      if (!cpu_ok) {
        EXPECT_THROW(f(cuda_self, b.cuda()), Error);
        continue;
      }
      const uint32_t version = cuda_self._version();
      const Tensor r = f(cuda_self, b.cuda());
      EXPECT_TRUE(r.is_same(cuda_self));
      EXPECT_GT(cuda_self._version(), version);
      EXPECT_TRUE(matches(cuda_self, cpu_self));
    }
  }
}

TEST(CudaWhere, WhereAndMaskedFillMatchTheCpu) {
  REQUIRE_CUDA();
  for (DType t : kEveryDType) {
    const Tensor cond = random_cpu({6, 1, 5}, kBool);
    const Tensor a = random_cpu({4, 5}, t), b = random_cpu({6, 4, 1}, kFloat32);
    check_op("where " + str(t), [](const std::vector<Tensor>& x) { return op::where.call(x[0], x[1], x[2]); },
             {cond, a, b});
    check_op("where scalar " + str(t),
             [](const std::vector<Tensor>& x) { return op::where.call(x[0], x[1], wrap_scalar(7)); }, {cond, a});
    const Tensor mask = random_cpu({4, 1}, kBool);
    check_op("masked_fill " + str(t),
             [](const std::vector<Tensor>& x) { return op::masked_fill.call(x[0], x[1], 2.5); }, {a, mask});
    check_op("masked_fill broadcasting self " + str(t),
             [](const std::vector<Tensor>& x) { return op::masked_fill.call(x[0], x[1], -1); },
             {random_cpu({5}, t), random_cpu({3, 5}, kBool)});
    check_op("masked_fill_ " + str(t),
             [](const std::vector<Tensor>& x) {
               Tensor self = x[0].clone();
               return op::masked_fill_.call(self, x[1], true);
             },
             {a.t(), random_cpu({5, 1}, kBool)});
  }
  EXPECT_EMBER_ERROR(op::where.call(random_cpu({3}, kInt32).cuda(), ones({3}, kCuda), ones({3}, kCuda)),
                     "where", "bool");
  EXPECT_EMBER_ERROR(op::masked_fill_.call(ones({3}, kCuda), random_cpu({2, 3}, kBool).cuda(), 1), "masked_fill_",
                     "[2, 3]");
}

TEST(CudaThresholdBackward, MatchesTheCpuAndCarriesReluBackward) {
  REQUIRE_CUDA();
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    check_op("threshold_backward " + str(t),
             [](const std::vector<Tensor>& x) { return op::threshold_backward.call(x[0], x[1], 0.25); },
             {random_cpu({4, 5}, t), random_cpu({5, 4}, t).t()});
  }
  const Tensor x = random_cpu({3, 7}, kFloat32);
  const Tensor xc = x.cuda().requires_grad_(), xh = x.clone().requires_grad_();
  (xc.relu() * 3).sum().backward();
  (xh.relu() * 3).sum().backward();
  EXPECT_TRUE(all_close(xc.grad().cpu(), xh.grad(), 0, 0));
}

TEST(CudaClamp, BoundsAndPromotionMatchTheCpu) {
  REQUIRE_CUDA();
  using Opt = std::optional<Scalar>;
  const std::vector<std::pair<Opt, Opt>> bounds = {
      {Scalar(-1.5), Scalar(2.0)}, {Scalar(-1), std::nullopt}, {std::nullopt, Scalar(3)}, {Scalar(2), Scalar(-2)}};
  for (DType t : kEveryDType) {
    const Tensor x = random_cpu({7, 9}, t).t();
    for (const auto& [lo, hi] : bounds) {
      check_op("clamp " + str(t), [&](const std::vector<Tensor>& v) { return op::clamp.call(v[0], lo, hi); }, {x});
      check_op("clamp_ " + str(t),
               [&](const std::vector<Tensor>& v) {
                 Tensor self = v[0].clone();
                 return op::clamp_.call(self, lo, hi);
               },
               {x});
    }
  }
  const Tensor nan = tensor({std::numeric_limits<float>::quiet_NaN(), 5.f, -5.f});
  check_op("clamp NaN", [](const std::vector<Tensor>& v) { return op::clamp.call(v[0], Scalar(-1), Scalar(1)); },
           {nan});
  EXPECT_EMBER_ERROR(op::clamp.call(ones({2}, kCuda), std::nullopt, std::nullopt), "clamp", "min", "max");
}

// ---- unary ----

using UnaryFn = std::function<Tensor(const Tensor&)>;
std::vector<std::pair<std::string, UnaryFn>> unary_ops() {
  std::vector<std::pair<std::string, UnaryFn>> v;
#define EMBER_TEST_UNARY(name) v.push_back({#name, [](const Tensor& t) { return op::name.call(t); }});
  EMBER_UNARY_OPS(EMBER_TEST_UNARY)
#undef EMBER_TEST_UNARY
  v.push_back({"gelu", [](const Tensor& t) { return op::gelu.call(t, "none"); }});
  v.push_back({"gelu tanh", [](const Tensor& t) { return op::gelu.call(t, "tanh"); }});
  v.push_back({"softplus", [](const Tensor& t) { return op::softplus.call(t, 1, 20); }});
  v.push_back({"softplus beta", [](const Tensor& t) { return op::softplus.call(t, 2, 3); }});
  v.push_back({"isnan", [](const Tensor& t) { return op::isnan.call(t); }});
  v.push_back({"isinf", [](const Tensor& t) { return op::isinf.call(t); }});
  v.push_back({"logical_not", [](const Tensor& t) { return op::logical_not.call(t); }});
  return v;
}

// Finite values plus the specials every function must handle.
Tensor with_specials(const Tensor& t) {
  if (!is_floating_point(t.dtype()) || t.numel() < 8) return t;
  const float inf = std::numeric_limits<float>::infinity();
  Tensor flat = t.clone().view({-1});
  flat.slice(0, 0, 8).copy_(tensor({std::nanf(""), inf, -inf, 0.f, -0.f, 0.5f, -2.5f, 1e-3f}));
  return flat.view(t.sizes());
}

TEST(CudaUnary, EveryOpAndDTypeMatchesTheCpuKernel) {
  REQUIRE_CUDA();
  for (const auto& [name, f] : unary_ops()) {
    for (DType t : kEveryDType) {
      const std::vector<std::pair<std::string, Tensor>> inputs = {
          {"contiguous", with_specials(random_cpu({1003}, t))},
          {"transposed", random_cpu({19, 23}, t).t()},
          {"0-d", random_cpu({}, t)},
          {"empty", random_cpu({0, 4}, t)},
          {"large", random_cpu({70001}, t, -12.0, 12.0)},
      };
      for (const auto& [layout, x] : inputs) {
        check_op(name + " " + str(t) + " " + layout, [&](const std::vector<Tensor>& v) { return f(v[0]); }, {x});
      }
    }
  }
}

TEST(CudaUnary, InPlaceFormsMatchTheCpuKernel) {
  REQUIRE_CUDA();
  std::vector<std::pair<std::string, UnaryFn>> ops;
#define EMBER_TEST_UNARY_(name) ops.push_back({#name "_", [](const Tensor& t) { return op::name##_.call(t); }});
  EMBER_UNARY_OPS(EMBER_TEST_UNARY_)
#undef EMBER_TEST_UNARY_
  for (const auto& [name, f] : ops) {
    for (DType t : kEveryDType) {
      check_op(name + " " + str(t),
               [&](const std::vector<Tensor>& v) {
                 Tensor self = v[0].clone();
                 Tensor r = f(self);
                 EXPECT_TRUE(r.is_same(self));
                 return self;
               },
               {random_cpu({11, 13}, t).t()});
    }
  }
}

// ---- copies, fills, allocator ----

TEST(CudaCopy, RoundTripIsExactForEveryDType) {
  REQUIRE_CUDA();
  for (DType t : kEveryDType) {
    const Tensor x = with_specials(random_cpu({257, 3}, t));
    const Tensor d = x.cuda();
    EXPECT_TRUE(d.is_cuda());
    EXPECT_EQ(d.dtype(), t);
    EXPECT_TRUE(bitwise_equal(d.cpu(), x)) << str(t);
  }
}

TEST(CudaCopy, ConversionsBetweenEveryPairMatchTheCpu) {
  REQUIRE_CUDA();
  for (DType from : kEveryDType) {
    // Non-negative values: float -> uint8 of a negative value differs by design between CPUs and GPUs.
    const Tensor x = random_cpu({33, 65}, from, 0.0, 100.0);
    for (DType to : kEveryDType) {
      SCOPED_TRACE(str(from) + " -> " + str(to));
      const Tensor expected = x.to(to);
      EXPECT_TRUE(bitwise_equal(x.cuda().to(to), expected)) << "device to device";
      EXPECT_TRUE(bitwise_equal(x.to(kCuda, to), expected)) << "host to device";
      EXPECT_TRUE(bitwise_equal(x.cuda().to(Device::cpu(), to), expected)) << "device to host";
      EXPECT_TRUE(bitwise_equal(x.cuda().t().to(to), expected.t())) << "transposed";
    }
  }
}

TEST(CudaCopy, NonContiguousAndBroadcastCopiesBothWays) {
  REQUIRE_CUDA();
  const Tensor src = random_cpu({40, 30}, kFloat64);
  {  // host (transposed, float64) -> device (sliced, float32)
    Tensor dst = zeros({30, 80}, kCuda);
    dst.slice(1, 0, 80, 2).copy_(src.t());
    EXPECT_TRUE(bitwise_equal(dst.cpu().slice(1, 0, 80, 2), src.t().to(kFloat32)));
    EXPECT_TRUE(bitwise_equal(dst.cpu().slice(1, 1, 80, 2), zeros({30, 40})));
  }
  {  // device (transposed) -> host (sliced, other dtype)
    Tensor dst = zeros({30, 80}, kFloat16);
    dst.slice(1, 1, 80, 2).copy_(src.cuda().t());
    EXPECT_TRUE(bitwise_equal(dst.slice(1, 1, 80, 2), src.t().to(kFloat16)));
  }
  {  // broadcasts: from a CPU row, a CPU 0-d tensor and a CUDA column
    Tensor dst = empty({4, 6}, kCuda);
    dst.copy_(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
    EXPECT_TRUE(bitwise_equal(dst, tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).expand({4, 6})));
    dst.copy_(scalar_tensor(7.0));
    EXPECT_TRUE(bitwise_equal(dst, full({4, 6}, 7.f)));
    const Tensor col = random_cpu({4, 1}, kInt32);
    dst.copy_(col.cuda());
    EXPECT_TRUE(bitwise_equal(dst, col.to(kFloat32).expand({4, 6})));
  }
  EXPECT_EMBER_ERROR(empty({3}, kCuda).copy_(ones({4})), "copy_", "[4]", "[3]");
}

TEST(CudaCopy, LargeCopiesGoThroughPinnedStagingInChunks) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({5'000'011}, kFloat32);  // ~20 MB: three 8 MiB chunks
  const Tensor d = x.cuda();
  EXPECT_TRUE(bitwise_equal(d, x));
  const Tensor back = d.cpu();
  EXPECT_TRUE(bitwise_equal(back, x));
#ifdef EMBER_WITH_CUDA
  const MemoryStats s = cuda::pinned_memory_stats();
  EXPECT_GT(s.reserved_bytes, 0);
  EXPECT_GT(s.num_allocations, 0);
  EXPECT_EQ(s.allocated_bytes, 0);  // every staging buffer went back to the pool
  cuda_synchronize();
  cuda::empty_pinned_cache();
  EXPECT_EQ(cuda::pinned_memory_stats().reserved_bytes, 0);
#endif
}

#ifdef EMBER_WITH_CUDA
TEST(CudaCopy, PinnedHostTensorsAreCopiedDirectly) {
  REQUIRE_CUDA();
  auto block = std::make_shared<DataPtr>(cuda::allocate_pinned(1000 * sizeof(float)));
  ASSERT_TRUE(cuda::is_pinned(block->get()));
  Tensor pinned = from_blob(block->get(), {1000}, kFloat32, [block](void*) {});
  pinned.copy_(random_cpu({1000}, kFloat32));
  const Tensor d = pinned.cuda();
  EXPECT_TRUE(bitwise_equal(d, pinned));
  Tensor back = from_blob(block->get(), {1000}, kFloat32, [block](void*) {});
  back.zero_();
  back.copy_(d);
  EXPECT_TRUE(bitwise_equal(back, d));
  EXPECT_FALSE(cuda::is_pinned(random_cpu({10}, kFloat32).data_ptr()));
}
#endif

#ifdef EMBER_WITH_CUDA
// DataLoader(pin_memory): batches arrive in page-locked memory, with the
// values a loader without pinning gives, and copy to the device exactly.
TEST(CudaCopy, DataLoaderPinsBatches) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({10, 3}, kFloat32), y = arange(10);
  auto dataset = std::make_shared<data::TensorDataset>(x, y);
  data::DataLoader pinned(dataset, {.batch_size = 4, .num_workers = 2, .pin_memory = true});
  data::DataLoader plain(dataset, {.batch_size = 4});
  auto expected = plain.begin();
  int batches = 0;
  for (data::Example& batch : pinned) {
    ASSERT_TRUE(expected != plain.end());
    EXPECT_TRUE(cuda::is_pinned(batch.data.data_ptr()));
    EXPECT_TRUE(cuda::is_pinned(batch.target.data_ptr()));
    EXPECT_TRUE(bitwise_equal(batch.data, (*expected).data));
    EXPECT_TRUE(bitwise_equal(batch.data.cuda(), (*expected).data));
    EXPECT_TRUE(bitwise_equal(batch.target, (*expected).target));
    ++expected;
    ++batches;
  }
  EXPECT_EQ(batches, 3);
}
#endif

TEST(CudaCopy, PeerCopiesBetweenDevices) {
  REQUIRE_CUDA();
  if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device";
  const Tensor x = random_cpu({300, 7}, kFloat32);
  const Tensor on1 = x.to(Device::cuda(1));
  EXPECT_EQ(on1.device(), Device::cuda(1));
  EXPECT_TRUE(bitwise_equal(on1.to(Device::cuda(0)), x));
  EXPECT_TRUE(bitwise_equal(on1.t().to(Device::cuda(0)), x.t()));
}

TEST(CudaFill, FillsEveryDTypeAndLayout) {
  REQUIRE_CUDA();
  for (DType t : kEveryDType) {
    for (const Scalar& v : {Scalar(0), Scalar(1.5), Scalar(-3), Scalar(true), Scalar(-0.0)}) {
      Tensor cpu = empty({9, 5}, t).fill_(v);
      EXPECT_TRUE(bitwise_equal(empty({9, 5}, TensorOptions(t).device(kCuda)).fill_(v), cpu)) << str(t) << " " << v;
      Tensor strided = zeros({5, 18}, TensorOptions(t).device(kCuda));
      strided.slice(1, 0, 18, 2).t().fill_(v);
      Tensor expected = zeros({5, 18}, t);
      expected.slice(1, 0, 18, 2).fill_(v);
      EXPECT_TRUE(bitwise_equal(strided, expected)) << str(t) << " " << v;
    }
  }
  const Tensor x = random_cpu({6, 7}, kBFloat16).cuda().t();
  const Tensor c = x.clone();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TRUE(bitwise_equal(c, x));
}


// ---- sum ----

// A float64 CPU reference and a tolerance from the sum of magnitudes.
void check_sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype, const std::string& what) {
  SCOPED_TRACE(what);
  const Tensor got = op::sum.call(x.cuda(), dims, keepdim, dtype);
  const Tensor expected = op::sum.call(x, dims, keepdim, dtype);
  EXPECT_EQ(got.dtype(), expected.dtype());
  EXPECT_EQ(got.sizes(), expected.sizes());
  if (is_integral(expected.dtype(), true)) {
    EXPECT_TRUE(all_close(got, expected, 0, 0));
  } else {
    const DType in = dtype ? *dtype : x.dtype();
    const Tensor x64 = x.to(in).to(kFloat64);
    const Tensor ref = op::sum.call(x64, dims, keepdim, std::nullopt);
    const Tensor mag = op::sum.call(x64.abs(), dims, keepdim, std::nullopt);
    const std::vector<double> g = values(got), r = values(ref), m = values(mag);
    const double eps = (expected.dtype() == kFloat64) ? 1e-14 : 1e-6;
    const Tol out_tol = tolerance(expected.dtype());  // rounding of the result itself
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], r[i], eps * m[i] + out_tol.rtol * std::fabs(r[i]) + out_tol.atol) << "element " << i;
    }
  }
  EXPECT_TRUE(bitwise_equal(op::sum.call(x.cuda(), dims, keepdim, dtype), got)) << "not reproducible";
}

TEST(CudaSum, AllDimsSomeDimsKeepdimAndDTypes) {
  REQUIRE_CUDA();
  for (DType t : kEveryDType) {
    const std::string n = str(t);
    check_sum(random_cpu({1'000'003}, t), {}, false, std::nullopt, n + " all, multi-pass");
    const Tensor x = random_cpu({3, 4, 5, 6}, t);
    check_sum(x, {}, false, std::nullopt, n + " all");
    check_sum(x, {-1}, false, std::nullopt, n + " last dim");
    check_sum(x, {0}, true, std::nullopt, n + " first dim keepdim");
    check_sum(x, {1, 2}, false, std::nullopt, n + " middle block");
    check_sum(x, {0, 2}, true, std::nullopt, n + " non-adjacent dims");
    check_sum(x.permute({2, 0, 3, 1}), {1, 3}, false, std::nullopt, n + " permuted input");
    check_sum(random_cpu({}, t), {}, false, std::nullopt, n + " 0-d");
    check_sum(random_cpu({0, 5}, t), {0}, false, std::nullopt, n + " empty reduced dim");
    check_sum(random_cpu({0, 5}, t), {1}, true, std::nullopt, n + " empty kept dim");
  }
  check_sum(random_cpu({4, 300'001}, kFloat32), {1}, false, std::nullopt, "long rows");
  check_sum(random_cpu({300'001, 3}, kFloat32), {0}, false, std::nullopt, "long columns");
  check_sum(random_cpu({700, 2, 900}, kFloat32), {0, 1}, false, std::nullopt, "columns of several dims");
  check_sum(random_cpu({64, 33}, kInt32), {1}, false, kFloat32, "int32 to float32");
  check_sum(random_cpu({64, 33}, kFloat32), {}, false, kFloat64, "float32 to float64");
  check_sum(random_cpu({64, 33}, kFloat32), {0}, false, kFloat16, "float32 to float16");
  check_sum(random_cpu({64, 33}, kInt64), {0}, false, kInt32, "int64 to int32");
  EXPECT_EMBER_ERROR(op::sum.call(ones({2, 3}, kCuda), {1, -1}, false, std::nullopt), "sum", "multiple times");
  EXPECT_EMBER_ERROR(op::sum.call(ones({2, 3}, kCuda), {2}, false, std::nullopt), "sum", "out of range");
}

// ---- random ----

TEST(CudaRandom, UniformAndRandintMatchTheCpuStreamBitwise) {
  REQUIRE_CUDA();
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1001}, int64_t{300'003}}) {
    SCOPED_TRACE(n);
    for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      Generator g_cpu(1234), g_cuda(1234);
      g_cpu.set_offset(17);
      g_cuda.set_offset(17);
      const Tensor a = rand({n}, t, &g_cpu);
      const Tensor b = rand({n}, TensorOptions(t).device(kCuda), &g_cuda);
      EXPECT_TRUE(bitwise_equal(b, a)) << str(t);
      EXPECT_EQ(g_cpu.offset(), g_cuda.offset());
    }
    for (DType t : {kInt64, kInt32, kUInt8}) {
      Generator g_cpu(99), g_cuda(99);
      const Tensor a = randint(0, 200, {n}, t, &g_cpu);
      const Tensor b = randint(0, 200, {n}, TensorOptions(t).device(kCuda), &g_cuda);
      EXPECT_TRUE(bitwise_equal(b, a)) << str(t);
    }
  }
  Generator g_cpu(5), g_cuda(5);
  Tensor a = empty({30, 40}).t();
  Tensor b = empty({30, 40}, kCuda).t();
  uniform_(a, -2.0, 3.0, &g_cpu);
  uniform_(b, -2.0, 3.0, &g_cuda);
  EXPECT_TRUE(bitwise_equal(b, a)) << "transposed target";
}

TEST(CudaRandom, NormalMatchesTheCpuStreamToAFewUlps) {
  REQUIRE_CUDA();
  for (DType t : {kFloat32, kFloat64, kBFloat16}) {
    Generator g_cpu(42), g_cuda(42);
    const Tensor a = randn({100'001}, t, &g_cpu);
    const Tensor b = randn({100'001}, TensorOptions(t).device(kCuda), &g_cuda);
    const double rtol = t == kFloat64 ? 1e-14 : t == kFloat32 ? 2e-6 : 1e-2;
    EXPECT_TRUE(all_close(b, a, rtol, rtol)) << str(t);
  }
  Generator g_cpu(3), g_cuda(3);
  Tensor a = empty({50, 20});
  Tensor b = empty({50, 20}, kCuda);
  normal_(a, 2.0, 0.5, &g_cpu);
  normal_(b, 2.0, 0.5, &g_cuda);
  EXPECT_TRUE(all_close(b, a, 2e-6, 2e-6));
}

// ---- errors ----

TEST(CudaErrors, BadInputsAreClearErrors) {
  REQUIRE_CUDA();
  EXPECT_EMBER_ERROR(op::add.call(ones({3}, kCuda), ones({3}), 1), "add", "one device", "cuda:0", "cpu");
  EXPECT_EMBER_ERROR(op::add.call(ones({3}, kCuda), ones({4}, kCuda), 1), "add", "[3]", "[4]");
  EXPECT_EMBER_ERROR(op::gelu.call(ones({3}, TensorOptions(kInt64).device(kCuda)), "none"), "gelu", "int64");
  EXPECT_EMBER_ERROR(op::gelu.call(ones({3}, kCuda), "fast"), "gelu", "fast");
  EXPECT_EMBER_ERROR(op::neg.call(ones({3}, TensorOptions(kBool).device(kCuda))), "neg", "bool");
  EXPECT_EMBER_ERROR(op::remainder.call(ones({3}, TensorOptions(kInt64).device(kCuda)), wrap_scalar(0)), "remainder",
                     "division by zero");
  EXPECT_EMBER_ERROR(op::remainder.call(ones({3}, TensorOptions(kInt64).device(kCuda)),
                                        zeros({3}, TensorOptions(kInt32).device(kCuda))),
                     "remainder", "division by zero");
  EXPECT_EMBER_ERROR(op::exp_.call(ones({3}, TensorOptions(kInt32).device(kCuda))), "exp_", "float32", "int32");
  EXPECT_EMBER_ERROR(cuda_set_device(cuda_device_count()), "cuda_set_device", "does not exist");
  EXPECT_EMBER_ERROR(cuda_synchronize(-1), "cuda_synchronize", "does not exist");
}

}  // namespace
}  // namespace ember
