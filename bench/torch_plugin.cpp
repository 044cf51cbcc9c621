// libember_bench_torch.so: the libtorch side of `ember bench --vs-torch`
// (the interface: tools/ember/bench_torch_abi.h). Each op below builds the
// same case as ember bench's table (tools/ember/bench_ops.cpp: same shapes,
// same arguments, N(0, 1) inputs) and calls libtorch's public op for it.
#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tools/ember/bench_torch_abi.h"

namespace {

struct Case {
  std::function<void()> run;
  bool cuda = false;
};

using Dims = std::vector<int64_t>;

// The case of `op` on `d`, or an exception naming what is wrong.
std::function<void()> make_case(const std::string& op, const Dims& d, torch::TensorOptions o) {
  auto need = [&](size_t n) {
    TORCH_CHECK(d.size() == n, op, " takes ", n, " sizes, got ", d.size());
  };
  auto in = [&](at::IntArrayRef sizes) { return torch::randn(sizes, o); };
  if (op == "mm") {
    need(3);
    return [a = in({d[0], d[1]}), b = in({d[1], d[2]})] { torch::mm(a, b); };
  }
  if (op == "addmm") {
    need(3);
    return [bias = in({d[2]}), a = in({d[0], d[1]}), b = in({d[1], d[2]})] { torch::addmm(bias, a, b); };
  }
  if (op == "bmm") {
    need(4);
    return [a = in({d[0], d[1], d[2]}), b = in({d[0], d[2], d[3]})] { torch::bmm(a, b); };
  }
  if (op == "conv2d") {  // N C H W K R: stride 1, padding R/2, with bias
    need(6);
    return [x = in({d[0], d[1], d[2], d[3]}), w = in({d[4], d[1], d[5], d[5]}), b = in({d[4]}), p = d[5] / 2] {
      torch::conv2d(x, w, b, 1, p);
    };
  }
  if (op == "max_pool2d" || op == "avg_pool2d") {  // N C H W R: R x R windows, stride R
    need(5);
    const int64_t r = d[4];
    if (op == "max_pool2d") return [x = in({d[0], d[1], d[2], d[3]}), r] { torch::max_pool2d(x, {r, r}, {r, r}); };
    return [x = in({d[0], d[1], d[2], d[3]}), r] { torch::avg_pool2d(x, {r, r}, {r, r}); };
  }
  if (op == "batch_norm") {  // training mode, running stats updated
    need(4);
    return [x = in(d), w = in({d[1]}), b = in({d[1]}), m = torch::zeros({d[1]}, o), v = torch::ones({d[1]}, o)] {
      torch::batch_norm(x, w, b, m, v, /*training=*/true, 0.1, 1e-5, /*cudnn_enabled=*/true);
    };
  }
  if (op == "layer_norm") {
    need(2);
    return [x = in(d), w = in({d[1]}), b = in({d[1]}), c = d[1]] { torch::layer_norm(x, {c}, w, b, 1e-5); };
  }
  if (op == "softmax") {
    need(2);
    return [x = in(d)] { torch::softmax(x, 1); };
  }
  if (op == "scaled_dot_product_attention") {
    // libtorch 1.13 has no public fused attention: its math path, softmax(Q K^T / sqrt(D)) V.
    need(4);
    return [q = in(d), k = in(d), v = in(d), scale = 1.0 / std::sqrt(static_cast<double>(d[3]))] {
      torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale, -1), v);
    };
  }
  if (op == "sum") return [x = in(d)] { x.sum(-1); };
  if (op == "mean") return [x = in(d)] { x.mean(-1); };
  if (op == "amax") return [x = in(d)] { x.amax(-1); };
  if (op == "add") return [a = in(d), b = in(d)] { torch::add(a, b); };
  if (op == "mul") return [a = in(d), b = in(d)] { torch::mul(a, b); };
  if (op == "exp") return [x = in(d)] { torch::exp(x); };
  if (op == "relu") return [x = in(d)] { torch::relu(x); };
  TORCH_CHECK(false, "the plugin has no case for op '", op, "'");
}

torch::Dtype dtype_of(const std::string& name) {
  if (name == "float32") return torch::kFloat32;
  if (name == "float64") return torch::kFloat64;
  if (name == "bfloat16") return torch::kBFloat16;
  if (name == "float16") return torch::kFloat16;
  TORCH_CHECK(false, "unknown dtype '", name, "'");
}

}  // namespace

extern "C" {

int ember_bench_torch_abi_version(void) { return EMBER_BENCH_TORCH_ABI_VERSION; }

const char* ember_bench_torch_version(void) { return TORCH_VERSION; }

void ember_bench_torch_set_threads(int n) { at::set_num_threads(n); }

void* ember_bench_torch_prepare(const char* op, const int64_t* dims, int num_dims, const char* dtype,
                                const char* device, char* error, size_t error_size) {
  try {
    torch::manual_seed(1);
    const torch::Device dev(device);
    auto c = std::make_unique<Case>();
    c->cuda = dev.is_cuda();
    c->run = make_case(op, Dims(dims, dims + num_dims), torch::TensorOptions().dtype(dtype_of(dtype)).device(dev));
    return c.release();
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  }
  return nullptr;
}

void ember_bench_torch_run(void* handle) {
  Case* c = static_cast<Case*>(handle);
  c->run();
  if (c->cuda) torch::cuda::synchronize();
}

void ember_bench_torch_release(void* handle) { delete static_cast<Case*>(handle); }

}  // extern "C"
