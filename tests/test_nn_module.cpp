// nn::Module: registration, traversal, state_dict, modes, to(), zero_grad,
// printing, names and the holder.
#include <sstream>

#include "ember/nn.h"
#include "ember/optim.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;
namespace nn = ember::nn;

// gain (own parameter), steps (own int buffer), fc (Linear 3 -> 4), body (Sequential of Linear 4 -> 2, ReLU).
class TinyNetImpl : public nn::Module {
 public:
  TinyNetImpl()
      : Module("TinyNet"),
        gain(register_parameter("gain", ones({2}))),
        steps(register_buffer("steps", zeros({}, kInt64))) {
    fc = register_module("fc", nn::Linear(3, 4));
    body = register_module("body", nn::Sequential(nn::Linear(4, 2), nn::ReLU()));
  }
  Tensor forward(const Tensor& x) { return body(fc(x)) * gain; }

  Tensor& gain;
  Tensor& steps;
  nn::Linear fc{nullptr};
  nn::Sequential body{nullptr};
};
EMBER_MODULE(TinyNet);

std::vector<std::string> names_of(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& entry : named) out.push_back(entry.first);
  return out;
}

std::vector<std::string> keys_of(const TensorDict& dict) {
  std::vector<std::string> out;
  for (const auto& entry : dict) out.push_back(entry.first);
  return out;
}

TEST(NnModule, ParametersComeInRegistrationOrderWithDottedNames) {
  TinyNet net;
  EXPECT_EQ(names_of(net->named_parameters()),
            (std::vector<std::string>{"gain", "fc.weight", "fc.bias", "body.0.weight", "body.0.bias"}));
  EXPECT_EQ(names_of(net->named_parameters(/*recurse=*/false)), (std::vector<std::string>{"gain"}));
  EXPECT_EQ(names_of(net->named_buffers()), (std::vector<std::string>{"steps"}));
  const TensorList params = net->parameters();
  ASSERT_EQ(params.size(), 5u);
  EXPECT_TRUE(params[1].is_same(net->fc->weight));
  for (const Tensor& p : params) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  EXPECT_FALSE(net->steps.requires_grad());
}

TEST(NnModule, ChildrenAndModulesAreListedDepthFirst) {
  TinyNet net;
  ASSERT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->named_children()[1].first, "body");
  std::vector<std::string> names;
  for (const auto& [name, module] : net->named_modules()) names.push_back(name + ":" + module->name());
  EXPECT_EQ(names, (std::vector<std::string>{":TinyNet", "fc:Linear", "body:Sequential", "body.0:Linear",
                                             "body.1:ReLU"}));
  EXPECT_EQ(net->modules(/*include_self=*/false).size(), 4u);
}

TEST(NnModule, ModulesNeedsSharedOwnershipToIncludeItself) {
  TinyNetImpl on_stack;
  EXPECT_EMBER_ERROR(on_stack.modules(), "TinyNet::named_modules", "shared_ptr");
  EXPECT_EQ(on_stack.modules(/*include_self=*/false).size(), 4u);
}

