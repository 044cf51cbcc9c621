// libtorch's options forms of the F:: functions (Note [Options forms] in
// ember/nn/functional/options_support.h): for each function, the options form
// with every option away from its default gives exactly the positional form's
// values, and differs from the defaults (so no option is dropped on the way).
// Also: the positional calls that an options overload could have made
// ambiguous still compile and bind as before.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

Tensor input(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, t, &g);
}

// The options form equals the positional form bit for bit, and differs from `defaults`.
void expect_same(const Tensor& options_form, const Tensor& positional_form, const Tensor& defaults) {
  EXPECT_TRUE(all_close(options_form, positional_form, 0, 0));
  if (options_form.sizes() == defaults.sizes()) {
    EXPECT_FALSE(all_close(options_form, defaults, 0, 0));
  }
}

// ---- activations ----

TEST(FunctionalOptions, LeakyRelu) {
  const Tensor x = input({4, 5}, 1);
  expect_same(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)), F::leaky_relu(x, 0.2),
              F::leaky_relu(x));
}

TEST(FunctionalOptions, Elu) {
  const Tensor x = input({4, 5}, 2);
  expect_same(F::elu(x, F::ELUFuncOptions().alpha(0.7)), F::elu(x, 0.7), F::elu(x));
}

TEST(FunctionalOptions, Gelu) {
  const Tensor x = input({4, 5}, 3);
  expect_same(F::gelu(x, F::GELUFuncOptions().approximate(kTanh)), F::gelu(x, "tanh"), F::gelu(x));
}

TEST(FunctionalOptions, Softplus) {
  const Tensor x = input({4, 5}, 4) * 5;
  expect_same(F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(3)), F::softplus(x, 2, 3), F::softplus(x));
}

TEST(FunctionalOptions, Hardtanh) {
  const Tensor x = input({4, 5}, 5) * 2;
  expect_same(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(1.5)), F::hardtanh(x, -0.5, 1.5),
              F::hardtanh(x));
}

TEST(FunctionalOptions, Celu) {
  const Tensor x = input({4, 5}, 6);
  expect_same(F::celu(x, F::CELUFuncOptions().alpha(2.0)), F::celu(x, 2.0), F::celu(x));
}

TEST(FunctionalOptions, Threshold) {
  const Tensor x = input({4, 5}, 7);
  expect_same(F::threshold(x, F::ThresholdFuncOptions(0.1, 20)), F::threshold(x, 0.1, 20),
              F::threshold(x, 0.0, 0.0));
}

TEST(FunctionalOptions, Glu) {
  const Tensor x = input({4, 6}, 8);
  const Tensor by_rows = F::glu(x, F::GLUFuncOptions(0));
  expect_same(by_rows, F::glu(x, 0), F::glu(x));
  EXPECT_EQ(by_rows.sizes(), IntArrayRef({2, 6}));
}

// ---- softmax and normalisation ----

TEST(FunctionalOptions, Softmax) {
  const Tensor x = input({4, 5}, 9);
  expect_same(F::softmax(x, F::SoftmaxFuncOptions(0).dtype(kFloat64)), F::softmax(x, 0, kFloat64),
              F::softmax(x, -1));
}

TEST(FunctionalOptions, LogSoftmax) {
  const Tensor x = input({4, 5}, 10);
  expect_same(F::log_softmax(x, F::LogSoftmaxFuncOptions(0).dtype(kFloat64)), F::log_softmax(x, 0, kFloat64),
              F::log_softmax(x, -1));
}

TEST(FunctionalOptions, LayerNorm) {
  const Tensor x = input({3, 8}, 11), w = input({8}, 12), b = input({8}, 13);
  expect_same(F::layer_norm(x, F::LayerNormFuncOptions({8}).weight(w).bias(b).eps(1e-2)),
              F::layer_norm(x, {8}, w, b, 1e-2), F::layer_norm(x, {8}));
}

TEST(FunctionalOptions, RmsNorm) {
  const Tensor x = input({3, 8}, 14), w = input({8}, 15);
  expect_same(F::rms_norm(x, F::RMSNormFuncOptions({8}).weight(w).eps(1e-2)), F::rms_norm(x, {8}, w, 1e-2),
              F::rms_norm(x, {8}));
}

