// MultiheadAttention and the transformer encoder (ember/nn/modules/attention.h,
// transformer.h): PyTorch's parameter names, agreement with an explicit
// per-head softmax(q k^T / sqrt(d)) v, masks, both computation paths, the
// encoder layer against its own composition, gradients.
//   NnMultiheadAttention.*  the attention layer
//   NnTransformer.*         TransformerEncoderLayer, TransformerEncoder
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ember/autograd.h"
#include "ember/gradcheck.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/transformer.h"
#include "tests/module_grad_check.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor seeded(IntArrayRef sizes, uint64_t seed, double scale = 1.0) {
  Generator g(seed);
  return randn(sizes, kFloat32, &g) * scale;
}

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}

std::vector<std::string> keys(const TensorDict& d) {
  std::vector<std::string> out;
  for (const auto& [k, v] : d) out.push_back(k);
  return out;
}

// Adds noise to every parameter (the biases start at zero).
void perturb(nn::Module& m, uint64_t seed) {
  NoGradGuard no_grad;
  for (auto& [name, p] : m.named_parameters()) p.add_(seeded(p.sizes(), seed++, 0.2));
}

// The attention written out head by head, slicing each head's rows of the
// projections: out (N, L, E) and probabilities (N, H, L, S). Inputs batch
// first; `blocked` (bool, broadcastable to (N, H, L, S), true = masked) optional.
std::pair<Tensor, Tensor> reference(const nn::MultiheadAttentionImpl& m, const Tensor& q_in, const Tensor& k_in,
                                    const Tensor& v_in, const Tensor& blocked = {}) {
  const int64_t e = m.options.embed_dim(), heads = m.options.num_heads(), d = e / heads;
  const Tensor w = m.in_proj_weight.detach(), b = m.in_proj_bias.detach();
  TensorList outs, probs;
  for (int64_t h = 0; h < heads; ++h) {
    auto project = [&](const Tensor& x, int64_t which) {
      const int64_t row = which * e + h * d;
      return x.matmul(w.narrow(0, row, d).t()) + b.narrow(0, row, d);
    };
    const Tensor q = project(q_in, 0), k = project(k_in, 1), v = project(v_in, 2);
    Tensor scores = q.matmul(k.transpose(1, 2)) / std::sqrt(static_cast<double>(d));  // (N, L, S)
    if (blocked.defined()) scores = scores.masked_fill(blocked.select(1, blocked.size(1) == 1 ? 0 : h), -kInf);
    const Tensor p = scores.softmax(-1);
    outs.push_back(p.matmul(v));
    probs.push_back(p);
  }
  const Tensor out = cat(outs, -1).matmul(m.out_proj->weight.detach().t()) + m.out_proj->bias.detach();
  return {out, stack(probs, 1)};
}

nn::MultiheadAttention make_mha(int64_t e, int64_t heads, bool batch_first, uint64_t seed) {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(e, heads).batch_first(batch_first));
  perturb(*mha, seed);
  return mha;
}

// ---- MultiheadAttention ----

