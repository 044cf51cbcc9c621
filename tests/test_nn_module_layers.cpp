// The containers and the simple layers: Sequential, ModuleList, ModuleDict,
// Linear, Flatten, Unflatten, Dropout, the activations and the loss modules.
#include <cmath>
#include <sstream>

#include "ember/nn.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;
namespace nn = ember::nn;
namespace F = ember::nn::functional;

TEST(NnSequential, ForwardEqualsTheManualComposition) {
  manual_seed(3);
  nn::Linear a(5, 4), b(4, 2);
  nn::Sequential seq(a, nn::Tanh(), b);
  const Tensor x = randn({3, 5});
  EXPECT_TRUE(all_close(seq(x), b(a(x).tanh()), 0, 0));
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_EQ(&seq->at<nn::LinearImpl>(0), a.get());
  EXPECT_EQ((*seq)[1]->name(), "Tanh");
  EXPECT_EMBER_ERROR(seq->at<nn::LinearImpl>(1), "Sequential", "at 1 is a Tanh");
  EXPECT_EMBER_ERROR((*seq)[3], "index 3 is out of range for 3 modules");
}

TEST(NnSequential, NamesChildrenByPositionOrByGivenName) {
  nn::Sequential seq;
  EXPECT_TRUE(all_close(seq(ones({2})), ones({2})));  // empty: the identity
  seq->push_back(nn::Linear(2, 2));
  seq->push_back("act", nn::ReLU());
  seq->push_back(nn::Sequential(nn::Linear(2, 1)));
  std::vector<std::string> keys;
  for (const auto& entry : seq->state_dict()) keys.push_back(entry.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"0.bias", "0.weight", "2.0.bias", "2.0.weight"}));
  EXPECT_EQ(seq(ones({3, 2})).sizes(), IntArrayRef({3, 1}));
  int count = 0;
  for (const auto& module : *seq) count += module != nullptr;
  EXPECT_EQ(count, 3);
}

TEST(NnModuleList, HoldsModulesByIndex) {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  list->push_back(nn::Linear(3, 1));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(list->at<nn::LinearImpl>(2).options.in_features(), 3);
  EXPECT_EQ(list->named_parameters()[2].first, "2.weight");
  std::vector<std::string> names;
  for (const auto& m : *list) names.push_back(m->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));
  EXPECT_EMBER_ERROR((*list)[3], "ModuleList", "out of range");
}

TEST(NnModuleDict, KeepsInsertionOrderAndNamesKeys) {
  nn::ModuleDict dict;
  dict->insert("encoder", nn::Linear(4, 2));
  dict->insert("act", nn::GELU());
  EXPECT_TRUE(dict->contains("act"));
  EXPECT_FALSE(dict->contains("decoder"));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"encoder", "act"}));
  EXPECT_EQ(dict->at<nn::LinearImpl>("encoder").options.out_features(), 2);
  EXPECT_EQ(dict->named_parameters()[0].first, "encoder.weight");
  EXPECT_EMBER_ERROR((*dict)["decoder"], "no module under key 'decoder'", "'encoder', 'act'");
  EXPECT_EMBER_ERROR(dict->insert("act", nn::ReLU()), "already registered");
}

TEST(NnLinear, ComputesXWTransposePlusBias) {
  nn::Linear fc(3, 2);
  const Tensor x = randn({4, 3});
  EXPECT_TRUE(all_close(fc(x), x.matmul(fc->weight.t()) + fc->bias, 1e-6, 1e-6));
  EXPECT_EQ(fc(randn({5, 4, 3})).sizes(), IntArrayRef({5, 4, 2}));
  EXPECT_EMBER_ERROR(fc(randn({4, 5})), "Linear", "in_features = 3", "[4, 5]");
}

TEST(NnLinear, DefaultInitIsBoundedByOneOverSqrtFanIn) {
  nn::Linear fc(400, 300);
  const double bound = 1.0 / std::sqrt(400.0);
  for (const Tensor& p : {fc->weight, fc->bias}) {
    const double max_abs = p.abs().max().item<double>();
    EXPECT_LE(max_abs, bound);
    EXPECT_GT(max_abs, 0.95 * bound);
  }
  // U(-b, b) has standard deviation b / sqrt(3).
  EXPECT_NEAR(fc->weight.std().item<double>(), bound / std::sqrt(3.0), 0.01 * bound);
}

