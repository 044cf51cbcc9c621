// The host half of the CUDA elementwise launcher (kernels/cuda/cuda_loops.h):
// its index arithmetic is plain C++, so these tests run on any machine. They
// replay, on the CPU, what each GPU thread of the strided kernel computes
// (magic-number division of the flat index, coordinate * byte stride per
// operand) over the pieces the host splits an iteration into, and check the
// result against TensorIterator's own CPU traversal.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/op_decls.h"
#include "core/tensor_iterator.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "kernels/cuda/cuda_loops.h"
#include "test_util.h"

namespace ember {
namespace {

using cuda::ElementwiseArgs;
using cuda::IntDivider;

TEST(CudaIntDivider, MatchesDivisionForSmallDivisorsAndEdgeNumerators) {
  const uint32_t kMax = (uint32_t{1} << 31) - 1;
  for (uint32_t d = 1; d <= 3000; ++d) {
    const IntDivider div(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, 12345u, kMax / 2, kMax - d, kMax - 1, kMax}) {
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
    }
  }
}

TEST(CudaIntDivider, MatchesDivisionForLargeAndPowerOfTwoDivisors) {
  std::mt19937 rng(7);
  const uint32_t kMax = (uint32_t{1} << 31) - 1;
  std::vector<uint32_t> divisors;
  for (int s = 0; s < 31; ++s) {
    const uint32_t p = uint32_t{1} << s;
    divisors.insert(divisors.end(), {p, p - 1 > 0 ? p - 1 : 1, p + 1});
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % kMax);
  for (uint32_t d : divisors) {
    if (d == 0 || d > kMax) continue;
    const IntDivider div(d);
    for (int j = 0; j < 200; ++j) {
      const uint32_t n = rng() % (kMax + 1u);
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
    }
    for (uint32_t n : {0u, d - 1, d, kMax}) ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
  }
}

// The launch description of a CPU TensorIterator, as build_cuda_iterator
// makes it for a CUDA one (kernels/cuda/cuda_elementwise_ops.cpp).
ElementwiseArgs args_of(const TensorIterator& it) {
  ElementwiseArgs a;
  a.num_inputs = it.num_operands() - 1;
  a.ndim = it.ndim();
  a.numel = it.numel();
  for (int d = 0; d < a.ndim; ++d) a.sizes[d] = it.shape()[d];
  for (int o = 0; o < it.num_operands(); ++o) {
    a.data[o] = static_cast<char*>(it.operand(o).data_ptr());
    a.dtypes[o] = it.dtype(o);
    for (int d = 0; d < a.ndim; ++d) a.strides[o][d] = it.stride(o, d);
  }
  return a;
}

// What the strided kernel does for every flat index of every piece:
// out = x + y in float32.
void emulate_strided_add(const ElementwiseArgs& a, int64_t max_elements, int& pieces) {
  cuda::for_each_strided_piece(
      a,
      [&](const ElementwiseArgs& p) {
        ++pieces;
        ASSERT_LE(p.ndim, cuda::kMaxDims);
        ASSERT_LE(p.numel, max_elements);
        IntDivider sizes[cuda::kMaxDims];
        for (int d = 0; d < p.ndim; ++d) sizes[d] = IntDivider(static_cast<uint32_t>(p.sizes[d]));
        for (uint32_t i = 0; i < static_cast<uint32_t>(p.numel); ++i) {
          int64_t offset[3] = {0, 0, 0};
          uint32_t rest = i;
          for (int d = 0; d < p.ndim; ++d) {
            const uint32_t q = sizes[d].div(rest);
            const int64_t coord = static_cast<int64_t>(rest - q * sizes[d].divisor);
            for (int o = 0; o < 3; ++o) offset[o] += coord * p.strides[o][d];
            rest = q;
          }
          float x, y;
          std::memcpy(&x, p.data[1] + offset[1], 4);
          std::memcpy(&y, p.data[2] + offset[2], 4);
          const float r = x + y;
          std::memcpy(p.data[0] + offset[0], &r, 4);
        }
      },
      max_elements);
}

Tensor iota(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return arange(n, kFloat32).view(sizes);
}

struct Layout {
  const char* name;
  Tensor out, x, y;
};

std::vector<Layout> layouts() {
  std::vector<Layout> v;
  v.push_back({"contiguous", empty({6, 7}), iota({6, 7}), iota({6, 7}) * 10});
  v.push_back({"transposed input", empty({7, 6}), iota({6, 7}).t(), iota({7, 6})});
  v.push_back({"broadcast row and column", empty({5, 9}), iota({5, 1}), iota({9}) * 100});
  v.push_back({"sliced output", empty({8, 10}).slice(1, 1, 9, 2), iota({8, 4}), iota({4})});
  // Every other dim permuted away: 8 dims that cannot merge, more than one launch takes.
  Tensor x = iota({2, 3, 2, 3, 2, 3, 2, 2}).permute({7, 0, 6, 1, 5, 2, 4, 3});
  v.push_back({"eight non-mergeable dims", empty(x.sizes()), x, iota(x.sizes())});
  return v;
}

TEST(CudaLauncher, StridedIndexingReplayedOnTheCpuMatchesTensorIterator) {
  for (Layout& l : layouts()) {
    SCOPED_TRACE(l.name);
    const Tensor expected = l.x + l.y;
    for (int64_t max_elements : {cuda::kMaxStridedElements, int64_t{5}, int64_t{1}}) {
      SCOPED_TRACE(max_elements);
      l.out.fill_(std::numeric_limits<float>::quiet_NaN());
      TensorIterator it = TensorIterator::binary("add", l.out, l.x, l.y);
      int pieces = 0;
      emulate_strided_add(args_of(it), max_elements, pieces);
      EXPECT_TRUE(testing::all_close(l.out, expected, 0, 0));
      if (max_elements == 1) {
        EXPECT_EQ(pieces, l.out.numel());
      }
    }
  }
}

TEST(CudaLauncher, PiecesAboveSixDimsLoopOverTheOuterDims) {
  Tensor x = iota({2, 3, 2, 3, 2, 3, 2, 2}).permute({7, 0, 6, 1, 5, 2, 4, 3});
  Tensor out = empty(x.sizes());
  TensorIterator it = TensorIterator::binary("add", out, x, iota(x.sizes()));
  ASSERT_EQ(it.ndim(), 8);
  int pieces = 0;
  cuda::for_each_strided_piece(args_of(it), [&](const ElementwiseArgs& p) {
    ++pieces;
    EXPECT_EQ(p.ndim, cuda::kMaxDims);
  });
  EXPECT_EQ(pieces, it.shape()[6] * it.shape()[7]);
}

TEST(CudaLauncher, ContiguousKernelTakesFlatRunsAndBroadcastValues) {
  cuda::InputMode modes[cuda::kMaxOperands];
  {
    Tensor a = iota({4, 5}), b = iota({4, 5});
    TensorIterator it = TensorIterator::binary("add", Tensor(), a, b);
    ASSERT_TRUE(cuda::contiguous_modes(args_of(it), modes));
    EXPECT_EQ(modes[0], cuda::InputMode::Contiguous);
    EXPECT_EQ(modes[1], cuda::InputMode::Contiguous);
  }
  {
    Tensor a = iota({4, 5}), b = iota({1});
    TensorIterator it = TensorIterator::binary("add", Tensor(), a, b);
    ASSERT_TRUE(cuda::contiguous_modes(args_of(it), modes));
    EXPECT_EQ(modes[1], cuda::InputMode::Broadcast);
    ElementwiseArgs args = args_of(it);
    args.by_value[2] = true;  // as for a CPU scalar
    ASSERT_TRUE(cuda::contiguous_modes(args, modes));
    EXPECT_EQ(modes[1], cuda::InputMode::ByValue);
  }
  {
    Tensor a = iota({4, 5}).t(), b = iota({5, 4});
    TensorIterator it = TensorIterator::binary("add", Tensor(), a, b);
    EXPECT_FALSE(cuda::contiguous_modes(args_of(it), modes));
  }
  {
    Tensor a = iota({4, 5}), b = iota({5});  // a row broadcast over rows: two dims
    TensorIterator it = TensorIterator::binary("add", Tensor(), a, b);
    EXPECT_FALSE(cuda::contiguous_modes(args_of(it), modes));
  }
}

TEST(CudaDevice, QueriesAnswerWithoutADevice) {
  const int n = cuda_device_count();
  EXPECT_GE(n, 0);
  EXPECT_EQ(cuda_is_available(), n > 0);
  if (n == 0) {
    cuda_synchronize();  // nothing to wait for
    EXPECT_EMBER_ERROR(empty({2}, Device::cuda()), "no allocator for device cuda:0");
    EXPECT_EMBER_ERROR(cuda_set_device(0), "cuda_set_device");
  }
}

}  // namespace
}  // namespace ember