TEST(NnMultiheadAttention, ParametersAreNamedAndShapedAsPyTorch) {
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(names(mha->named_parameters()),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(mha->in_proj_weight.sizes(), IntArrayRef({24, 8}));
  EXPECT_EQ(mha->in_proj_bias.sizes(), IntArrayRef({24}));
  EXPECT_EQ(mha->out_proj->weight.sizes(), IntArrayRef({8, 8}));
  EXPECT_TRUE(all_close(mha->in_proj_bias, zeros({24}), 0, 0));
  EXPECT_TRUE(all_close(mha->out_proj->bias, zeros({8}), 0, 0));
  // xavier_uniform_: bound sqrt(6 / (fan_in + fan_out)) = sqrt(6 / 32).
  EXPECT_LE(mha->in_proj_weight.abs().max().item<double>(), std::sqrt(6.0 / 32.0));
  EXPECT_GT(mha->in_proj_weight.abs().max().item<double>(), 0.9 * std::sqrt(6.0 / 32.0));

  nn::MultiheadAttention no_bias(nn::MultiheadAttentionOptions(8, 2).bias(false));
  EXPECT_EQ(keys(no_bias->state_dict()), (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
}

TEST(NnMultiheadAttention, MatchesAnExplicitSoftmaxPerHead) {
  nn::MultiheadAttention mha = make_mha(8, 2, true, 1);
  const Tensor q = seeded({2, 5, 8}, 10), k = seeded({2, 6, 8}, 11), v = seeded({2, 6, 8}, 12);
  const auto [want, want_probs] = reference(*mha, q, k, v);

  const auto [out, weights] = mha(q, k, v, Tensor(), true, Tensor(), /*average_attn_weights=*/false);
  EXPECT_TRUE(all_close(out, want, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(weights, want_probs, 1e-5, 1e-6));
  const auto [out_avg, averaged] = mha(q, k, v);
  EXPECT_TRUE(all_close(averaged, want_probs.mean({1}), 1e-5, 1e-6));
  EXPECT_EQ(averaged.sizes(), IntArrayRef({2, 5, 6}));
  // Without weights: the fused kernel, same output.
  const auto [fused, none] = mha(q, k, v, Tensor(), /*need_weights=*/false);
  EXPECT_FALSE(none.defined());
  EXPECT_TRUE(all_close(fused, want, 1e-5, 1e-6));
}

TEST(NnMultiheadAttention, SequenceFirstSelfAttention) {
  nn::MultiheadAttention mha = make_mha(12, 3, false, 2);
  const Tensor x = seeded({7, 2, 12}, 13);  // (L, N, E)
  const Tensor xb = x.transpose(0, 1);
  const auto [want, probs] = reference(*mha, xb, xb, xb);
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    const auto [out, w] = mha(x, x, x, Tensor(), need_weights);
    EXPECT_EQ(out.sizes(), IntArrayRef({7, 2, 12}));
    EXPECT_TRUE(all_close(out, want.transpose(0, 1), 1e-5, 1e-6));
  }
}

TEST(NnMultiheadAttention, CausalMaskThreeWays) {
  nn::MultiheadAttention mha = make_mha(8, 4, true, 3);
  const Tensor x = seeded({2, 6, 8}, 14);
  const Tensor future = ones({6, 6}, kBool).triu(1);
  const auto [want, probs] = reference(*mha, x, x, x, future.reshape({1, 1, 6, 6}));
  const Tensor additive = zeros({6, 6}).masked_fill(future, -kInf);
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    const auto [by_flag, w] = mha(x, x, x, Tensor(), need_weights, Tensor(), true, /*is_causal=*/true);
    EXPECT_TRUE(all_close(by_flag, want, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(std::get<0>(mha(x, x, x, Tensor(), need_weights, future)), want, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(std::get<0>(mha(x, x, x, Tensor(), need_weights, additive)), want, 1e-5, 1e-6));
    if (need_weights) {
      EXPECT_TRUE(all_close(w, probs.mean({1}), 1e-5, 1e-6));
      EXPECT_EQ(w.masked_fill(future.logical_not(), 0).abs().sum().item<double>(), 0.0);
    }
  }
}

TEST(NnMultiheadAttention, KeyPaddingMaskIgnoresThePaddedKeys) {
  nn::MultiheadAttention mha = make_mha(8, 2, true, 4);
  const Tensor q = seeded({2, 3, 8}, 15), kv = seeded({2, 6, 8}, 16);
  Tensor padding = zeros({2, 6}, kBool);
  padding.index_put_({0, Slice(4, None)}, true);  // sample 0 has 4 real keys, sample 1 all 6
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    const auto [out, w] = mha(q, kv, kv, padding, need_weights);
    // Sample 0 equals attention over its 4 real keys only.
    const Tensor k0 = kv.narrow(0, 0, 1).narrow(1, 0, 4);
    EXPECT_TRUE(all_close(out.narrow(0, 0, 1), std::get<0>(mha(q.narrow(0, 0, 1), k0, k0)), 1e-5, 1e-6));
    EXPECT_TRUE(all_close(out.narrow(0, 1, 1),
                          std::get<0>(mha(q.narrow(0, 1, 1), kv.narrow(0, 1, 1), kv.narrow(0, 1, 1))), 1e-5, 1e-6));
    if (need_weights) {
      EXPECT_EQ(w[0].narrow(1, 4, 2).abs().sum().item<double>(), 0.0);
    }
    // A float mask (-inf on the padded keys) is the same.
    const Tensor additive = zeros({2, 6}).masked_fill(padding, -kInf);
    EXPECT_TRUE(all_close(std::get<0>(mha(q, kv, kv, additive, need_weights)), out, 1e-5, 1e-6));
  }
  // With a causal self-attention mask as well: the masks combine.
  const Tensor x = kv;
  const Tensor blocked = padding.reshape({2, 1, 1, 6}).logical_or(ones({6, 6}, kBool).triu(1));
  const auto [want, probs] = reference(*mha, x, x, x, blocked);
  for (bool need_weights : {true, false})
    EXPECT_TRUE(all_close(std::get<0>(mha(x, x, x, padding, need_weights, Tensor(), true, true)), want, 1e-5, 1e-6));
}

TEST(NnMultiheadAttention, PerSampleAndHeadMask) {
  nn::MultiheadAttention mha = make_mha(8, 2, true, 5);
  const Tensor q = seeded({3, 4, 8}, 17), kv = seeded({3, 5, 8}, 18);
  Tensor blocked = seeded({6, 4, 5}, 19).gt(0.3);    // (N * H, L, S)
  blocked.index_put_({Slice(), Slice(), 0}, false);  // every query keeps key 0
  const auto [want, probs] = reference(*mha, q, kv, kv, blocked.reshape({3, 2, 4, 5}));
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    const auto [out, w] = mha(q, kv, kv, Tensor(), need_weights, blocked, false);
    EXPECT_TRUE(all_close(out, want, 1e-5, 1e-6));
    if (need_weights) {
      EXPECT_TRUE(all_close(w, probs, 1e-5, 1e-6));
    }
  }
}

TEST(NnMultiheadAttention, UnbatchedInputs) {
  nn::MultiheadAttention mha = make_mha(8, 2, false, 6);
  const Tensor q = seeded({4, 8}, 20), kv = seeded({5, 8}, 21);
  const Tensor padding = tensor({false, false, true, false, true});
  const auto [out, w] = mha(q, kv, kv, padding);
  const auto [batched, wb] = mha(q.unsqueeze(1), kv.unsqueeze(1), kv.unsqueeze(1), padding.unsqueeze(0));
  EXPECT_EQ(out.sizes(), IntArrayRef({4, 8}));
  EXPECT_EQ(w.sizes(), IntArrayRef({4, 5}));
  EXPECT_TRUE(all_close(out, batched.squeeze(1), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(w, wb.squeeze(0), 1e-6, 1e-6));
}

TEST(NnMultiheadAttention, DropoutOnlyInTraining) {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).dropout(0.5).batch_first(true));
  const Tensor x = seeded({2, 16, 8}, 22);
  mha->eval();
  const auto [eval_out, eval_w] = mha(x, x, x);
  EXPECT_TRUE(all_close(eval_w.sum({-1}), ones({2, 16}), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<0>(mha(x, x, x, Tensor(), false)), eval_out, 1e-5, 1e-6));
  mha->train();
  manual_seed(7);
  const auto [train_out, train_w] = mha(x, x, x, Tensor(), true, Tensor(), false);
  // Half the probabilities are dropped, the rest doubled.
  const double zero_fraction = train_w.eq(0).to(kFloat32).mean().item<double>();
  EXPECT_GT(zero_fraction, 0.4);
  EXPECT_LT(zero_fraction, 0.6);
  EXPECT_FALSE(all_close(train_out, eval_out, 1e-3, 1e-3));
  // The fused kernel has no dropout: without weights, training takes the explicit path too.
  manual_seed(7);
  EXPECT_TRUE(all_close(std::get<0>(mha(x, x, x, Tensor(), false)), train_out, 1e-6, 1e-6));
}

TEST(NnMultiheadAttention, BadArgumentsNameTheLayer) {
  EXPECT_EMBER_ERROR(nn::MultiheadAttention(10, 3), "MultiheadAttention", "divisible by num_heads");
  EXPECT_EMBER_ERROR(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).dropout(1.0)), "MultiheadAttention",
                     "dropout");
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).batch_first(true));
  const Tensor x = seeded({2, 5, 8}, 23);
  EXPECT_EMBER_ERROR(mha(seeded({2, 5, 6}, 23), x, x), "MultiheadAttention", "embed_dim (8)");
  EXPECT_EMBER_ERROR(mha(x, seeded({5, 8}, 23), x), "MultiheadAttention", "same number of dims");
  EXPECT_EMBER_ERROR(mha(x, seeded({3, 5, 8}, 23), seeded({3, 5, 8}, 23)), "MultiheadAttention", "batch size");
  EXPECT_EMBER_ERROR(mha(x, x, x, zeros({2, 4}, kBool)), "MultiheadAttention", "key_padding_mask", "[2, 5]");
  EXPECT_EMBER_ERROR(mha(x, x, x, Tensor(), true, zeros({5, 4}, kBool)), "MultiheadAttention", "attn_mask");
  EXPECT_EMBER_ERROR(mha(x, x, x, zeros({2, 5}, kInt64)), "MultiheadAttention", "bool or floating");
}