TEST(NnLinear, SameSeedGivesTheSameWeights) {
  manual_seed(42);
  nn::Linear a(8, 8);
  manual_seed(42);
  nn::Linear b(8, 8);
  EXPECT_TRUE(all_close(a->weight, b->weight, 0, 0));
  EXPECT_TRUE(all_close(a->bias, b->bias, 0, 0));
}

TEST(NnFlatten, MergesTheTrailingDimsByDefault) {
  const Tensor x = randn({2, 3, 4, 5});
  EXPECT_EQ(nn::Flatten()(x).sizes(), IntArrayRef({2, 60}));
  EXPECT_EQ(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))(x).sizes(), IntArrayRef({6, 4, 5}));
  nn::Unflatten unflatten(nn::UnflattenOptions(1, {3, 20}));
  EXPECT_EQ(unflatten(nn::Flatten()(x)).sizes(), IntArrayRef({2, 3, 20}));
  std::ostringstream os;
  os << unflatten;
  EXPECT_EQ(os.str(), "Unflatten(dim=1, unflattened_size=[3, 20])");
}

TEST(NnDropout, DropsInTrainingAndPassesThroughInEval) {
  nn::Dropout drop(0.5);
  const Tensor x = ones({1000});
  const std::vector<double> trained = values(drop(x));
  int zeros = 0;
  for (double v : trained) {
    EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
    zeros += v == 0.0;
  }
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
  drop->eval();
  EXPECT_TRUE(all_close(drop(x), x, 0, 0));
  EXPECT_EMBER_ERROR(nn::Dropout(1.5), "Dropout: p must be in [0, 1]");
}

TEST(NnActivation, EachModuleAppliesItsFunction) {
  const Tensor x = randn({3, 4});
  EXPECT_TRUE(all_close(nn::ReLU()(x), x.relu(), 0, 0));
  EXPECT_TRUE(all_close(nn::SiLU()(x), x.silu(), 0, 0));
  EXPECT_TRUE(all_close(nn::Sigmoid()(x), x.sigmoid(), 0, 0));
  EXPECT_TRUE(all_close(nn::Tanh()(x), x.tanh(), 0, 0));
  EXPECT_TRUE(all_close(nn::GELU()(x), x.gelu(), 0, 0));
  EXPECT_TRUE(all_close(nn::GELU("tanh")(x), x.gelu("tanh"), 0, 0));
  EXPECT_TRUE(all_close(nn::Hardswish()(x), F::hardswish(x), 0, 0));
  EXPECT_TRUE(all_close(nn::Hardsigmoid()(x), F::hardsigmoid(x), 0, 0));
  EXPECT_TRUE(all_close(nn::Mish()(x), F::mish(x), 0, 0));
  EXPECT_TRUE(all_close(nn::LeakyReLU(0.2)(x), F::leaky_relu(x, 0.2), 0, 0));
  EXPECT_TRUE(all_close(nn::ELU(0.5)(x), F::elu(x, 0.5), 0, 0));
  EXPECT_TRUE(all_close(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(5))(x), x.softplus(2, 5), 0, 0));
  EXPECT_TRUE(all_close(nn::Softmax(0)(x), x.softmax(0), 0, 0));
  EXPECT_TRUE(all_close(nn::LogSoftmax(1)(x), x.log_softmax(1), 0, 0));
}

TEST(NnActivation, PrintsItsOptions) {
  nn::Sequential seq(nn::GELU("tanh"), nn::LeakyReLU(), nn::ELU(), nn::Softplus(), nn::Softmax(1), nn::Mish());
  std::ostringstream os;
  os << seq;
  EXPECT_EQ(os.str(),
            "Sequential(\n"
            "  (0): GELU(approximate='tanh')\n"
            "  (1): LeakyReLU(negative_slope=0.01)\n"
            "  (2): ELU(alpha=1)\n"
            "  (3): Softplus(beta=1, threshold=20)\n"
            "  (4): Softmax(dim=1)\n"
            "  (5): Mish()\n"
            ")");
}

