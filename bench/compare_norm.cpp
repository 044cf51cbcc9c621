// The norm family, ember against libtorch (harness: compare_harness.h):
// softmax and log_softmax over [4096, 1024] (dim -1; and a strided dim),
// layer_norm over [8192, 1024] with weight and bias, forward and
// forward+backward, plus rms_norm, group_norm and training batch_norm.
// Rates count the bytes of the big tensors read and written once: forward
// reads x and writes y (2 x 4 bytes per element); forward+backward adds
// reading the gradient and the saved tensor and writing dx (5 x 4 in all).
#include <array>

#include "bench/compare_harness.h"
#include "ember/nn/functional/norm.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

namespace {

// d sum(y * g) / d inputs, on both sides.
void ember_grad(const ember::Tensor& y, const ember::TensorList& inputs, const ember::Tensor& g) {
  keep(ember::autograd::grad({y}, inputs, {g}));
}
void torch_grad(const torch::Tensor& y, const std::vector<torch::Tensor>& inputs, const torch::Tensor& g) {
  keep(torch::autograd::grad({y}, inputs, {g}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;

  {  // softmax / log_softmax [4096, 1024]
    const int64_t rows = 4096, cols = 1024;
    const double n = static_cast<double>(rows * cols), fwd = 2 * 4 * n, both = 5 * 4 * n;
    auto ex = ember::randn({rows, cols}), eg = ember::randn({rows, cols});
    auto tx = torch::randn({rows, cols}), tg = torch::randn({rows, cols});
    cases.push_back({"softmax [4096,1024] dim -1", [=] { keep(F::softmax(ex, -1)); },
                     [=] { keep(torch::softmax(tx, -1)); }, fwd, "GB/s"});
    cases.push_back({"log_softmax [4096,1024] dim -1", [=] { keep(F::log_softmax(ex, -1)); },
                     [=] { keep(torch::log_softmax(tx, -1)); }, fwd, "GB/s"});
    auto exg = ex.detach().requires_grad_();
    auto txg = tx.detach().requires_grad_();
    cases.push_back({"softmax [4096,1024] fwd+bwd", [=] { ember_grad(F::softmax(exg, -1), {exg}, eg); },
                     [=] { torch_grad(torch::softmax(txg, -1), {txg}, tg); }, both, "GB/s"});
    cases.push_back({"log_softmax [4096,1024] fwd+bwd", [=] { ember_grad(F::log_softmax(exg, -1), {exg}, eg); },
                     [=] { torch_grad(torch::log_softmax(txg, -1), {txg}, tg); }, both, "GB/s"});
    // dim 0 of the same data: the strided (column) path.
    cases.push_back({"softmax [4096,1024] dim 0", [=] { keep(F::softmax(ex, 0)); },
                     [=] { keep(torch::softmax(tx, 0)); }, fwd, "GB/s"});
  }
  {  // layer_norm / rms_norm [8192, 1024]
    const int64_t rows = 8192, cols = 1024;
    const double n = static_cast<double>(rows * cols), fwd = 2 * 4 * n, both = 5 * 4 * n;
    auto ex = ember::randn({rows, cols}), eg = ember::randn({rows, cols});
    auto ew = ember::randn({cols}), eb = ember::randn({cols});
    auto tx = torch::randn({rows, cols}), tg = torch::randn({rows, cols});
    auto tw = torch::randn({cols}), tb = torch::randn({cols});
    cases.push_back({"layer_norm [8192,1024] w+b", [=] { keep(F::layer_norm(ex, {cols}, ew, eb)); },
                     [=] { keep(torch::layer_norm(tx, {cols}, tw, tb)); }, fwd, "GB/s"});
    auto exg = ex.detach().requires_grad_(), ewg = ew.detach().requires_grad_(), ebg = eb.detach().requires_grad_();
    auto txg = tx.detach().requires_grad_(), twg = tw.detach().requires_grad_(), tbg = tb.detach().requires_grad_();
    cases.push_back({"layer_norm [8192,1024] w+b fwd+bwd",
                     [=] { ember_grad(F::layer_norm(exg, {cols}, ewg, ebg), {exg, ewg, ebg}, eg); },
                     [=] { torch_grad(torch::layer_norm(txg, {cols}, twg, tbg), {txg, twg, tbg}, tg); }, both,
                     "GB/s"});
    // torch 1.13 has no rms_norm: its composite, as a user would write it.
    cases.push_back({"rms_norm [8192,1024] w (torch: composite)", [=] { keep(F::rms_norm(ex, {cols}, ew, 1e-6)); },
                     [=] { keep(tx * torch::rsqrt(tx.pow(2).mean(-1, true) + 1e-6) * tw); }, fwd, "GB/s"});
  }
  {  // group_norm and training batch_norm on a conv activation [32, 64, 56, 56]
    const std::array<int64_t, 4> s = {32, 64, 56, 56};
    const double fwd = 2 * 4.0 * static_cast<double>(s[0] * s[1] * s[2] * s[3]);
    auto ex = ember::randn({s[0], s[1], s[2], s[3]}), ew = ember::randn({s[1]}), eb = ember::randn({s[1]});
    auto tx = torch::randn({s[0], s[1], s[2], s[3]}), tw = torch::randn({s[1]}), tb = torch::randn({s[1]});
    auto erm = ember::zeros({s[1]}), erv = ember::ones({s[1]});
    auto trm = torch::zeros({s[1]}), trv = torch::ones({s[1]});
    cases.push_back({"group_norm [32,64,56,56] G=32", [=] { keep(F::group_norm(ex, 32, ew, eb)); },
                     [=] { keep(torch::group_norm(tx, 32, tw, tb)); }, fwd, "GB/s"});
    cases.push_back({"batch_norm train [32,64,56,56]",
                     [=] { keep(F::batch_norm(ex, erm, erv, ew, eb, true)); },
                     [=] { keep(torch::batch_norm(tx, tw, tb, trm, trv, true, 0.1, 1e-5, false)); }, fwd, "GB/s"});
  }
  run_cases(cases, only);
  return 0;
}