TEST(NnMultiheadAttention, GradientsReachEveryParameter) {
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    nn::MultiheadAttention mha = make_mha(8, 2, true, 8);
    mha->to(kFloat64);
    const Tensor q = seeded({2, 3, 8}, 24).to(kFloat64), kv = seeded({2, 4, 8}, 25).to(kFloat64);
    const Tensor cot = seeded({2, 3, 8}, 26).to(kFloat64);
    auto loss = [&] { return (std::get<0>(mha(q, kv, kv, Tensor(), need_weights, Tensor(), true, false)) * cot).sum(); };
    expect_parameter_grads_match_finite_differences(*mha, loss);
  }
}

TEST(NnMultiheadAttention, GradcheckInFloat64) {
  for (bool need_weights : {true, false}) {
    SCOPED_TRACE(need_weights);
    nn::MultiheadAttention mha = make_mha(4, 2, true, 9);
    mha->to(kFloat64);
    const Tensor q = seeded({2, 3, 4}, 27).to(kFloat64).requires_grad_();
    const Tensor kv = seeded({2, 3, 4}, 28).to(kFloat64).requires_grad_();
    const Tensor padding = tensor({false, false, false, false, false, true}).reshape({2, 3});
    auto fn = [&](const TensorList& in) {
      const auto [out, w] = mha(in[0], in[1], in[1], padding, need_weights);
      return need_weights ? TensorList{out, w} : TensorList{out};
    };
    // The projection weight is an input too: gradcheck moves the module's own tensor.
    const autograd::GradcheckResult r = autograd::gradcheck(fn, {q, kv, mha->in_proj_weight});
    EXPECT_TRUE(r) << r.report;
  }
}