TEST(NnLoss, ClassificationLossesEqualTheirFunctions) {
  const Tensor logits = randn({6, 4});
  const Tensor labels = tensor({0, 3, 1, 1, 2, 0});
  const Tensor weight = tensor({1.f, 2.f, 0.5f, 1.f});
  EXPECT_TRUE(all_close(nn::CrossEntropyLoss()(logits, labels), F::cross_entropy(logits, labels), 0, 0));
  nn::CrossEntropyLoss weighted(
      nn::CrossEntropyLossOptions().weight(weight).ignore_index(3).label_smoothing(0.1).reduction("sum"));
  EXPECT_TRUE(all_close(weighted(logits, labels), F::cross_entropy(logits, labels, weight, 3, "sum", 0.1), 0, 0));
  EXPECT_TRUE(weighted->named_buffers()[0].second.is_same(weighted->weight));
  EXPECT_EQ(weighted->state_dict().count("weight"), 1u);
  EXPECT_EQ(nn::CrossEntropyLoss()->state_dict().size(), 0u);

  const Tensor log_probs = logits.log_softmax(1);
  EXPECT_TRUE(all_close(nn::NLLLoss(nn::NLLLossOptions().weight(weight).reduction("none"))(log_probs, labels),
                        F::nll_loss(log_probs, labels, weight, -100, "none"), 0, 0));

  const Tensor targets = rand({6, 4});
  const Tensor pos_weight = tensor({1.f, 3.f, 1.f, 0.5f});
  EXPECT_TRUE(all_close(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(pos_weight))(logits, targets),
                        F::binary_cross_entropy_with_logits(logits, targets, std::nullopt, "mean", pos_weight), 0,
                        0));

  const Tensor target_log_probs = randn({6, 4}).log_softmax(1);
  EXPECT_TRUE(all_close(
      nn::KLDivLoss(nn::KLDivLossOptions().log_target(true).reduction("batchmean"))(log_probs, target_log_probs),
      F::kl_div(log_probs, target_log_probs, "batchmean", true), 0, 0));
}

TEST(NnLoss, RegressionLossesEqualTheirFunctions) {
  const Tensor a = randn({5, 3}), b = randn({5, 3});
  EXPECT_TRUE(all_close(nn::MSELoss()(a, b), F::mse_loss(a, b), 0, 0));
  EXPECT_TRUE(all_close(nn::L1Loss(nn::L1LossOptions().reduction("sum"))(a, b), F::l1_loss(a, b, "sum"), 0, 0));
  EXPECT_TRUE(all_close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(a, b),
                        F::smooth_l1_loss(a, b, "mean", 0.5), 0, 0));
  EXPECT_EMBER_ERROR(nn::MSELoss(nn::MSELossOptions().reduction("average"))(a, b), "reduction");
}

TEST(NnLoss, WeightBuffersFollowTheModuleDtype) {
  nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().weight(tensor({1.f, 2.f})));
  loss->to(DType::Float64);
  EXPECT_EQ(loss->weight.dtype(), DType::Float64);
  const Tensor value = loss(randn({3, 2}, kFloat64), tensor({0, 1, 1}));
  EXPECT_EQ(value.dtype(), DType::Float64);
}

TEST(NnModules, TrainAnMlpStepEndToEnd) {
  // One hand-written SGD step lowers the loss on a fixed batch.
  manual_seed(7);
  nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
  nn::CrossEntropyLoss criterion;
  const Tensor x = randn({16, 4});
  const Tensor y = randint(0, 3, {16});
  const double before = criterion(model(x), y).item<double>();
  for (int step = 0; step < 20; ++step) {
    model->zero_grad();
    criterion(model(x), y).backward();
    NoGradGuard no_grad;
    for (Tensor p : model->parameters()) p.sub_(p.grad() * 0.1);
  }
  EXPECT_LT(criterion(model(x), y).item<double>(), before);
}

}  // namespace
}  // namespace ember