TEST(FunctionalOptions, GroupNorm) {
  const Tensor x = input({2, 6, 3}, 16), w = input({6}, 17), b = input({6}, 18);
  expect_same(F::group_norm(x, F::GroupNormFuncOptions(3).weight(w).bias(b).eps(1e-2)),
              F::group_norm(x, 3, w, b, 1e-2), F::group_norm(x, 3));
}

TEST(FunctionalOptions, BatchNorm) {
  const Tensor x = input({5, 4}, 19), w = input({4}, 20), b = input({4}, 21);
  Tensor mean_a = zeros({4}), var_a = ones({4}), mean_b = zeros({4}), var_b = ones({4});
  const Tensor by_options = F::batch_norm(
      x, mean_a, var_a, F::BatchNormFuncOptions().weight(w).bias(b).training(true).momentum(0.3).eps(1e-2));
  const Tensor positional = F::batch_norm(x, mean_b, var_b, w, b, true, 0.3, 1e-2);
  expect_same(by_options, positional, F::batch_norm(x, zeros({4}), ones({4})));
  EXPECT_TRUE(all_close(mean_a, mean_b, 0, 0));  // the running statistics moved alike
  EXPECT_TRUE(all_close(var_a, var_b, 0, 0));
  // libtorch passes absent running statistics as undefined tensors.
  EXPECT_TRUE(all_close(F::batch_norm(x, Tensor(), Tensor(), F::BatchNormFuncOptions().training(true)),
                        F::batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true), 0, 0));
}

// ---- convolution ----

TEST(FunctionalOptions, Conv1d) {
  const Tensor x = input({2, 4, 9}, 22), w = input({6, 2, 3}, 23), b = input({6}, 24);
  expect_same(F::conv1d(x, w, F::Conv1dFuncOptions().bias(b).stride(2).padding(2).dilation(2).groups(2)),
              F::conv1d(x, w, b, 2, 2, 2, 2), F::conv1d(x, w.repeat({1, 2, 1})));
}

TEST(FunctionalOptions, Conv2d) {
  const Tensor x = input({2, 3, 8, 7}, 25), w = input({4, 3, 3, 3}, 26), b = input({4}, 27);
  expect_same(F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1).dilation({1, 2})),
              F::conv2d(x, w, b, 2, 1, {1, 2}), F::conv2d(x, w));
  expect_same(F::conv2d(x, w, F::Conv2dFuncOptions().padding(kSame)), F::conv2d(x, w, std::nullopt, 1, "same"),
              F::conv2d(x, w));
}

TEST(FunctionalOptions, ConvTranspose2d) {
  const Tensor x = input({2, 4, 5, 5}, 28), w = input({4, 3, 3, 3}, 29), b = input({6}, 30);
  const Tensor by_options = F::conv_transpose2d(
      x, w, F::ConvTranspose2dFuncOptions().bias(b).stride(2).padding(1).output_padding(1).groups(2).dilation(1));
  expect_same(by_options, F::conv_transpose2d(x, w, b, 2, 1, 1, 2, 1), F::conv_transpose2d(x, w));
}

TEST(FunctionalOptions, Conv3d) {
  const Tensor x = input({2, 4, 5, 6, 5}, 101), w = input({6, 2, 3, 2, 3}, 102), b = input({6}, 103);
  const auto options = F::Conv3dFuncOptions().bias(b).stride({2, 1, 1}).padding({1, 0, 1}).dilation(1).groups(2);
  const Tensor full = w.repeat({1, 2, 1, 1, 1});  // every input channel: groups 1
  expect_same(F::conv3d(x, w, options), F::conv3d(x, w, b, {2, 1, 1}, {1, 0, 1}, 1, 2), F::conv3d(x, full));
  expect_same(F::conv3d(x, full, F::Conv3dFuncOptions().padding(kSame)), F::conv3d(x, full, std::nullopt, 1, "same"),
              F::conv3d(x, full));
}

