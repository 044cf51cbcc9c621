// The pooling family, ember against libtorch (harness: compare_harness.h), on
// a ResNet-like activation [32, 64, 56, 56] float32: max_pool2d (3x3 stride 2
// pad 1, and 2x2 stride 2), avg_pool2d 2x2, adaptive_avg_pool2d to 1x1 (the
// global pool) and to 7x7, forward and forward+backward; pad (reflect) and
// interpolate (nearest and bilinear, x2) on [32, 64, 28, 28].
// Rates count the bytes of the input read and the output written once
// (forward+backward adds the gradient read and the input gradient written).
#include "bench/compare_harness.h"
#include "ember/nn/functional/pooling.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

namespace {

void ember_grad(const ember::Tensor& y, const ember::Tensor& x, const ember::Tensor& g) {
  keep(ember::autograd::grad({y}, {x}, {g}));
}
void torch_grad(const torch::Tensor& y, const torch::Tensor& x, const torch::Tensor& g) {
  keep(torch::autograd::grad({y}, {x}, {g}));
}

double bytes(int64_t in, int64_t out) { return 4.0 * static_cast<double>(in + out); }

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;
  namespace TF = torch::nn::functional;

  const int64_t N = 32, C = 64, H = 56, W = 56, in = N * C * H * W;
  auto ex = ember::randn({N, C, H, W});
  auto tx = torch::randn({N, C, H, W});
  auto exg = ex.detach().requires_grad_();
  auto txg = tx.detach().requires_grad_();
  {  // max_pool2d
    const int64_t out3 = N * C * 28 * 28;
    cases.push_back({"max_pool2d 3x3 s2 p1 [32,64,56,56]", [=] { keep(F::max_pool2d(ex, 3, 2, 1)); },
                     [=] { keep(torch::max_pool2d(tx, 3, 2, 1)); }, bytes(in, out3), "GB/s"});
    cases.push_back({"max_pool2d 2x2 s2 [32,64,56,56]", [=] { keep(F::max_pool2d(ex, 2)); },
                     [=] { keep(torch::max_pool2d(tx, 2)); }, bytes(in, out3), "GB/s"});
    auto eg = ember::randn({N, C, 28, 28});
    auto tg = torch::randn({N, C, 28, 28});
    cases.push_back({"max_pool2d 3x3 s2 p1 fwd+bwd", [=] { ember_grad(F::max_pool2d(exg, 3, 2, 1), exg, eg); },
                     [=] { torch_grad(torch::max_pool2d(txg, 3, 2, 1), txg, tg); }, 2 * bytes(in, out3), "GB/s"});
  }
  {  // avg_pool2d
    const int64_t out = N * C * 28 * 28;
    cases.push_back({"avg_pool2d 2x2 s2 [32,64,56,56]", [=] { keep(F::avg_pool2d(ex, 2)); },
                     [=] { keep(torch::avg_pool2d(tx, 2)); }, bytes(in, out), "GB/s"});
    auto eg = ember::randn({N, C, 28, 28});
    auto tg = torch::randn({N, C, 28, 28});
    cases.push_back({"avg_pool2d 2x2 s2 fwd+bwd", [=] { ember_grad(F::avg_pool2d(exg, 2), exg, eg); },
                     [=] { torch_grad(torch::avg_pool2d(txg, 2), txg, tg); }, 2 * bytes(in, out), "GB/s"});
  }
  {  // adaptive_avg_pool2d
    cases.push_back({"adaptive_avg_pool2d ->1x1 [32,64,56,56]", [=] { keep(F::adaptive_avg_pool2d(ex, 1)); },
                     [=] {
                       keep(torch::adaptive_avg_pool2d(tx, {1, 1}));
                     },
                     bytes(in, N * C), "GB/s"});
    cases.push_back({"adaptive_avg_pool2d ->7x7 [32,64,56,56]", [=] { keep(F::adaptive_avg_pool2d(ex, 7)); },
                     [=] {
                       keep(torch::adaptive_avg_pool2d(tx, {7, 7}));
                     },
                     bytes(in, N * C * 49), "GB/s"});
    auto eg = ember::randn({N, C, 1, 1});
    auto tg = torch::randn({N, C, 1, 1});
    cases.push_back({"adaptive_avg_pool2d ->1x1 fwd+bwd", [=] { ember_grad(F::adaptive_avg_pool2d(exg, 1), exg, eg); },
                     [=] {
                       torch_grad(torch::adaptive_avg_pool2d(txg, {1, 1}), txg, tg);
                     },
                     2 * bytes(in, N * C), "GB/s"});
  }
  {  // pad and interpolate on [32, 64, 28, 28]
    const int64_t h = 28, small = N * C * h * h;
    auto es = ember::randn({N, C, h, h});
    auto ts = torch::randn({N, C, h, h});
    cases.push_back({"pad reflect 1 [32,64,28,28]",
                     [=] {
                       keep(F::pad(es, {1, 1, 1, 1}, "reflect"));
                     },
                     [=] {
                       keep(TF::pad(ts, TF::PadFuncOptions({1, 1, 1, 1}).mode(torch::kReflect)));
                     },
                     bytes(small, N * C * 30 * 30), "GB/s"});
    F::InterpolateOptions nearest, bilinear;
    nearest.scale_factor = std::vector<double>{2.0};
    bilinear.scale_factor = std::vector<double>{2.0};
    bilinear.mode = "bilinear";
    cases.push_back(
        {"interpolate nearest x2 [32,64,28,28]", [=] { keep(F::interpolate(es, nearest)); },
         [=] {
           keep(TF::interpolate(ts, TF::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0})));
         },
         bytes(small, 4 * small), "GB/s"});
    cases.push_back({"interpolate bilinear x2 [32,64,28,28]", [=] { keep(F::interpolate(es, bilinear)); },
                     [=] {
                       keep(TF::interpolate(ts, TF::InterpolateFuncOptions()
                                                    .scale_factor(std::vector<double>{2.0, 2.0})
                                                    .mode(torch::kBilinear)
                                                    .align_corners(false)));
                     },
                     bytes(small, 4 * small), "GB/s"});
  }
  run_cases(cases, only);
  return 0;
}
