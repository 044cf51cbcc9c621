// Golden tests of the nn layers: each case of tests/golden/modules/layers.safetensors
// (written by tools/golden/make_layers_golden.py, which documents the format)
// is a seeded PyTorch module. The test builds the same ember layer from the
// case's options, loads PyTorch's state_dict into it, and compares the
// outputs, the gradients of sum(out * cot) with respect to the inputs and
// every parameter, and (BatchNorm) the state after a training step and an
// evaluation call after it.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/norm.h"
#include "ember/nn/modules/transformer.h"
#include "tests/golden_compare.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
using nlohmann::json;

const SafetensorsFile& layers_file() {
  static const SafetensorsFile file =
      load_safetensors(std::string(EMBER_TEST_DATA_DIR) + "/modules/layers.safetensors");
  return file;
}

// The tensors "NAME.KIND.rest" of a case, keyed by "rest".
TensorDict group(const std::string& name, const std::string& kind) {
  const std::string prefix = name + "." + kind + ".";
  TensorDict out;
  for (const auto& [key, t] : layers_file().tensors)
    if (key.compare(0, prefix.size(), prefix) == 0) out.emplace(key.substr(prefix.size()), t);
  return out;
}

// An ember layer and how the case calls it (named inputs -> outputs).
struct Layer {
  std::shared_ptr<nn::Module> module;
  std::function<TensorList(const TensorDict&)> run;
};

template <class Holder, class Call>
Layer layer(Holder holder, Call call) {
  return {holder.ptr(), [holder, call](const TensorDict& in) { return call(holder, in); }};
}

Tensor input_or_none(const TensorDict& in, const char* name) { return in.count(name) ? in.at(name) : Tensor(); }

// Builds the layer named `module` from PyTorch's constructor arguments.
Layer build(const std::string& module, const json& o) {
  if (module == "Conv2d") {
    nn::Conv2dOptions opts(int_arg(o, "in_channels", 0), int_arg(o, "out_channels", 0), ints_arg(o, "kernel_size", {}));
    opts.stride(ints_arg(o, "stride", {1}))
        .dilation(ints_arg(o, "dilation", {1}))
        .groups(int_arg(o, "groups", 1))
        .bias(bool_arg(o, "bias", true))
        .padding_mode(str_arg(o, "padding_mode", "zeros"));
    if (o.contains("padding") && o.at("padding").is_string()) {
      opts.padding(std::string_view(o.at("padding").get_ref<const std::string&>()));
    } else {
      const std::vector<int64_t> padding = ints_arg(o, "padding", {0});
      opts.padding(IntArrayRef(padding));
    }
    return layer(nn::Conv2d(opts),
                 [](const nn::Conv2d& m, const TensorDict& in) { return TensorList{m(in.at("input"))}; });
  }
  if (module == "BatchNorm2d") {
    return layer(nn::BatchNorm2d(int_arg(o, "num_features", 0)),
                 [](const nn::BatchNorm2d& m, const TensorDict& in) { return TensorList{m(in.at("input"))}; });
  }
  if (module == "LayerNorm") {
    return layer(
        nn::LayerNorm(nn::LayerNormOptions(ints_arg(o, "normalized_shape", {})).eps(float_arg(o, "eps", 1e-5))),
        [](const nn::LayerNorm& m, const TensorDict& in) { return TensorList{m(in.at("input"))}; });
  }
  if (module == "MultiheadAttention") {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(int_arg(o, "embed_dim", 0), int_arg(o, "num_heads", 0))
                                   .batch_first(bool_arg(o, "batch_first", false)));
    return layer(mha, [](const nn::MultiheadAttention& m, const TensorDict& in) {
      if (in.count("x")) {  // self-attention, no weights
        const Tensor& x = in.at("x");
        return TensorList{std::get<0>(m(x, x, x, Tensor(), false, input_or_none(in, "attn_mask")))};
      }
      const auto [out, weights] =
          m(in.at("query"), in.at("key"), in.at("value"), input_or_none(in, "key_padding_mask"), true);
      return TensorList{out, weights};
    });
  }
  if (module == "TransformerEncoderLayer") {
    nn::TransformerEncoderLayer enc(nn::TransformerEncoderLayerOptions(int_arg(o, "d_model", 0), int_arg(o, "nhead", 0))
                                        .dim_feedforward(int_arg(o, "dim_feedforward", 2048))
                                        .dropout(float_arg(o, "dropout", 0.1))
                                        .activation(str_arg(o, "activation", "relu"))
                                        .batch_first(bool_arg(o, "batch_first", false))
                                        .norm_first(bool_arg(o, "norm_first", false)));
    return layer(enc, [](const nn::TransformerEncoderLayer& m, const TensorDict& in) {
      return TensorList{m(in.at("src"), Tensor(), input_or_none(in, "src_key_padding_mask"))};
    });
  }
  if (module == "Embedding") {
    nn::EmbeddingOptions opts(int_arg(o, "num_embeddings", 0), int_arg(o, "embedding_dim", 0));
    if (o.contains("padding_idx")) opts.padding_idx(int_arg(o, "padding_idx", 0));
    return layer(nn::Embedding(opts),
                 [](const nn::Embedding& m, const TensorDict& in) { return TensorList{m(in.at("input"))}; });
  }
  throw std::logic_error("golden_nn_layers: no builder for module " + module);
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  try {
    for (const auto& [name, spec] : layers_file().metadata) names.push_back(name);
  } catch (const std::exception& e) {
    names.push_back("unreadable");  // the test reports why
  }
  return names;
}

