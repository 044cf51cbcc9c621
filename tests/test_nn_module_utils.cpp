// nn utilities: clip_grad_norm_, clip_grad_value_, parameter_count.
#include <cmath>
#include <limits>

#include "ember/nn.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;
namespace nn = ember::nn;

// Two parameters with grads [3, 4] and [[12]], and one without a grad.
struct Params {
  Tensor a = zeros({2}).requires_grad_();
  Tensor b = zeros({1, 1}).requires_grad_();
  Tensor unused = zeros({3}).requires_grad_();
  Params() {
    a.set_grad(tensor({3.f, 4.f}));
    b.set_grad(tensor({12.f}).view({1, 1}));
  }
  TensorList list() const { return {a, b, unused}; }
};

TEST(NnClipGradNorm, ScalesAllGradsByOneFactor) {
  Params p;
  const double total = nn::clip_grad_norm_(p.list(), 6.5);
  EXPECT_DOUBLE_EQ(total, 13.0);  // sqrt(9 + 16 + 144)
  const double scale = 6.5 / (13.0 + 1e-6);
  EXPECT_TRUE(all_close(p.a.grad(), tensor({3.f, 4.f}) * scale, 1e-6, 0));
  EXPECT_TRUE(all_close(p.b.grad(), full({1, 1}, 12.0 * scale), 1e-6, 0));
  EXPECT_FALSE(p.unused.grad().defined());
}

TEST(NnClipGradNorm, LeavesSmallGradsAlone) {
  Params p;
  const Tensor before = p.a.grad();
  EXPECT_DOUBLE_EQ(nn::clip_grad_norm_(p.list(), 20.0), 13.0);
  EXPECT_TRUE(p.a.grad().is_same(before));
  EXPECT_EQ(values(p.a.grad()), (std::vector<double>{3, 4}));
}

TEST(NnClipGradNorm, OtherNormOrders) {
  Params p;
  EXPECT_DOUBLE_EQ(nn::clip_grad_norm_(p.list(), 100.0, 1.0), 19.0);
  EXPECT_DOUBLE_EQ(nn::clip_grad_norm_(p.list(), 100.0, std::numeric_limits<double>::infinity()), 12.0);
  const double total = nn::clip_grad_norm_(p.list(), 6.0, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(total, 12.0);
  EXPECT_NEAR(p.b.grad().item<double>(), 6.0, 1e-5);
  EXPECT_EMBER_ERROR(nn::clip_grad_norm_(p.list(), 1.0, 0.0), "norm_type must be > 0");
}

TEST(NnClipGradNorm, NonFiniteTotalIsAnErrorWhenAsked) {
  Params p;
  p.a.set_grad(tensor({std::nanf(""), 1.f}));
  EXPECT_EMBER_ERROR(nn::clip_grad_norm_(p.list(), 1.0, 2.0, /*error_if_nonfinite=*/true), "clip_grad_norm_",
                     "nan");
  EXPECT_TRUE(std::isnan(nn::clip_grad_norm_(p.list(), 1.0)));
}

TEST(NnClipGradNorm, NoGradsGiveZero) {
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_EQ(nn::clip_grad_norm_({w}, 1.0), 0.0);
}

TEST(NnClipGradValue, ClampsEachElement) {
  Params p;
  nn::clip_grad_value_(p.list(), 3.5);
  EXPECT_EQ(values(p.a.grad()), (std::vector<double>{3, 3.5}));
  EXPECT_EQ(values(p.b.grad()), (std::vector<double>{3.5}));
}

TEST(NnParameterCount, CountsElementsOfDescendants) {
  nn::Sequential model(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
  EXPECT_EQ(nn::parameter_count(*model), 784 * 128 + 128 + 128 * 10 + 10);
  const std::string summary = nn::summary(*model);
  EXPECT_NE(summary.find("(0): Linear(in_features=784, out_features=128, bias=true)  # 100,480 params\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("Total: 101,770 parameters (101,770 trainable), 0 buffer elements"), std::string::npos);
  model->at<nn::LinearImpl>(0).weight.requires_grad_(false);
  EXPECT_EQ(nn::parameter_count(*model, /*trainable_only=*/true), 128 + 128 * 10 + 10);
}

}  // namespace
}  // namespace ember
