// The optimisers' behaviour beyond the golden trajectories
// (tests/golden_optim.cpp): groups and options, skipped parameters,
// zero_grad, closures, non-contiguous parameters, state dicts that resume
// bit for bit, and the errors for bad options and bad state dicts.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "ember/ember.h"
#include "ember/optim.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace optim = ember::optim;

Tensor random(IntArrayRef sizes, uint64_t seed, DType dtype = kFloat32) {
  Generator g(seed);
  return randn(sizes, dtype, &g);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  return x.sizes() == y.sizes() && x.dtype() == y.dtype() && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

// Three parameters of odd shapes (leaves that require grad).
TensorList make_params(uint64_t seed, DType dtype = kFloat32) {
  return {random({5, 7}, seed, dtype).requires_grad_(), random({7}, seed + 1, dtype).requires_grad_(),
          random({2, 1, 3}, seed + 2, dtype).requires_grad_()};
}

TensorList copies(const TensorList& params) {
  TensorList out;
  for (const Tensor& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// Gradients of step k: a fixed function of (k, parameter), for runs that must agree.
void set_grads(const TensorList& params, int k) {
  for (size_t i = 0; i < params.size(); ++i)
    params[i].set_grad(random(params[i].sizes(), 1000 + 10 * k + i, params[i].dtype()));
}

// An optimiser over two groups of `params`: {0, 2} with the defaults, {1} with its own options.
using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(const TensorList&)>;

std::vector<std::pair<std::string, MakeOptimizer>> optimizer_kinds() {
  return {
      {"SGD",
       [](const TensorList& p) {
         return std::make_unique<optim::SGD>(
             std::vector<optim::ParamGroup>{{{p[0], p[2]}},
                                            {{p[1]}, optim::SGDOptions(0.01).nesterov(true).momentum(0.5)}},
             optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(1e-3));
       }},
      {"Adam",
       [](const TensorList& p) {
         return std::make_unique<optim::Adam>(
             std::vector<optim::ParamGroup>{{{p[0], p[2]}}, {{p[1]}, optim::AdamOptions(3e-2).amsgrad(true)}},
             optim::AdamOptions(1e-2).weight_decay(0.01));
       }},
      {"AdamW",
       [](const TensorList& p) {
         return std::make_unique<optim::AdamW>(
             std::vector<optim::ParamGroup>{{{p[0], p[2]}}, {{p[1]}, optim::AdamWOptions(3e-2).maximize(true)}},
             optim::AdamWOptions(1e-2).amsgrad(true));
       }},
      {"RMSprop",
       [](const TensorList& p) {
         return std::make_unique<optim::RMSprop>(
             std::vector<optim::ParamGroup>{{{p[0], p[2]}}, {{p[1]}, optim::RMSpropOptions(1e-3).momentum(0.5)}},
             optim::RMSpropOptions(1e-2).centered(true).momentum(0.9).weight_decay(0.01));
       }},
      {"Adagrad",
       [](const TensorList& p) {
         return std::make_unique<optim::Adagrad>(
             std::vector<optim::ParamGroup>{{{p[0], p[2]}}, {{p[1]}, optim::AdagradOptions(0.05).lr_decay(0.1)}},
             optim::AdagradOptions(0.1).initial_accumulator_value(0.1));
       }},
  };
}

// ---- groups and options ----

TEST(Optimizer, GroupsTakeTheDefaultsUnlessTheyHaveOptions) {
  const TensorList p = make_params(1);
  optim::Adam opt(std::vector<optim::ParamGroup>{{{p[0], p[2]}}, {{p[1]}, optim::AdamOptions(0.5).amsgrad(true)}},
                  optim::AdamOptions(0.1).betas({0.8, 0.9}));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  const auto& first = static_cast<const optim::AdamOptions&>(opt.param_groups()[0].options());
  const auto& second = static_cast<const optim::AdamOptions&>(opt.param_groups()[1].options());
  EXPECT_EQ(first.lr(), 0.1);
  EXPECT_EQ(std::get<0>(first.betas()), 0.8);
  EXPECT_EQ(second.lr(), 0.5);
  EXPECT_TRUE(second.amsgrad());
  EXPECT_EQ(std::get<0>(second.betas()), 0.9);  // the group's own options, not the optimiser's
  EXPECT_EQ(opt.name(), "Adam");
  EXPECT_EQ(opt.parameters().size(), 3u);
  EXPECT_TRUE(opt.parameters()[1].is_same(p[2]));  // numbered across groups, in order
}

TEST(Optimizer, AddParamGroupAndSetTheLrOfAGroup) {
  const TensorList p = make_params(1);
  optim::SGD opt({p[0]}, optim::SGDOptions(0.1));
  opt.add_param_group({{p[1], p[2]}});
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.param_groups()[1].options().lr(), 0.1);
  opt.param_groups()[1].options().lr(0.5);
  const Tensor before = p[1].detach().clone();
  p[1].set_grad(ones({7}));
  opt.step();
  EXPECT_TRUE(all_close(p[1], before - 0.5, 1e-6, 0));
}

TEST(Optimizer, SkipsParametersWithoutAGradientAndKeepsTheirState) {
  const TensorList p = make_params(2);
  optim::Adam opt(p, optim::AdamOptions(1e-2));
  set_grads(p, 0);
  opt.step();
  const Tensor frozen = p[1].detach().clone();
  const Tensor exp_avg = opt.state(p[1])->buffers.at("exp_avg").clone();
  p[1].set_grad(Tensor());
  p[0].set_grad(random({5, 7}, 3));
  p[2].set_grad(random({2, 1, 3}, 4));
  opt.step();
  EXPECT_TRUE(same_bits(p[1], frozen));
  EXPECT_TRUE(same_bits(opt.state(p[1])->buffers.at("exp_avg"), exp_avg));
  EXPECT_EQ(opt.state(p[1])->step, 1);
  EXPECT_EQ(opt.state(p[0])->step, 2);
}

TEST(Optimizer, ZeroGradClearsOrZeroes) {
  const TensorList p = make_params(3);
  optim::SGD opt(p, optim::SGDOptions(0.1));
  set_grads(p, 0);
  opt.zero_grad(/*set_to_none=*/false);
  for (const Tensor& x : p) {
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().abs().sum().item<float>(), 0.0f);
  }
  opt.zero_grad();
  for (const Tensor& x : p) EXPECT_FALSE(x.grad().defined());
}

TEST(Optimizer, StepWithAClosureRecomputesTheGradientAndReturnsTheLoss) {
  Tensor w = tensor({1.0f, -2.0f}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.25));
  NoGradGuard outside;  // the closure runs with grad mode on anyway
  const Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (w * w).sum();  // gradient 2 w
    l.backward();
    return l;
  });
  EXPECT_FLOAT_EQ(loss.item<float>(), 5.0f);
  EXPECT_TRUE(all_close(w, tensor({0.5f, -1.0f})));  // w - 0.25 * 2 w
}

