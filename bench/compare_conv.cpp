// ember against libtorch (oneDNN) on the convolutions of issue 4, float32,
// forward and forward+backward (gradients for input, weight and bias), on 1
// and 2 threads (harness: compare_harness.h). The rate column counts 2 flops
// per multiply-add of the convolution itself: forward 2*N*O*P*K, forward+backward
// three times that (the bias terms are left out).
//
//   env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp \
//     env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/release/bench/compare_conv [name filter]
#include <torch/torch.h>

#include "bench/compare_harness.h"
#include "ember/nn/functional/conv.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

namespace {

struct ConvShape {
  const char* name;
  int64_t n, c, o, h, w, k, pad;
};

void add_cases(std::vector<Case>& cases, const ConvShape& s) {
  const int64_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
  const double flops = 2.0 * s.n * s.o * oh * ow * s.c * s.k * s.k;
  auto ex = ember::randn({s.n, s.c, s.h, s.w}), ew = ember::randn({s.o, s.c, s.k, s.k}), eb = ember::randn({s.o});
  auto tx = torch::randn({s.n, s.c, s.h, s.w}), tw = torch::randn({s.o, s.c, s.k, s.k}), tb = torch::randn({s.o});
  const int64_t pad = s.pad;
  cases.push_back({std::string(s.name) + " forward", [=] { keep(F::conv2d(ex, ew, eb, 1, pad)); },
                   [=] { keep(torch::conv2d(tx, tw, tb, 1, pad)); }, flops, "GFLOP/s"});

  auto egy = ember::randn({s.n, s.o, oh, ow});
  auto tgy = torch::randn({s.n, s.o, oh, ow});
  auto exr = ex.clone().requires_grad_(), ewr = ew.clone().requires_grad_(), ebr = eb.clone().requires_grad_();
  auto txr = tx.clone().requires_grad_(), twr = tw.clone().requires_grad_(), tbr = tb.clone().requires_grad_();
  cases.push_back({std::string(s.name) + " forward+backward",
                   [=] {
                     auto y = F::conv2d(exr, ewr, ebr, 1, pad);
                     keep(ember::autograd::grad({y}, {exr, ewr, ebr}, {egy}));
                   },
                   [=] {
                     auto y = torch::conv2d(txr, twr, tbr, 1, pad);
                     keep(torch::autograd::grad({y}, {txr, twr, tbr}, {tgy}));
                   },
                   3 * flops, "GFLOP/s"});
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;
  add_cases(cases, {"conv2d 32x64->64 56x56 3x3 p1", 32, 64, 64, 56, 56, 3, 1});
  add_cases(cases, {"conv2d 64x1->6 28x28 5x5", 64, 1, 6, 28, 28, 5, 0});
  run_cases(cases, only);
  return 0;
}