// ---- TransformerEncoderLayer, TransformerEncoder ----

const std::vector<std::string> kEncoderLayerKeys = {"linear1.bias",
                                                    "linear1.weight",
                                                    "linear2.bias",
                                                    "linear2.weight",
                                                    "norm1.bias",
                                                    "norm1.weight",
                                                    "norm2.bias",
                                                    "norm2.weight",
                                                    "self_attn.in_proj_bias",
                                                    "self_attn.in_proj_weight",
                                                    "self_attn.out_proj.bias",
                                                    "self_attn.out_proj.weight"};

nn::TransformerEncoderLayer make_layer(bool norm_first, const char* activation, bool batch_first, double dropout,
                                       uint64_t seed) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(16, 4)
                                        .dim_feedforward(32)
                                        .dropout(dropout)
                                        .activation(activation)
                                        .batch_first(batch_first)
                                        .norm_first(norm_first));
  perturb(*layer, seed);
  return layer;
}

TEST(NnTransformer, EncoderLayerStateIsNamedAsPyTorch) {
  nn::TransformerEncoderLayer layer(16, 4);
  EXPECT_EQ(keys(layer->state_dict()), kEncoderLayerKeys);
  std::vector<std::string> children;
  for (const auto& [name, child] : layer->named_children()) children.push_back(name);
  EXPECT_EQ(children, (std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                                                "dropout1", "dropout2"}));
  EXPECT_EQ(layer->linear1->weight.sizes(), IntArrayRef({2048, 16}));  // dim_feedforward defaults to 2048
  EXPECT_EQ(layer->dropout->options.p(), 0.1);
}

TEST(NnTransformer, PostNormIsItsComposition) {
  nn::TransformerEncoderLayer layer = make_layer(false, "relu", true, 0.1, 1);
  layer->eval();
  const Tensor x = seeded({3, 5, 16}, 30);
  Tensor padding = zeros({3, 5}, kBool);
  padding.index_put_({1, Slice(3, None)}, true);
  const Tensor attended = std::get<0>(layer->self_attn(x, x, x, padding, false));
  const Tensor h = layer->norm1(x + attended);
  const Tensor want = layer->norm2(h + layer->linear2(layer->linear1(h).relu()));
  EXPECT_TRUE(all_close(layer(x, Tensor(), padding), want, 1e-5, 1e-5));
}

TEST(NnTransformer, PreNormIsItsComposition) {
  nn::TransformerEncoderLayer layer = make_layer(true, "gelu", true, 0.1, 2);
  layer->eval();
  const Tensor x = seeded({2, 6, 16}, 31);
  const Tensor n1 = layer->norm1(x);
  const Tensor h = x + std::get<0>(layer->self_attn(n1, n1, n1, Tensor(), false, Tensor(), true, true));
  const Tensor want = h + layer->linear2(layer->linear1(layer->norm2(h)).gelu());
  EXPECT_TRUE(all_close(layer(x, Tensor(), Tensor(), /*is_causal=*/true), want, 1e-5, 1e-5));
}