TEST(NnModule, ApplyVisitsChildrenBeforeTheirParent) {
  TinyNet net;
  std::vector<std::string> order;
  net->apply([&](nn::Module& m) { order.push_back(m.name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Linear", "Linear", "ReLU", "Sequential", "TinyNet"}));
}

TEST(NnModule, RegistrationRejectsBadAndDuplicateNames) {
  nn::Module m("Box");
  m.register_parameter("w", zeros({2}));
  EXPECT_EMBER_ERROR(m.register_parameter("w", zeros({2})), "Box::register_parameter", "'w'", "already registered");
  EXPECT_EMBER_ERROR(m.register_buffer("w", zeros({2})), "Box::register_buffer", "already registered");
  EXPECT_EMBER_ERROR(m.register_parameter("a.b", zeros({2})), "contains '.'");
  EXPECT_EMBER_ERROR(m.register_buffer("", zeros({2})), "the name is empty");
  EXPECT_EMBER_ERROR(m.register_module("w", nn::Linear(2, 2)), "already registered");
  EXPECT_EMBER_ERROR(m.register_module("empty", nn::Linear(nullptr)), "empty (nullptr)");
}

TEST(NnModule, RegisterParameterMakesALeafAndHonoursRequiresGrad) {
  nn::Module m("Box");
  Tensor source = ones({3}).requires_grad_();
  Tensor& p = m.register_parameter("p", source * 2);  // has history
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(values(p), (std::vector<double>{2, 2, 2}));
  Tensor& frozen = m.register_parameter("frozen", ones({2}), /*requires_grad=*/false);
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_EQ(nn::parameter_count(m), 5);
  EXPECT_EQ(nn::parameter_count(m, /*trainable_only=*/true), 3);
}

TEST(NnModule, AbsentParametersAndBuffersAreSkipped) {
  nn::Linear no_bias(nn::LinearOptions(3, 2).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(names_of(no_bias->named_parameters()), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(keys_of(no_bias->state_dict()), (std::vector<std::string>{"weight"}));
}

TEST(NnModule, StateDictHasNestedKeysAndSharesMemory) {
  TinyNet net;
  TensorDict sd = net->state_dict();
  EXPECT_EQ(keys_of(sd), (std::vector<std::string>{"body.0.bias", "body.0.weight", "fc.bias", "fc.weight", "gain",
                                                   "steps"}));
  EXPECT_FALSE(sd.at("gain").requires_grad());
  {
    NoGradGuard no_grad;
    sd.at("gain").fill_(3.0);
  }
  EXPECT_EQ(values(net->gain), (std::vector<double>{3, 3}));
}

TEST(NnModule, LoadStateDictCopiesValuesAndKeepsIdentity) {
  manual_seed(1);
  TinyNet source, target;
  const Tensor weight_handle = target->fc->weight;
  const Tensor x = randn({5, 3});
  EXPECT_FALSE(all_close(target(x), source(x)));
  target->load_state_dict(source->state_dict());
  EXPECT_TRUE(all_close(target(x), source(x), 0, 0));
  EXPECT_TRUE(target->fc->weight.is_same(weight_handle));
  EXPECT_TRUE(target->fc->weight.requires_grad());
  EXPECT_TRUE(target->fc->weight.is_leaf());
}

TEST(NnModule, LoadStateDictConvertsDtypes) {
  TinyNet net;
  TensorDict sd = net->state_dict();
  for (auto& [name, tensor] : sd) {
    if (tensor.is_floating_point()) tensor = full(tensor.sizes(), 0.5, kFloat64);
  }
  net->load_state_dict(sd);
  EXPECT_EQ(net->fc->weight.dtype(), DType::Float32);
  EXPECT_EQ(values(net->gain), (std::vector<double>{0.5, 0.5}));
}

TEST(NnModule, LoadStateDictStrictNamesMissingAndUnexpectedKeys) {
  TinyNet net;
  TensorDict sd = net->state_dict();
  sd.erase("fc.bias");
  sd.emplace("fc.extra", zeros({1}));
  EXPECT_EMBER_ERROR(net->load_state_dict(sd), "TinyNet::load_state_dict", "missing keys: \"fc.bias\"",
                     "unexpected keys: \"fc.extra\"");
  // Non-strict: loads what matches.
  sd.at("gain") = full({2}, 7.0);
  net->load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(values(net->gain), (std::vector<double>{7, 7}));
}

TEST(NnModule, LoadStateDictRejectsShapeMismatchAndChangesNothing) {
  TinyNet net;
  TensorDict sd = net->state_dict();
  sd.at("gain") = full({2}, 9.0);
  sd.at("fc.weight") = zeros({4, 5});
  EXPECT_EMBER_ERROR(net->load_state_dict(sd), "size mismatch for \"fc.weight\" (checkpoint [4, 5], module [4, 3])");
  EXPECT_EMBER_ERROR(net->load_state_dict(sd, /*strict=*/false), "size mismatch");
  EXPECT_EQ(values(net->gain), (std::vector<double>{1, 1}));
}

TEST(NnModule, TrainAndEvalReachEveryDescendant) {
  TinyNet net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training()) << m->name();
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training()) << m->name();
}

TEST(NnModule, ZeroGradSetsToNoneOrZeroesInPlace) {
  TinyNet net;
  net(randn({4, 3})).sum().backward();
  ASSERT_TRUE(net->fc->weight.grad().defined());
  const Tensor grad = net->fc->weight.grad();
  net->zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(net->fc->weight.grad().is_same(grad));
  EXPECT_EQ(values(grad), std::vector<double>(12, 0.0));
  net->zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(NnModule, ToDtypeConvertsFloatingTensorsThroughTheMemberReferences) {
  TinyNet net;
  net(randn({2, 3})).sum().backward();
  net->to(DType::Float64);
  for (const Tensor& p : net->parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float64);
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().dtype(), DType::Float64);
  }
  EXPECT_EQ(net->steps.dtype(), DType::Int64);           // integer buffers keep their dtype
  EXPECT_EQ(net->fc->weight.dtype(), DType::Float64);    // the member is the registered slot
  EXPECT_TRUE(net->parameters()[1].is_same(net->fc->weight));
  EXPECT_EQ(net(randn({2, 3}, kFloat64)).dtype(), DType::Float64);
  EXPECT_EMBER_ERROR(net->to(DType::Int32), "TinyNet::to", "floating-point");
}

// to() keeps each tensor's identity (Note [Parameter slots]): handles taken
// before the move, an optimiser's included, see the converted data.
TEST(NnModule, ToKeepsTheTensorsAnOptimiserHolds) {
  manual_seed(0);
  TinyNet net;
  const Tensor weight_before = net->fc->weight;
  optim::AdamW opt(net->parameters(), optim::AdamWOptions(0.1));
  net->to(kFloat64);
  EXPECT_TRUE(net->fc->weight.is_same(weight_before));
  EXPECT_EQ(weight_before.dtype(), kFloat64);
  const std::vector<double> start = values(net->fc->weight);
  net(randn({4, 3}, kFloat64)).sum().backward();
  opt.step();
  for (const Tensor& p : opt.parameters()) EXPECT_EQ(p.dtype(), kFloat64);
  EXPECT_NE(values(net->fc->weight), start);  // the optimiser updated the module's float64 weight
  EXPECT_EQ(opt.state(net->fc->weight)->buffers.at("exp_avg").dtype(), kFloat64);
}

TEST(NnModule, OptimiserStateFollowsAMoveAfterSteps) {
  manual_seed(0);
  TinyNet net;
  optim::AdamW opt(net->parameters(), optim::AdamWOptions(0.1));
  net(randn({4, 3})).sum().backward();
  opt.step();
  EXPECT_EQ(opt.state(net->fc->weight)->buffers.at("exp_avg").dtype(), kFloat32);
  net->to(kFloat64);
  opt.zero_grad();
  net(randn({4, 3}, kFloat64)).sum().backward();
  ASSERT_EQ(net->fc->weight.grad().dtype(), kFloat64);  // a fresh gradient accumulator for the new dtype
  opt.step();
  EXPECT_EQ(opt.state(net->fc->weight)->buffers.at("exp_avg").dtype(), kFloat64);
  EXPECT_EQ(opt.state(net->fc->weight)->step, 2);
}

TEST(NnModule, ToKeepsTiedWeightsTied) {
  nn::Linear a(3, 3), b(3, 3);
  b->weight = a->weight;
  nn::Sequential both(a, b);
  both->to(kFloat64);
  EXPECT_TRUE(a->weight.is_same(b->weight));
  EXPECT_EQ(b->weight.dtype(), kFloat64);
}

TEST(NnModule, ToTheSameDtypeKeepsTheTensors) {
  TinyNet net;
  const Tensor before = net->fc->weight;
  net->to(DType::Float32);
  net->to(Device::cpu());
  EXPECT_TRUE(net->fc->weight.is_same(before));
}

TEST(NnModule, NamedItemsHaveKeyAndValue) {
  TinyNet net;
  const nn::NamedTensors named = net->named_parameters();
  EXPECT_EQ(named[1].key(), "fc.weight");
  EXPECT_TRUE(named[1].value().is_same(net->fc->weight));
  EXPECT_EQ(named[1].first, named[1].key());
  const auto& [name, tensor] = named[2];
  EXPECT_EQ(name, "fc.bias");
  EXPECT_TRUE(tensor.is_same(net->fc->bias));
  EXPECT_EQ(net->named_children()[0].key(), "fc");
  EXPECT_EQ(net->named_buffers()[0].value().dtype(), kInt64);
}

namespace user_code {
struct ResidualImpl : nn::Module {
  Tensor forward(const Tensor& x) { return x; }
};
EMBER_MODULE(Residual);
template <int N>
struct StackImpl : nn::Module {};
}  // namespace user_code

TEST(NnModule, NameDefaultsToTheClassNameWithoutImpl) {
  user_code::Residual residual;
  EXPECT_EQ(residual->name(), "Residual");
  std::ostringstream os;
  os << residual;
  EXPECT_EQ(os.str(), "Residual()");
  EXPECT_EQ(user_code::StackImpl<2>().name(), "StackImpl<2>");  // only a trailing "Impl" goes
  EXPECT_EQ(TinyNet()->name(), "TinyNet");                       // an explicit name stays
  EXPECT_EQ(nn::Module().name(), "Module");
  EXPECT_EQ(nn::Linear(2, 3)->name(), "Linear");
}

TEST(NnModule, PrintsTheTreeLikePyTorch) {
  nn::Sequential model(nn::Flatten(), nn::Linear(784, 128), nn::ReLU(), nn::Dropout(0.2), nn::Linear(128, 10));
  std::ostringstream os;
  os << model;
  EXPECT_EQ(os.str(),
            "Sequential(\n"
            "  (0): Flatten(start_dim=1, end_dim=-1)\n"
            "  (1): Linear(in_features=784, out_features=128, bias=true)\n"
            "  (2): ReLU()\n"
            "  (3): Dropout(p=0.2)\n"
            "  (4): Linear(in_features=128, out_features=10, bias=true)\n"
            ")");
}

TEST(NnModule, PrintsNestedModulesIndented) {
  TinyNet net;
  std::ostringstream os;
  os << *net;
  EXPECT_EQ(os.str(),
            "TinyNet(\n"
            "  (fc): Linear(in_features=3, out_features=4, bias=true)\n"
            "  (body): Sequential(\n"
            "    (0): Linear(in_features=4, out_features=2, bias=true)\n"
            "    (1): ReLU()\n"
            "  )\n"
            ")");
}

TEST(NnModule, SummaryAddsParameterCounts) {
  TinyNet net;
  EXPECT_EQ(nn::summary(*net),
            "TinyNet(  # 28 params\n"
            "  (fc): Linear(in_features=3, out_features=4, bias=true)  # 16 params\n"
            "  (body): Sequential(  # 10 params\n"
            "    (0): Linear(in_features=4, out_features=2, bias=true)  # 10 params\n"
            "    (1): ReLU()\n"
            "  )\n"
            ")\n"
            "Total: 28 parameters (28 trainable), 1 buffer elements\n");
}

TEST(NnModuleHolder, ForwardsConstructionCallsAndSharesTheModule) {
  nn::Linear fc(2, 3);
  nn::Linear alias = fc;
  EXPECT_EQ(alias.get(), fc.get());
  EXPECT_EQ(fc->options.out_features(), 3);
  EXPECT_EQ(fc(ones({4, 2})).sizes(), IntArrayRef({4, 3}));
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_FALSE(static_cast<bool>(empty));
  EXPECT_EMBER_ERROR((void)empty->weight, "ModuleHolder", "empty");
  empty = fc;
  EXPECT_EQ(empty.ptr(), fc.ptr());
}

TEST(NnModule, ReplaceModuleSwapsAChildInPlace) {
  TinyNet net;
  net->fc = net->replace_module("fc", nn::Linear(3, 4).ptr());
  EXPECT_TRUE(net->named_parameters()[1].second.is_same(net->fc->weight));
  EXPECT_EMBER_ERROR(net->replace_module("nope", nn::ReLU().ptr()), "no child named 'nope'");
}

}  // namespace
}  // namespace ember