TEST(FunctionalOptions, UnfoldAndFold) {
  const Tensor x = input({2, 3, 7, 6}, 104);
  const Tensor cols = F::unfold(x, F::UnfoldFuncOptions({3, 2}).dilation({2, 1}).padding({1, 2}).stride({2, 3}));
  expect_same(cols, F::unfold(x, {3, 2}, {2, 1}, {1, 2}, {2, 3}), F::unfold(x, {3, 2}));
  expect_same(F::fold(cols, F::FoldFuncOptions({7, 6}, {3, 2}).dilation({2, 1}).padding({1, 2}).stride({2, 3})),
              F::fold(cols, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {2, 3}), x);
}

// ---- pooling, padding, resampling ----

TEST(FunctionalOptions, MaxPool2d) {
  const Tensor x = input({2, 3, 9, 8}, 31);
  const auto options = F::MaxPool2dFuncOptions(3).stride({2, 1}).padding(1).dilation({1, 2}).ceil_mode(true);
  expect_same(F::max_pool2d(x, options), F::max_pool2d(x, 3, {2, 1}, 1, {1, 2}, true), F::max_pool2d(x, 3));
}

TEST(FunctionalOptions, MaxPool2dWithIndices) {
  const Tensor x = input({2, 3, 9, 8}, 32);
  const auto [values_a, indices_a] =
      F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions({3, 2}).stride(2).padding({1, 0}));
  const auto [values_b, indices_b] = F::max_pool2d_with_indices(x, {3, 2}, 2, {1, 0});
  expect_same(values_a, values_b, std::get<0>(F::max_pool2d_with_indices(x, {3, 2})));
  EXPECT_TRUE(all_close(indices_a, indices_b, 0, 0));
}

TEST(FunctionalOptions, AvgPool2d) {
  const Tensor x = input({2, 3, 9, 8}, 33);
  const auto options =
      F::AvgPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false).divisor_override(4);
  expect_same(F::avg_pool2d(x, options), F::avg_pool2d(x, 3, 2, 1, true, false, 4), F::avg_pool2d(x, 3));
}

TEST(FunctionalOptions, AdaptiveAvgPool2d) {
  const Tensor x = input({2, 3, 9, 8}, 34);
  expect_same(F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({3, 2})), F::adaptive_avg_pool2d(x, {3, 2}),
              F::adaptive_avg_pool2d(x, {3, 3}));
}

TEST(FunctionalOptions, Pooling3d) {
  const Tensor x = input({2, 3, 7, 8, 6}, 105);
  const auto max_options =
      F::MaxPool3dFuncOptions({3, 2, 3}).stride({2, 1, 2}).padding(1).dilation({1, 2, 1}).ceil_mode(true);
  expect_same(F::max_pool3d(x, max_options),
              F::max_pool3d(x, {3, 2, 3}, {2, 1, 2}, 1, {1, 2, 1}, true), F::max_pool3d(x, {3, 2, 3}));
  const auto [values_a, indices_a] = F::max_pool3d_with_indices(x, F::MaxPool3dFuncOptions(2).stride(1));
  const auto [values_b, indices_b] = F::max_pool3d_with_indices(x, 2, 1);
  expect_same(values_a, values_b, F::max_pool3d(x, 2));
  EXPECT_TRUE(all_close(indices_a, indices_b, 0, 0));
  const auto avg_options =
      F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false).divisor_override(4);
  expect_same(F::avg_pool3d(x, avg_options), F::avg_pool3d(x, 3, 2, 1, true, false, 4), F::avg_pool3d(x, 3));
  expect_same(F::adaptive_avg_pool3d(x, F::AdaptiveAvgPool3dFuncOptions({3, 2, 4})),
              F::adaptive_avg_pool3d(x, {3, 2, 4}), F::adaptive_avg_pool3d(x, {3, 3, 4}));
}