TEST(NnTransformer, DropoutOnlyInTrainingAndLayoutsAgree) {
  nn::TransformerEncoderLayer no_dropout = make_layer(false, "relu", true, 0.0, 3);
  const Tensor x = seeded({2, 4, 16}, 32);
  const Tensor train_out = no_dropout(x);
  no_dropout->eval();
  EXPECT_TRUE(all_close(no_dropout(x), train_out, 1e-6, 1e-6));
  // Sequence first: the same layer weights give the transposed result.
  nn::TransformerEncoderLayer seq_first = make_layer(false, "relu", false, 0.0, 3);
  seq_first->load_state_dict(no_dropout->state_dict());
  seq_first->eval();
  EXPECT_TRUE(all_close(seq_first(x.transpose(0, 1)), train_out.transpose(0, 1), 1e-5, 1e-6));
  nn::TransformerEncoderLayer with_dropout = make_layer(false, "relu", true, 0.5, 3);
  with_dropout->load_state_dict(no_dropout->state_dict());
  EXPECT_FALSE(all_close(with_dropout(x), train_out, 1e-3, 1e-3));
  with_dropout->eval();
  EXPECT_TRUE(all_close(with_dropout(x), train_out, 1e-6, 1e-6));
}

TEST(NnTransformer, EncoderStacksCopiesOfTheLayer) {
  nn::TransformerEncoderLayer layer = make_layer(true, "relu", true, 0.1, 4);
  nn::LayerNorm final_norm(nn::LayerNormOptions({16}));
  perturb(*final_norm, 9);
  nn::TransformerEncoder encoder(layer, 2, final_norm);
  const TensorDict state = encoder->state_dict();
  EXPECT_EQ(state.size(), 2 * kEncoderLayerKeys.size() + 2);
  for (const std::string& key : kEncoderLayerKeys) {
    ASSERT_TRUE(state.count("layers.0." + key)) << key;
    ASSERT_TRUE(state.count("layers.1." + key)) << key;
    // Each layer starts as the prototype, in tensors of its own.
    EXPECT_TRUE(all_close(state.at("layers.1." + key), layer->state_dict().at(key), 0, 0)) << key;
    EXPECT_NE(state.at("layers.1." + key).data_ptr(), layer->state_dict().at(key).data_ptr()) << key;
  }
  EXPECT_TRUE(state.count("norm.weight") && state.count("norm.bias"));
  encoder->eval();
  layer->eval();
  const Tensor x = seeded({2, 5, 16}, 33);
  EXPECT_TRUE(all_close(encoder(x), final_norm(layer(layer(x))), 1e-5, 1e-5));
  EXPECT_EQ(nn::TransformerEncoder(layer, 3)->state_dict().size(), 3 * kEncoderLayerKeys.size());
}

TEST(NnTransformer, GradientsReachEveryParameter) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first);
    nn::TransformerEncoderLayer layer = make_layer(norm_first, norm_first ? "gelu" : "relu", false, 0.1, 5);
    layer->to(kFloat64);
    const Tensor x = seeded({4, 2, 16}, 34).to(kFloat64), cot = seeded({4, 2, 16}, 35).to(kFloat64);
    expect_parameter_grads_match_finite_differences(*layer, [&] { return (layer(x) * cot).sum(); });
  }
}

TEST(NnTransformer, GradcheckInFloat64) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first);
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).batch_first(true).norm_first(norm_first));
    perturb(*layer, 6);
    layer->to(kFloat64);
    layer->eval();
    const Tensor x = seeded({2, 3, 8}, 36).to(kFloat64).requires_grad_();
    auto fn = [&](const TensorList& in) { return TensorList{layer(in[0], Tensor(), Tensor(), true)}; };
    const autograd::GradcheckResult r = autograd::gradcheck(fn, {x, layer->linear1->weight, layer->norm2->weight});
    EXPECT_TRUE(r) << r.report;
  }
}

TEST(NnTransformer, BadArguments) {
  EXPECT_EMBER_ERROR(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(16, 4).activation("tanh")),
                     "TransformerEncoderLayer", "relu", "tanh");
  EXPECT_EMBER_ERROR(nn::TransformerEncoderLayer(18, 4), "MultiheadAttention", "divisible");
  EXPECT_EMBER_ERROR(nn::TransformerEncoder(nn::TransformerEncoderLayer(16, 4), 0), "TransformerEncoder", "num_layers");
}

}  // namespace
}  // namespace ember::testing
