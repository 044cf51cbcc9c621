#include "tests/fuzz/fuzz_readers.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "ember/data/csv.h"
#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/idx.h"
#include "ember/error.h"
#include "ember/generator.h"
#include "ember/jit.h"
#include "ember/nn.h"
#include "ember/ops.h"
#include "ember/optim.h"
#include "ember/serialize.h"
#include "ember/training_checkpoint.h"
#include "jit/graph.h"
#include "tools/ember/train_config.h"

namespace ember::fuzz {
namespace {

// The readers take paths: each input goes through one file per process
// (in memory where /dev/shm exists), rewritten for every input and removed
// at exit.
class InputFile {
 public:
  InputFile() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    path_ = (dir / ("ember_fuzz_input_" + std::to_string(::getpid()))).string();
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(std::span<const uint8_t> bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    EMBER_CHECK(out.good(), "fuzz: cannot write the input file ", path_);
    return path_;
  }

 private:
  std::string path_;
};

const std::string& write_input(std::span<const uint8_t> bytes) {
  static InputFile file;
  return file.write(bytes);
}

// What a checkpoint is restored into: built once, reused for every input.
struct RestoreTarget {
  nn::Sequential model{nn::Linear(4, 3), nn::BatchNorm1d(3)};
  std::unique_ptr<optim::Adam> optimizer;
  std::unique_ptr<optim::CosineAnnealingLR> scheduler;
  std::unique_ptr<data::DataLoader> loader;

  RestoreTarget() {
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-3));
    scheduler = std::make_unique<optim::CosineAnnealingLR>(*optimizer, 10);
    auto dataset = std::make_shared<data::TensorDataset>(arange(16, kFloat32).reshape({8, 2}),
                                                         arange(8, kInt64));
    loader = std::make_unique<data::DataLoader>(dataset, data::DataLoaderOptions{.batch_size = 3, .shuffle = true});
  }
};

RestoreTarget& restore_target() {
  static RestoreTarget target;
  return target;
}

void restore(const TrainingCheckpoint& checkpoint) {
  RestoreTarget& target = restore_target();
  for (const auto& [part, state] : checkpoint.states) {
    if (part == "model") target.model->load_state_dict(state);
    if (part == "optimizer") target.optimizer->load_state_dict(state);
    if (part == "scheduler") target.scheduler->load_state_dict(state);
    if (part == "train_data") target.loader->load_state_dict(state);
  }
}

constexpr std::array kReaders{
    NamedReader{"safetensors", read_safetensors}, NamedReader{"checkpoint", read_checkpoint},
    NamedReader{"train_config", read_train_config}, NamedReader{"idx", read_idx},
    NamedReader{"csv", read_csv}, NamedReader{"graph_archive", read_graph_archive},
};

// Inputs larger than this are not run: a valid archive may describe a model
// whose forward is legitimately expensive.
constexpr int64_t kMaxRunElements = int64_t{1} << 16;

}  // namespace

void read_safetensors(std::span<const uint8_t> bytes) {
  const SafetensorsFile file = load_safetensors(write_input(bytes));
  for (const auto& [name, t] : file.tensors)
    if (t.numel() > 0) (void)t.to(kFloat64).sum().item<double>();
}

void read_checkpoint(std::span<const uint8_t> bytes) {
  restore(load_training_checkpoint(write_input(bytes)));
}

void read_train_config(std::span<const uint8_t> bytes) {
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  (void)cli::parse_train_config(text, "fuzz input");
}

void read_idx(std::span<const uint8_t> bytes) {
  const Tensor t = data::load_idx(write_input(bytes));
  if (t.numel() > 0) (void)t.to(kFloat64).sum().item<double>();
}

void read_csv(std::span<const uint8_t> bytes) {
  if (bytes.size() < 2) return;
  const uint8_t flags = bytes[0];
  data::CsvOptions options;
  options.header = (flags & 1) != 0;
  options.delimiter = (flags & 2) != 0 ? ';' : ',';
  if ((flags & 4) != 0) options.target_index = static_cast<int8_t>(bytes[1]);
  if ((flags & 8) != 0) options.target_name = "label";
  options.dtype = (flags & 16) != 0 ? kFloat64 : kFloat32;
  if ((flags & 32) != 0) options.target_dtype = kInt64;
  const data::CsvTable table = data::load_csv(write_input(bytes.subspan(2)), options);
  (void)table.features.sum().item<double>();
}

