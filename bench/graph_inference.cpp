// Graph inference: the three demo models of `ember train` (config/*.yaml),
// built as `ember train` builds them, in eval mode with random weights from
// seed 0, run three ways in one process: ember eager, the traced + optimised
// graph archive (jit::trace, jit::optimize, jit::save, jit::load), and
// libtorch's TorchScript module of the same architecture holding the same
// weights (torch.jit.trace + torch.jit.freeze, made by
// bench/graph_inference_torch.py from the safetensors files this program
// writes). Batch 1 latency and batch 64 throughput on 1 and 2 threads,
// interleaved A/B/C, medians and ratios; then the time to trace and optimise
// the transformer (docs/performance.md, "Graph inference").
//
//   build/release/bench/graph_inference DIR          # writes DIR/{mlp,cnn,transformer}.safetensors
//   python3 bench/graph_inference_torch.py DIR        # Debian's torch 1.13: DIR/*.pt
//   build/release/bench/graph_inference DIR          # now with the libtorch column
//
// Run the libtorch side fairly, as bench/run_all.sh does: OpenBLAS on
// LD_LIBRARY_PATH, OPENBLAS_CORETYPE unset.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ember/jit.h"
#include "ember/serialize.h"
#include "tools/ember/train_config.h"
#include "tools/ember/train_models.h"

namespace fs = std::filesystem;

namespace {

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Demo {
  std::string name;             // mlp, cnn, transformer
  ember::TrainableModel model;  // eager, eval mode
  std::optional<ember::jit::GraphModule> archive;
  std::optional<torch::jit::Module> torch_module;
};

// The config's model as `ember train` builds it, seeded, in eval mode; its
// state and architecture go to DIR/<name>.safetensors for the TorchScript side.
ember::TrainableModel build_model(const ember::cli::ModelConfig& config, const fs::path& safetensors) {
  ember::manual_seed(0);
  ember::TrainableModel model = ember::cli::make_model(config);
  model.module->eval();
  std::ostringstream hidden;
  for (size_t i = 0; i < config.hidden.size(); ++i) hidden << (i ? "," : "") << config.hidden[i];
  ember::save_safetensors(model.module->state_dict(), safetensors.string(),
                          {{"model", config.name},
                           {"hidden", hidden.str()},
                           {"dropout", std::to_string(config.dropout)},
                           {"patch", std::to_string(config.patch)},
                           {"d_model", std::to_string(config.d_model)},
                           {"heads", std::to_string(config.heads)},
                           {"layers", std::to_string(config.layers)},
                           {"dim_feedforward", std::to_string(config.dim_feedforward)}});
  return model;
}

// Traced with a dynamic batch (as `ember export` traces) but with gradients
// off, as the TorchScript side is traced under torch.no_grad(): what runs is
// then what eager inference runs (max_pool2d without the indices a backward
// would need). Not frozen: with TraceOptions::freeze, constant folding turns
// the linear layers' transposed weights into contiguous constants, and batch
// 1 ran slower with them (the MLP: 108 against 58 us a call).
ember::jit::GraphModule trace_for_inference(const ember::TrainableModel& model) {
  ember::NoGradGuard no_grad;
  const auto forward = [&](const std::vector<ember::Tensor>& x) {
    return std::vector<ember::Tensor>{model.forward(x[0])};
  };
  return ember::jit::trace_module(model.module, forward, {ember::randn({2, 1, 28, 28})});
}

// The default passes, saved and loaded back as a deploying program would.
ember::jit::GraphModule archive_of(const ember::TrainableModel& model, const std::string& name) {
  const fs::path file =
      fs::temp_directory_path() / ("graph_inference_" + name + "_" + std::to_string(getpid()) + ".emb");
  ember::jit::GraphModule graph = trace_for_inference(model);
  ember::jit::optimize(graph);
  ember::jit::save(graph, file.string());
  ember::jit::GraphModule loaded = ember::jit::load(file.string());
  fs::remove(file);
  return loaded;
}

at::Tensor to_torch(const ember::Tensor& t) {
  const ember::Tensor c = t.contiguous();
  return torch::from_blob(c.data_ptr<float>(), c.sizes().vec(), torch::kFloat32).clone();
}

double max_abs_diff(const ember::Tensor& a, const at::Tensor& b) {
  return (to_torch(a) - b).abs().max().item<double>();
}

struct Timing {
  double wall, cpu;  // medians, seconds per call
};

// Medians over `rounds` samples of each variant, interleaved (A/B/C, then
// B/C/A, ...: the order rotates so that no side always runs after the same
// one); a sample is a batch of calls of about 5 ms, its time divided by the
// calls. Before each sample the process sleeps 20 ms: on 2 busy cores the
// other runtime's workers, still polling for work after its last call
// (libtorch's OpenMP threads, ember's pool), otherwise take the core this
// side's second thread needs, and 2-thread rows measured that contention
// (up to 100x) instead of the models.
std::vector<Timing> interleaved(const std::vector<std::function<void()>>& variants, int rounds) {
  const size_t n = variants.size();
  std::vector<int64_t> calls(n);
  for (size_t v = 0; v < n; ++v) {
    variants[v]();  // warm-up: caches, allocator, pages, thread pools
    const auto t0 = std::chrono::steady_clock::now();
    int64_t count = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(5)) {
      variants[v]();
      ++count;
    }
    calls[v] = std::max<int64_t>(count, 1);
  }
  std::vector<std::vector<double>> wall(n), cpu(n);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const size_t v = (i + static_cast<size_t>(r)) % n;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the other side's spinning workers go idle
      const double c0 = cpu_s();
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t k = 0; k < calls[v]; ++k) variants[v]();
      const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      wall[v].push_back(w / static_cast<double>(calls[v]));
      cpu[v].push_back((cpu_s() - c0) / static_cast<double>(calls[v]));
    }
  }
  std::vector<Timing> out;
  for (size_t v = 0; v < n; ++v) {
    std::sort(wall[v].begin(), wall[v].end());
    std::sort(cpu[v].begin(), cpu[v].end());
    out.push_back({wall[v][wall[v].size() / 2], cpu[v][cpu[v].size() / 2]});
  }
  return out;
}