class GoldenNnLayers : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenNnLayers, MatchesTorch) {
  const std::string& name = GetParam();
  const SafetensorsFile& file = layers_file();
  ASSERT_TRUE(file.metadata.count(name)) << "no case " << name;
  const json spec = json::parse(file.metadata.at(name));
  const double rtol = spec.at("rtol"), atol = spec.at("atol");
  const double grad_rtol = spec.at("grad_rtol"), grad_atol = spec.at("grad_atol");
  const bool train = spec.at("train");
  const std::string what = spec.at("module").get<std::string>() + " " + spec.at("options").dump();

  Layer l = build(spec.at("module").get<std::string>(), spec.at("options"));
  l.module->load_state_dict(group(name, "state"));
  l.module->train(train);

  TensorDict inputs;
  TensorList wrt;  // floating inputs, then every parameter
  std::vector<std::string> wrt_names;
  for (const auto& [arg, t] : group(name, "in")) {
    Tensor c = t.clone();
    if (c.is_floating_point()) {
      c.requires_grad_();
      wrt.push_back(c);
      wrt_names.push_back("grad_in." + arg);
    }
    inputs.emplace(arg, c);
  }
  for (const auto& [key, p] : l.module->named_parameters()) {
    wrt.push_back(p);
    wrt_names.push_back("grad_param." + key);
  }

  const TensorList outs = l.run(inputs);
  const TensorDict expected = group(name, "out"), cotangents = group(name, "cot");
  ASSERT_EQ(outs.size(), expected.size()) << what;
  Tensor loss;
  for (size_t k = 0; k < outs.size(); ++k) {
    SCOPED_TRACE("out." + std::to_string(k));
    const std::string key = std::to_string(k);
    ASSERT_EQ(outs[k].sizes(), expected.at(key).sizes()) << what;
    EXPECT_TRUE(values_match(outs[k].detach(), expected.at(key), rtol, atol)) << what;
    const Tensor term = (outs[k] * cotangents.at(key)).sum();
    loss = loss.defined() ? loss + term : term;
  }

  const TensorList grads = autograd::grad({loss}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
  for (size_t i = 0; i < wrt.size(); ++i) {
    SCOPED_TRACE(wrt_names[i]);
    auto it = file.tensors.find(name + "." + wrt_names[i]);
    ASSERT_NE(it, file.tensors.end()) << "torch has no " << wrt_names[i];
    const Tensor got = grads[i].defined() ? grads[i] : zeros_like(it->second);
    ASSERT_EQ(got.sizes(), it->second.sizes());
    EXPECT_TRUE(values_match(got, it->second, grad_rtol, grad_atol)) << what;
  }

  if (train) {  // the state after the step (BatchNorm's running statistics, num_batches_tracked)
    const TensorDict after = group(name, "after"), state = l.module->state_dict();
    ASSERT_EQ(after.size(), state.size());
    for (const auto& [key, want] : after) {
      SCOPED_TRACE("after." + key);
      ASSERT_TRUE(state.count(key));
      EXPECT_EQ(state.at(key).dtype(), want.dtype());
      EXPECT_TRUE(values_match(state.at(key).detach(), want, rtol, atol));
    }
  }
  const TensorDict eval_in = group(name, "eval_in");
  if (!eval_in.empty()) {  // then an evaluation call, with the updated statistics
    l.module->eval();
    const TensorList out = l.run(eval_in);
    EXPECT_TRUE(values_match(out.at(0).detach(), group(name, "eval_out").at("0"), rtol, atol)) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenNnLayers, GoldenNnLayers, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ember::testing