TEST(FunctionalOptions, Pad) {
  const Tensor x = input({2, 3, 4, 5}, 35);
  expect_same(F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(kReflect)), F::pad(x, {1, 2, 2, 1}, "reflect"),
              F::pad(x, {1, 2, 2, 1}));
  expect_same(F::pad(x, F::PadFuncOptions({1, 1}).value(2.5)), F::pad(x, {1, 1}, "constant", 2.5),
              F::pad(x, {1, 1}));
  expect_same(F::pad(x, F::PadFuncOptions({1, 2, -1, 2}).mode(kCircular)), F::pad(x, {1, 2, -1, 2}, "circular"),
              F::pad(x, {1, 2, -1, 2}));
}

TEST(FunctionalOptions, Interpolate) {
  const Tensor x = input({2, 3, 4, 5}, 36);
  const Tensor by_options =
      F::interpolate(x, F::InterpolateFuncOptions().size({7, 5}).mode(kBilinear).align_corners(true));
  const Tensor by_keywords =
      F::interpolate(x, {.size = std::vector<int64_t>{7, 5}, .mode = "bilinear", .align_corners = true});
  expect_same(by_options, by_keywords, F::interpolate(x, {.size = std::vector<int64_t>{7, 5}}));
  expect_same(F::interpolate(x, F::InterpolateFuncOptions().scale_factor({1.5, 2.0}).recompute_scale_factor(true)),
              F::interpolate(x, {.scale_factor = std::vector<double>{1.5, 2.0}, .recompute_scale_factor = true}),
              F::interpolate(x, {.size = std::vector<int64_t>{6, 10}, .mode = "bilinear"}));
}

// ---- losses, embedding, dropout ----

TEST(FunctionalOptions, CrossEntropy) {
  const Tensor x = input({6, 4}, 37), w = input({4}, 38).abs();
  const Tensor t = tensor({0, 2, 1, 3, 2, 1});
  const auto options = F::CrossEntropyFuncOptions().weight(w).ignore_index(2).reduction(kSum).label_smoothing(0.1);
  expect_same(F::cross_entropy(x, t, options), F::cross_entropy(x, t, w, 2, "sum", 0.1), F::cross_entropy(x, t));
}

TEST(FunctionalOptions, NllLoss) {
  const Tensor x = F::log_softmax(input({6, 4}, 39), 1), w = input({4}, 40).abs();
  const Tensor t = tensor({0, 2, 1, 3, 2, 1});
  expect_same(F::nll_loss(x, t, F::NLLLossFuncOptions().weight(w).ignore_index(1).reduction(kNone)),
              F::nll_loss(x, t, w, 1, "none"), F::nll_loss(x, t, std::nullopt, -100, "none"));
}

TEST(FunctionalOptions, MseLoss) {
  const Tensor x = input({3, 4}, 41), y = input({3, 4}, 42);
  expect_same(F::mse_loss(x, y, F::MSELossFuncOptions(kSum)), F::mse_loss(x, y, "sum"), F::mse_loss(x, y));
  expect_same(F::mse_loss(x, y, F::MSELossFuncOptions().reduction(kSum)), F::mse_loss(x, y, "sum"),
              F::mse_loss(x, y));
}

TEST(FunctionalOptions, L1Loss) {
  const Tensor x = input({3, 4}, 43), y = input({3, 4}, 44);
  expect_same(F::l1_loss(x, y, F::L1LossFuncOptions(kSum)), F::l1_loss(x, y, "sum"), F::l1_loss(x, y));
}

TEST(FunctionalOptions, SmoothL1Loss) {
  const Tensor x = input({3, 4}, 45), y = input({3, 4}, 46);
  expect_same(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().reduction(kSum).beta(0.5)),
              F::smooth_l1_loss(x, y, "sum", 0.5), F::smooth_l1_loss(x, y));
}

TEST(FunctionalOptions, BinaryCrossEntropyWithLogits) {
  const Tensor x = input({3, 4}, 47), y = rand({3, 4}), w = input({3, 4}, 48).abs(), pw = input({4}, 49).abs();
  expect_same(F::binary_cross_entropy_with_logits(
                  x, y, F::BinaryCrossEntropyWithLogitsFuncOptions().weight(w).reduction(kSum).pos_weight(pw)),
              F::binary_cross_entropy_with_logits(x, y, w, "sum", pw), F::binary_cross_entropy_with_logits(x, y));
}

