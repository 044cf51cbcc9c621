// A program written against libtorch 1.13's C++ API, compiled unchanged
// against ember apart from the two lines marked "ember:". CI builds and runs
// it as the compatibility check (docs/migrating_from_libtorch.md lists the
// differences that remain).
//
// It trains a small ResNet on random images and a pre-norm transformer block
// on random sequences, each with AdamW, and checks that the losses fall.
#include <ember/ember.h>

#include <cmath>
#include <iostream>

namespace torch = ember;                 // ember: the namespace
#define TORCH_MODULE(Name) EMBER_MODULE(Name)  // ember: the module macro

namespace F = torch::nn::functional;

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)),
        bn1(torch::nn::BatchNorm2dOptions(out)),
        conv2(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
        bn2(torch::nn::BatchNorm2dOptions(out)) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    if (stride != 1 || in != out) {
      shortcut = register_module(
          "shortcut", torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                                            torch::nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = F::relu(bn1(conv1(x)));
    y = bn2(conv2(y));
    return torch::relu(y + (shortcut ? shortcut->forward(x) : x));
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNetImpl : torch::nn::Module {
  explicit ResNetImpl(int64_t classes)
      : stem(torch::nn::Conv2dOptions(3, 16, 3).padding(1).bias(false)), bn(16),
        layer1(16, 16, 1), layer2(16, 32, 2), fc(32, classes) {
    register_module("stem", stem);
    register_module("bn", bn);
    register_module("layer1", layer1);
    register_module("layer2", layer2);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(stem(x)));
    x = layer2(layer1(x));
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1));
    return fc(torch::flatten(x, 1));
  }
  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d bn;
  BasicBlock layer1, layer2;
  torch::nn::Linear fc;
};
TORCH_MODULE(ResNet);

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t d, int64_t heads)
      : ln1(torch::nn::LayerNormOptions({d})), ln2(torch::nn::LayerNormOptions({d})),
        attn(torch::nn::MultiheadAttentionOptions(d, heads)), fc1(d, 4 * d), fc2(4 * d, d) {
    register_module("ln1", ln1);
    register_module("ln2", ln2);
    register_module("attn", attn);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  // x: (L, N, E), sequence first as in libtorch's MultiheadAttention.
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = ln1(x);
    torch::Tensor a = std::get<0>(attn(h, h, h));
    torch::Tensor y = x + a;
    return y + fc2(F::gelu(fc1(ln2(y))));
  }
  torch::nn::LayerNorm ln1, ln2;
  torch::nn::MultiheadAttention attn;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Block);

template <class Model, class Step>
bool train(const char* what, Model& model, Step step) {
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(3e-3).weight_decay(0.01));
  double first = INFINITY, last = INFINITY;
  for (int i = 0; i < 30; ++i) {
    optimizer.zero_grad();
    torch::Tensor loss = step();
    loss.backward();
    optimizer.step();
    if (i == 0) first = loss.template item<double>();
    last = loss.template item<double>();
  }
  std::cout << what << ": loss " << first << " -> " << last << "\n";
  return std::isfinite(last) && last < first;
}

int main() {
  torch::manual_seed(0);

  ResNet resnet(10);
  int64_t count = 0;
  for (const auto& p : resnet->named_parameters()) {
    if (p.key().find("bn") != std::string::npos) continue;
    count += p.value().numel();
  }
  std::cout << "ResNet: " << count << " weights outside batch norms\n";
  torch::Tensor images = torch::randn({16, 3, 16, 16});
  torch::Tensor labels = torch::randint(0, 10, {16});
  bool ok = train("ResNet", resnet, [&] { return F::cross_entropy(resnet(images), labels); });

  Block block(32, 4);
  torch::Tensor seq = torch::randn({12, 4, 32});
  torch::Tensor target = torch::randn({12, 4, 32});
  ok = train("pre-norm block", block, [&] { return F::mse_loss(block(seq), target); }) && ok;

  // Evaluation mode is deterministic: two passes agree.
  resnet->eval();
  torch::NoGradGuard no_grad;
  ok = torch::allclose(resnet(images), resnet(images)) && ok;
  std::cout << (ok ? "ok" : "FAILED") << "\n";
  return ok ? 0 : 1;
}