// "123.4 us" for latencies (batch 1), "12345 /s" samples per second (batch 64).
std::string cell(double seconds, int64_t batch) {
  char buf[32];
  if (batch == 1) std::snprintf(buf, sizeof buf, "%.1f us", seconds * 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f /s", static_cast<double>(batch) / seconds);
  return buf;
}

void print_row(const Demo& d, int64_t batch, int threads, const char* clock, const Timing& eager,
               const Timing& archive, const std::optional<Timing>& torch_t, bool use_cpu) {
  auto pick = [&](const Timing& t) { return use_cpu ? t.cpu : t.wall; };
  std::printf("| %-11s | %2ld | %d | %-4s | %11s | %11s | %11s | %5.2fx | ", d.name.c_str(), batch, threads, clock,
              cell(pick(eager), batch).c_str(), cell(pick(archive), batch).c_str(),
              torch_t ? cell(pick(*torch_t), batch).c_str() : "-", pick(eager) / pick(archive));
  if (torch_t) std::printf("%5.2fx |\n", pick(*torch_t) / pick(archive));
  else std::printf("    - |\n");
}

void bench_demos(std::vector<Demo>& demos) {
  std::printf("| model | batch | threads | clock | ember eager | archive | libtorch traced | eager/archive | "
              "libtorch/archive |\n|---|---|---|---|---|---|---|---|---|\n");
  for (int threads : {1, 2}) {
    ember::set_num_threads(threads);
    at::set_num_threads(threads);
    for (Demo& d : demos) {
      for (int64_t batch : {int64_t{1}, int64_t{64}}) {
        ember::manual_seed(1);
        const ember::Tensor x = ember::randn({batch, 1, 28, 28});
        const std::vector<torch::jit::IValue> tx{to_torch(x)};
        std::vector<std::function<void()>> variants{
            [&] {
              ember::InferenceMode guard;
              (void)d.model.forward(x);
            },
            [&] {
              ember::InferenceMode guard;
              (void)d.archive->forward(x);
            }};
        if (d.torch_module)
          variants.push_back([&] {
            c10::InferenceMode guard;
            (void)d.torch_module->forward(tx);
          });
        const std::vector<Timing> t = interleaved(variants, 21);
        const std::optional<Timing> torch_t = d.torch_module ? std::optional<Timing>(t[2]) : std::nullopt;
        print_row(d, batch, threads, "wall", t[0], t[1], torch_t, false);
        if (threads == 1) print_row(d, batch, threads, "cpu", t[0], t[1], torch_t, true);
        std::fflush(stdout);
      }
    }
  }
}

void check_outputs(std::vector<Demo>& demos) {
  for (Demo& d : demos) {
    for (int64_t batch : {int64_t{1}, int64_t{64}}) {
      ember::manual_seed(2);
      const ember::Tensor x = ember::randn({batch, 1, 28, 28});
      ember::InferenceMode guard;
      const ember::Tensor eager = d.model.forward(x);
      std::printf("%-11s batch %2ld: max abs difference archive vs eager %.3g", d.name.c_str(), batch,
                  max_abs_diff(d.archive->forward(x), to_torch(eager)));
      if (d.torch_module) {
        c10::InferenceMode torch_guard;
        const at::Tensor t = d.torch_module->forward({to_torch(x)}).toTensor();
        std::printf(", libtorch vs eager %.3g", max_abs_diff(eager, t));
      }
      std::printf("\n");
    }
  }
}

// Tracing (at two batch sizes, for the dynamic batch) + the default passes
// for the transformer, no save: medians of 9 after one warm-up.
void bench_trace(const Demo& transformer) {
  ember::set_num_threads(1);
  std::vector<double> trace_ms, total_ms;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ember::jit::GraphModule graph = trace_for_inference(transformer.model);
    const auto t1 = std::chrono::steady_clock::now();
    ember::jit::optimize(graph);
    const auto t2 = std::chrono::steady_clock::now();
    if (i == 0) continue;  // the first run also warms up code and allocator
    trace_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    total_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  std::sort(trace_ms.begin(), trace_ms.end());
  std::sort(total_ms.begin(), total_ms.end());
  std::printf("\ntransformer: trace + default passes, 1 thread, median of %zu: %.1f ms (min %.1f, max %.1f; trace alone "
              "%.1f ms)\n",
              total_ms.size(), total_ms[total_ms.size() / 2], total_ms.front(), total_ms.back(),
              trace_ms[trace_ms.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything runs an op: libtorch's inter-op pool is fixed on first use.
  at::set_num_interop_threads(1);
  at::set_num_threads(1);
  ember::set_num_threads(1);
  const fs::path dir = argc > 1 ? argv[1] : "graph_inference_models";
  fs::create_directories(dir);
  std::printf("load average at start: %s\n", load_average().c_str());

  std::vector<Demo> demos;
  bool missing_pt = false;
  for (const char* name : {"mlp", "cnn", "transformer"}) {
    const ember::cli::TrainConfig config =
        ember::cli::load_train_config(std::string(EMBER_CONFIG_DIR) + "/fashion_mnist_" + name + ".yaml");
    Demo d{name, build_model(config.model, dir / (std::string(name) + ".safetensors")), std::nullopt, std::nullopt};
    d.archive = archive_of(d.model, name);
    const fs::path pt = dir / (std::string(name) + ".pt");
    if (fs::exists(pt)) d.torch_module = torch::jit::load(pt.string());
    else missing_pt = true;
    demos.push_back(std::move(d));
  }
  if (missing_pt)
    std::printf("no TorchScript module for some models in %s: make them with\n"
                "  python3 bench/graph_inference_torch.py %s\n(Debian's torch 1.13), then run this again; "
                "libtorch columns show '-' until then\n",
                dir.c_str(), dir.c_str());
  check_outputs(demos);
  std::printf("\nbatch 1: latency per call; batch 64: samples per second; ratios are time ratios (above 1: the "
              "archive is faster)\n");
  bench_demos(demos);
  bench_trace(demos[2]);
  std::printf("load average at end: %s\n", load_average().c_str());
  return 0;
}