// A non-contiguous parameter is updated through a contiguous copy, with the
// same result as a contiguous one.
TEST(Optimizer, UpdatesNonContiguousParameters) {
  const Tensor base = random({4, 6}, 5);
  Tensor strided = base.clone().t().requires_grad_();  // [6, 4], strides (1, 6)
  Tensor plain = base.t().contiguous().requires_grad_();
  ASSERT_FALSE(strided.is_contiguous());
  optim::AdamW a({strided}, optim::AdamWOptions(1e-2));
  optim::AdamW b({plain}, optim::AdamWOptions(1e-2));
  for (int k = 0; k < 3; ++k) {
    const Tensor g = random({6, 4}, 10 + k);
    strided.set_grad(g);
    plain.set_grad(g.clone());
    a.step();
    b.step();
  }
  EXPECT_TRUE(same_bits(strided, plain));
  EXPECT_FALSE(strided.is_contiguous());  // still the caller's tensor, updated in place
}

TEST(Optimizer, AdagradCreatesItsStateUpFront) {
  const TensorList p = make_params(4);
  optim::Adagrad opt(p, optim::AdagradOptions().initial_accumulator_value(0.25));
  const optim::ParamState* s = opt.state(p[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->step, 0);
  EXPECT_TRUE(all_close(s->buffers.at("sum"), full({5, 7}, 0.25)));
  EXPECT_TRUE(opt.state_dict().count("state.2.sum"));
}

// ---- state dicts ----

TEST(OptimizerStateDict, HoldsKindGroupsOptionsAndState) {
  const TensorList p = make_params(5);
  optim::Adam opt(std::vector<optim::ParamGroup>{{{p[0]}}, {{p[1], p[2]}, optim::AdamOptions(0.5).amsgrad(true)}},
                  optim::AdamOptions(0.1));
  set_grads(p, 0);
  opt.step();
  const TensorDict d = opt.state_dict();
  EXPECT_EQ(d.at("kind.Adam").item<int64_t>(), 1);
  EXPECT_EQ(values(d.at("param_groups.1.params")), (std::vector<double>{1, 2}));
  EXPECT_EQ(d.at("param_groups.0.lr").item<double>(), 0.1);
  EXPECT_EQ(d.at("param_groups.0.lr").dtype(), kFloat64);
  EXPECT_EQ(d.at("param_groups.1.amsgrad").item<int64_t>(), 1);
  EXPECT_EQ(d.at("param_groups.1.beta2").item<double>(), 0.999);
  EXPECT_EQ(d.at("state.2.step").item<int64_t>(), 1);
  EXPECT_EQ(d.at("state.2.max_exp_avg_sq").sizes(), IntArrayRef({2, 1, 3}));
  EXPECT_FALSE(d.count("state.0.max_exp_avg_sq"));
  // A snapshot: later steps do not change it.
  const Tensor saved = d.at("state.0.exp_avg").clone();
  set_grads(p, 1);
  opt.step();
  EXPECT_TRUE(same_bits(d.at("state.0.exp_avg"), saved));
}

// Save after 2 steps (through a safetensors file), load into a fresh
// optimiser over copies of the parameters, run both to step 5: the same bits.
TEST(OptimizerStateDict, ResumesBitForBit) {
  for (const auto& [kind, make] : optimizer_kinds()) {
    for (DType dtype : {kFloat32, kFloat64}) {
      SCOPED_TRACE(kind + " " + std::string(dtype_name(dtype)));
      const TensorList p = make_params(6, dtype);
      std::unique_ptr<optim::Optimizer> opt = make(p);
      for (int k = 0; k < 2; ++k) {
        set_grads(p, k);
        opt->step();
      }
      const std::string path = ::testing::TempDir() + "/ember_optim_state_" + kind + ".safetensors";
      save_safetensors(opt->state_dict(), path);
      const TensorDict loaded = load_safetensors(path).tensors;
      std::filesystem::remove(path);

      const TensorList q = copies(p);
      std::unique_ptr<optim::Optimizer> resumed = make(q);
      resumed->param_groups()[0].options().lr(123.0);  // overwritten by the load
      resumed->load_state_dict(loaded);
      EXPECT_EQ(resumed->param_groups()[0].options().lr(), opt->param_groups()[0].options().lr());
      for (int k = 2; k < 5; ++k) {
        set_grads(p, k);
        set_grads(q, k);
        opt->step();
        resumed->step();
      }
      for (size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(same_bits(p[i], q[i])) << "parameter " << i;
    }
  }
}

TEST(OptimizerStateDict, RejectsADictOfAnotherOptimiser) {
  const TensorList p = make_params(7);
  optim::SGD sgd(p, optim::SGDOptions(0.1).momentum(0.9));
  optim::Adam adam(copies(p));
  EXPECT_EMBER_ERROR(adam.load_state_dict(sgd.state_dict()), "Adam::load_state_dict",
                     "the state dict is of a SGD optimiser, expected Adam");
  EXPECT_EMBER_ERROR(adam.load_state_dict({{"param_groups.0.lr", tensor({0.1})}}), "not an optimiser state dict");
}

TEST(OptimizerStateDict, RejectsOtherGroupsAndParameters) {
  const TensorList p = make_params(8);
  optim::Adam opt(p);
  set_grads(p, 0);
  opt.step();
  const TensorDict d = opt.state_dict();

  optim::Adam two_groups(std::vector<optim::ParamGroup>{{{p[0]}}, {{p[1], p[2]}}});
  EXPECT_EMBER_ERROR(two_groups.load_state_dict(d), "the state dict has 1 parameter groups, this optimiser has 2");
  optim::Adam fewer({p[0], p[1]});
  EXPECT_EMBER_ERROR(fewer.load_state_dict(d), "parameter group 0 has 3 parameters in the state dict, 2 in this");

  optim::Adam other_shapes(
      {random({7}, 1).requires_grad_(), random({5, 7}, 2).requires_grad_(), random({2, 1, 3}, 3).requires_grad_()});
  EXPECT_EMBER_ERROR(other_shapes.load_state_dict(d), "'state.0.exp_avg' has shape [5, 7]",
                     "parameter 0 has shape [7]");

  TensorDict unknown = d;
  unknown["state.1.momentum_buffer"] = zeros({7});
  EXPECT_EMBER_ERROR(opt.load_state_dict(unknown), "'state.1.momentum_buffer' is not a state of Adam");
  TensorDict missing = d;
  missing.erase("param_groups.0.beta1");
  EXPECT_EMBER_ERROR(opt.load_state_dict(missing), "the state dict lacks 'param_groups.0.beta1'");
  TensorDict extra_option = d;
  extra_option["param_groups.0.momentum"] = scalar_tensor(0.9, kFloat64);
  EXPECT_EMBER_ERROR(opt.load_state_dict(extra_option), "'param_groups.0.momentum' is not an option of Adam");
  TensorDict bad_state_index = d;
  bad_state_index["state.3.exp_avg"] = zeros({7});
  EXPECT_EMBER_ERROR(opt.load_state_dict(bad_state_index), "state for parameter 3", "this optimiser has 3 parameters");
  TensorDict bad_key = d;
  bad_key["groups.0.lr"] = scalar_tensor(0.1, kFloat64);
  EXPECT_EMBER_ERROR(opt.load_state_dict(bad_key), "unexpected key 'groups.0.lr'");
  TensorDict bad_lr = d;
  bad_lr["param_groups.0.lr"] = scalar_tensor(-1.0, kFloat64);
  EXPECT_EMBER_ERROR(opt.load_state_dict(bad_lr), "Adam: invalid learning rate -1");
}

TEST(OptimizerStateDict, AFailedLoadChangesNothing) {
  const TensorList p = make_params(9);
  optim::Adam opt(p, optim::AdamOptions(0.1));
  set_grads(p, 0);
  opt.step();
  TensorDict d = opt.state_dict();
  d["param_groups.0.lr"] = scalar_tensor(0.7, kFloat64);
  d["state.2.exp_avg"] = zeros({9});  // a wrong shape, found after the options were read
  const Tensor exp_avg = opt.state(p[0])->buffers.at("exp_avg").clone();
  EXPECT_EMBER_ERROR(opt.load_state_dict(d), "'state.2.exp_avg' has shape [9]");
  EXPECT_EQ(opt.param_groups()[0].options().lr(), 0.1);
  EXPECT_TRUE(same_bits(opt.state(p[0])->buffers.at("exp_avg"), exp_avg));
}

// ---- bad options and parameters ----

TEST(Optimizer, RejectsInvalidOptions) {
  const TensorList p = make_params(10);
  EXPECT_EMBER_ERROR(optim::SGD(p, optim::SGDOptions(-0.1)), "SGD: invalid learning rate -0.1", "lr >= 0");
  EXPECT_EMBER_ERROR(optim::SGD(p, optim::SGDOptions(0.1).momentum(-1)), "SGD: invalid momentum -1");
  EXPECT_EMBER_ERROR(optim::SGD(p, optim::SGDOptions(0.1).nesterov(true)), "Nesterov momentum requires a momentum");
  EXPECT_EMBER_ERROR(optim::SGD(p, optim::SGDOptions(0.1).nesterov(true).momentum(0.9).dampening(0.1)),
                     "zero dampening");
  EXPECT_EMBER_ERROR(optim::Adam(p, optim::AdamOptions().betas({1.0, 0.999})), "Adam: invalid beta1 1",
                     "0 <= beta1 < 1");
  EXPECT_EMBER_ERROR(optim::AdamW(p, optim::AdamWOptions().betas({0.9, -0.5})), "AdamW: invalid beta2 -0.5");
  EXPECT_EMBER_ERROR(optim::Adam(p, optim::AdamOptions().eps(-1e-8)), "invalid eps");
  EXPECT_EMBER_ERROR(optim::Adam(p, optim::AdamOptions().weight_decay(-0.1)), "invalid weight_decay -0.1");
  EXPECT_EMBER_ERROR(optim::RMSprop(p, optim::RMSpropOptions().alpha(-0.5)), "RMSprop: invalid alpha -0.5");
  EXPECT_EMBER_ERROR(optim::Adagrad(p, optim::AdagradOptions().lr_decay(-1)), "Adagrad: invalid lr_decay -1");
  EXPECT_EMBER_ERROR(optim::Adagrad(p, optim::AdagradOptions().initial_accumulator_value(-1)),
                     "invalid initial_accumulator_value -1");
  // A group's own options are checked too.
  EXPECT_EMBER_ERROR(optim::Adam(std::vector<optim::ParamGroup>{{{p[0]}, optim::AdamOptions(-1.0)}}),
                     "Adam: invalid learning rate -1");
}

TEST(Optimizer, RejectsBadParameters) {
  const TensorList p = make_params(11);
  EXPECT_EMBER_ERROR(optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1)), "SGD: got an empty parameter list");
  EXPECT_EMBER_ERROR(optim::SGD({p[0], p[1], p[0]}, optim::SGDOptions(0.1)), "parameter 2 of the new group",
                     "appears in more than one parameter group");
  optim::SGD opt({p[0]}, optim::SGDOptions(0.1));
  EXPECT_EMBER_ERROR(opt.add_param_group({{p[1], p[0]}}), "more than one parameter group");
  EXPECT_EMBER_ERROR(optim::SGD({p[0] * 2}, optim::SGDOptions(0.1)), "can't optimise a non-leaf tensor");
  EXPECT_EMBER_ERROR(optim::SGD({tensor({1, 2})}, optim::SGDOptions(0.1)), "can only optimise floating-point", "int64");
  EXPECT_EMBER_ERROR(optim::Adam(std::vector<optim::ParamGroup>{{{p[0]}, optim::SGDOptions(0.1)}}),
                     "options of another optimiser");
}

TEST(Optimizer, RejectsAGradientOfAnotherDtype) {
  Tensor w = random({3}, 1).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  w.set_grad(random({3}, 2, kFloat64));
  EXPECT_EMBER_ERROR(opt.step(), "SGD: the gradient of a float32 parameter", "is float64");
}

}  // namespace
}  // namespace ember::testing