void read_graph_archive(std::span<const uint8_t> bytes) {
  const jit::GraphModule module = jit::load(write_input(bytes));
  constexpr int64_t kBatch = 2;
  std::vector<Tensor> inputs;
  int64_t elements = 0;
  for (const jit::Value* input : module.graph().inputs()) {
    if (input->role != jit::InputRole::User) continue;
    const std::vector<int64_t> shape = jit::eval_shape(input->shape, kBatch);
    int64_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0 || d > kMaxRunElements) return;
      numel *= d;
      if (numel > kMaxRunElements) return;
    }
    elements += numel;
    if (elements > kMaxRunElements) return;
    inputs.push_back(zeros(shape, TensorOptions().dtype(input->dtype).device(input->device)));
  }
  for (const Tensor& out : module.forward(inputs))
    if (out.defined() && out.numel() > 0) (void)out.to(kFloat64).sum().item<double>();
}

std::span<const NamedReader> all_readers() { return kReaders; }

void write_seed_files(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(dir) / "checkpoint");
  fs::create_directories(fs::path(dir) / "safetensors");
  manual_seed(7);
  RestoreTarget& target = restore_target();
  // Two steps and a batch into the epoch: every part of the state is non-trivial.
  data::DataLoader::Iterator batch = target.loader->begin();
  for (int step = 0; step < 2; ++step, ++batch) {
    const Tensor x = randn({5, 4});
    target.optimizer->zero_grad();
    target.model->forward(x).pow(2).sum().backward();
    target.optimizer->step();
    target.scheduler->step();
  }
  TrainingCheckpoint checkpoint;
  checkpoint.states["model"] = target.model->state_dict();
  checkpoint.states["optimizer"] = target.optimizer->state_dict();
  checkpoint.states["scheduler"] = target.scheduler->state_dict();
  checkpoint.states["train_data"] = target.loader->state_dict();
  checkpoint.epoch = 0;
  checkpoint.step = 2;
  checkpoint.info["seed"] = "7";
  capture_global_rng(checkpoint);
  save_training_checkpoint(checkpoint, (fs::path(dir) / "checkpoint" / "ok_adam_cosine.ckpt").string());

  const TensorDict every_dtype{{"f32", randn({2, 3})},
                               {"f64", randn({3}, kFloat64)},
                               {"f16", randn({2, 2}).to(kFloat16)},
                               {"bf16", randn({4}).to(kBFloat16)},
                               {"i64", arange(6, kInt64).reshape({3, 2})},
                               {"i32", arange(3, kInt32)},
                               {"u8", arange(5, kUInt8)},
                               {"bool", arange(4, kInt64).remainder(2).to(kBool)},
                               {"scalar", scalar_tensor(2.5)},
                               {"empty", zeros({0, 3})}};
  save_safetensors(every_dtype, (fs::path(dir) / "safetensors" / "ok_every_dtype.safetensors").string(),
                   {{"note", "seed"}});
  save_safetensors({{"w", ones({1})}}, (fs::path(dir) / "safetensors" / "ok_one.safetensors").string());

  // Graph archives: an MLP (linear, relu, softmax), a CNN (conv, pool,
  // batch norm) in eval mode, and a frozen one whose weights are constants.
  fs::create_directories(fs::path(dir) / "graph_archive");
  const auto archive = [&](const std::string& name) { return (fs::path(dir) / "graph_archive" / name).string(); };
  nn::Sequential mlp(nn::Linear(6, 5), nn::ReLU(), nn::Linear(5, 3), nn::LogSoftmax(1));
  jit::save(jit::trace(mlp, randn({2, 6})), archive("ok_mlp.emb"));
  nn::Sequential cnn(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                     nn::Linear(2 * 3 * 3, 4));
  cnn->eval();
  jit::save(jit::trace(cnn, randn({2, 1, 8, 8})), archive("ok_cnn_eval.emb"));
  jit::save(jit::trace(mlp, randn({2, 6}), {.freeze = true}), archive("ok_mlp_frozen.emb"));
}

}  // namespace ember::fuzz
