// Golden gradients: ember's backward against PyTorch's, for small losses.
//
// tests/golden/autograd/gradients.safetensors (written by
// tools/golden/make_golden.py; the convention is in tools/golden/README.md,
// "Gradients") holds, per case NAME, the inputs NAME.inK, torch's loss
// NAME.out0 and its gradients NAME.gradK. The metadata names the loss
// ("expr"), the inputs that get gradients ("grads") and the tolerance. Each
// case is one test (GoldenAutograd/GoldenGradient.MatchesTorch/mlp_mse) that
// computes the loss with ember's ops (the table below), runs backward, and
// compares the loss and every gradient: shape, dtype and values.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember {
namespace {

using nlohmann::json;
using ember::testing::all_close;

// log(softmax(z)) along dim 1 from primitives: shifted - log(sum(exp(shifted))),
// shifted = z - (row max). The max cancels in the value, so its gradient must too.
Tensor log_softmax_rows(const Tensor& z) {
  const Tensor shifted = z - z.amax({1}, true);
  return shifted - shifted.exp().sum({1}, true).log();
}

// The losses by "expr", written with ember's ops; torch computes each its own way.
const std::map<std::string, std::function<Tensor(const TensorList&)>>& losses() {
  static const std::map<std::string, std::function<Tensor(const TensorList&)>> table = {
      // x, w1, b1, w2, b2, target
      {"mlp_mse",
       [](const TensorList& in) {
         const Tensor hidden = linear(in[0], in[1], in[2]).relu();
         return (linear(hidden, in[3], in[4]) - in[5]).pow(2).mean();
       }},
      // logits, one-hot targets: picks log p(label) by multiplying with the one-hot rows.
      {"softmax_cross_entropy_onehot",
       [](const TensorList& in) { return -(in[1] * log_softmax_rows(in[0])).sum() / in[0].size(0); }},
      // logits, int64 labels: picks log p(label) with advanced indexing.
      {"softmax_cross_entropy_index",
       [](const TensorList& in) { return -log_softmax_rows(in[0]).index({arange(in[0].size(0)), in[1]}).mean(); }},
      // a [3,1,4], b [5,1], c [4], d [3,5,4]
      {"broadcast_expression",
       [](const TensorList& in) { return ((in[0] * in[1] + in[2].exp()) / (1 + in[3].abs())).sum(); }},
  };
  return table;
}

const std::string& gradients_path() {
  static const std::string path = std::string(EMBER_TEST_DATA_DIR) + "/autograd/gradients.safetensors";
  return path;
}

const SafetensorsFile& gradients_file() {
  static const SafetensorsFile file = load_safetensors(gradients_path());
  return file;
}

// The case names, read when the tests are registered; a file that cannot be
// read gives one case that fails with the reason.
std::vector<std::string> case_names() {
  std::vector<std::string> names;
  try {
    for (const auto& [name, spec] : gradients_file().metadata) names.push_back(name);
  } catch (const std::exception&) {
    return {"unreadable"};
  }
  if (names.empty()) return {"no_cases"};
  return names;
}

class GoldenGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenGradient, MatchesTorch) {
  const std::string& name = GetParam();
  const SafetensorsFile* file = nullptr;
  try {
    file = &gradients_file();
  } catch (const std::exception& e) {
    FAIL() << gradients_path() << ": " << e.what();
  }
  ASSERT_TRUE(file->metadata.count(name)) << gradients_path() << " has no cases";
  const json spec = json::parse(file->metadata.at(name));
  const std::string expr = spec.at("expr").get<std::string>();
  const std::vector<size_t> grads = spec.at("grads").get<std::vector<size_t>>();
  const double rtol = spec.at("rtol").get<double>(), atol = spec.at("atol").get<double>();

  auto tensor = [&](const std::string& key) {
    auto it = file->tensors.find(name + "." + key);
    return it == file->tensors.end() ? Tensor() : it->second;
  };
  TensorList inputs;
  for (size_t k = 0; tensor("in" + std::to_string(k)).defined(); ++k)
    inputs.push_back(tensor("in" + std::to_string(k)).clone());
  const Tensor expected_loss = tensor("out0");
  ASSERT_TRUE(expected_loss.defined()) << "case " << name << " has no " << name << ".out0";

  auto loss_fn = losses().find(expr);
  ASSERT_NE(loss_fn, losses().end()) << "expr '" << expr << "' is not in golden_autograd.cpp's table";
  TensorList wrt;
  for (size_t k : grads) {
    ASSERT_LT(k, inputs.size()) << "grads names input " << k;
    wrt.push_back(inputs[k].requires_grad_());
  }
  const Tensor loss = loss_fn->second(inputs);
  EXPECT_EQ(loss.dtype(), expected_loss.dtype());
  EXPECT_TRUE(all_close(loss, expected_loss, rtol, atol)) << "loss " << loss << ", torch " << expected_loss;

  const TensorList actual = autograd::grad({loss}, wrt);
  ASSERT_EQ(actual.size(), grads.size());
  for (size_t j = 0; j < grads.size(); ++j) {
    SCOPED_TRACE("gradient w.r.t. input " + std::to_string(grads[j]));
    const Tensor expected = tensor("grad" + std::to_string(grads[j]));
    ASSERT_TRUE(expected.defined()) << "no " << name << ".grad" << grads[j];
    ASSERT_TRUE(actual[j].defined());
    ASSERT_EQ(actual[j].sizes(), expected.sizes());
    EXPECT_EQ(actual[j].dtype(), expected.dtype());
    EXPECT_TRUE(all_close(actual[j], expected, rtol, atol)) << "\n  ember " << actual[j] << "\n  torch " << expected;
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenAutograd, GoldenGradient, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ember