TEST(FunctionalOptions, KlDiv) {
  const Tensor x = F::log_softmax(input({3, 4}, 50), 1), y = F::log_softmax(input({3, 4}, 51), 1);
  expect_same(F::kl_div(x, y, F::KLDivFuncOptions(kBatchMean).log_target(true)),
              F::kl_div(x, y, "batchmean", true), F::kl_div(x, y));
}

TEST(FunctionalOptions, Embedding) {
  const Tensor w = input({5, 3}, 52).requires_grad_();
  const Tensor ids = tensor({0, 2, 4, 2});
  const Tensor by_options = F::embedding(ids, w, F::EmbeddingFuncOptions().padding_idx(2));
  EXPECT_TRUE(all_close(by_options, F::embedding(ids, w, 2), 0, 0));
  // padding_idx shows in the gradient only: the padding row gets none.
  by_options.sum().backward();
  EXPECT_TRUE(all_close(w.grad().select(0, 2), zeros({3}), 0, 0));
  EXPECT_TRUE(all_close(w.grad().select(0, 0), ones({3}), 0, 0));
}

TEST(FunctionalOptions, Dropout) {
  const Tensor x = input({8, 16}, 53);
  manual_seed(5);
  const Tensor by_options = F::dropout(x, F::DropoutFuncOptions().p(0.2).training(true));
  manual_seed(5);
  expect_same(by_options, F::dropout(x, 0.2, true), x);
  EXPECT_TRUE(F::dropout(x, F::DropoutFuncOptions().training(false)).is_same(x));
}

// ---- distances ----

TEST(FunctionalOptions, CosineSimilarity) {
  const Tensor a = input({3, 4}, 56), b = input({3, 4}, 57);
  expect_same(F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(0).eps(1e-3)),
              F::cosine_similarity(a, b, 0, 1e-3), F::cosine_similarity(a, b));
}

TEST(FunctionalOptions, PairwiseDistance) {
  const Tensor a = input({3, 4}, 58), b = input({3, 4}, 59);
  expect_same(F::pairwise_distance(a, b, F::PairwiseDistanceFuncOptions().p(1).eps(1e-3).keepdim(true)),
              F::pairwise_distance(a, b, 1, 1e-3, true), F::pairwise_distance(a, b, 2, 1e-6, true));
}

// ---- positional calls the options overloads leave alone ----

TEST(FunctionalOptions, BracedPositionalCallsStillBind) {
  const Tensor x = input({1, 2, 6, 6}, 54), w = input({3, 2, 3, 3}, 55);
  EXPECT_EQ(F::max_pool2d(x, {2}).sizes(), IntArrayRef({1, 2, 3, 3}));
  EXPECT_EQ(F::max_pool2d(x, 2).sizes(), IntArrayRef({1, 2, 3, 3}));
  EXPECT_EQ(F::adaptive_avg_pool2d(x, {1}).sizes(), IntArrayRef({1, 2, 1, 1}));
  EXPECT_EQ(F::avg_pool2d(x, {3}).sizes(), IntArrayRef({1, 2, 2, 2}));
  EXPECT_EQ(F::conv2d(x, w, {}).sizes(), IntArrayRef({1, 3, 4, 4}));
  EXPECT_EQ(F::layer_norm(x, {6}).sizes(), x.sizes());
  EXPECT_EQ(F::softmax(x, 1).sizes(), x.sizes());
  EXPECT_EQ(F::pad(x, {1, 1}).sizes(), IntArrayRef({1, 2, 6, 8}));
}

// F::dropout takes its probability and flag by their types only.
template <class... Args>
concept DropoutCall = requires(Args... args) { F::dropout(args...); };
static_assert(DropoutCall<Tensor, double, bool>);
static_assert(!DropoutCall<Tensor, bool>);         // F::dropout(x, training)
static_assert(!DropoutCall<Tensor, double, double>);  // a number as the flag
static_assert(!DropoutCall<Tensor, int>);

}  // namespace
}  // namespace ember::testing
