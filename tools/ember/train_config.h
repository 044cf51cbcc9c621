// The configuration of `ember train`, read from YAML (docs/training.md has
// the reference). Every problem (unknown key, wrong type, bad value, missing
// data file) is an ember::Error naming the key and where it came from: the
// file and line, or the --set that gave it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::cli {

struct ModelConfig {
  std::string name;                     // mlp | cnn | transformer
  std::vector<int64_t> hidden{256, 128};  // mlp: the two hidden layer sizes
  double dropout = 0;                   // mlp, transformer
  int64_t patch = 7;                    // transformer: patch side (28 must be a multiple)
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t layers = 2;
  int64_t dim_feedforward = 128;
};

struct DataConfig {
  std::string name = "fashion_mnist";
  std::string path = "/usr/share/datasets/fashion-mnist";
  int64_t batch_size = 64;
  int64_t eval_batch_size = 1000;
  int64_t num_workers = 0;
  std::string cache;  // a dataset cache folder (empty: decode the IDX files each run)
};

struct OptimizerConfig {
  std::string name = "adam";  // sgd | adam | adamw
  double lr = 1e-3;
  double momentum = 0;        // sgd
  bool nesterov = false;      // sgd
  double weight_decay = 0;
  std::vector<double> betas{0.9, 0.999};  // adam, adamw
  double eps = 1e-8;                      // adam, adamw
};

struct ScheduleConfig {
  std::string name = "none";  // none | cosine | step | onecycle
  int64_t warmup_steps = 0;   // linear warm-up from 1% of the lr (not with onecycle)
  double min_lr = 0;          // cosine
  int64_t step_size = 1;      // step: epochs between decays
  double gamma = 0.1;         // step
  std::optional<double> max_lr;  // onecycle (default: optimizer.lr)
  double pct_start = 0.3;        // onecycle
};

struct TrainConfig {
  ModelConfig model;
  DataConfig data;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  int64_t epochs = 5;
  int64_t threads = 2;
  uint64_t seed = 0;
  std::string amp = "none";  // "none" or "bf16" (TrainerOptions::autocast)
  std::string output = "runs/train";
  int64_t accumulate_grad_batches = 1;
  std::optional<double> clip_grad_norm;
  // TensorBoard event files go here (key `tensorboard`: true for
  // <output>/tensorboard, or a folder; empty: none).
  std::string tensorboard;
  // After training, the best model (best.ckpt's weights, else the final
  // ones) is exported here (key `export`): .onnx as ONNX, .emb as a graph
  // archive; empty: no export.
  std::string export_path;
  // The effective configuration (the file with the --set overrides applied), as YAML.
  std::string text;
};

// Reads `yaml_text` (named `source` in errors, usually the file's path) with
// the overrides "key.sub=value" applied; the value is YAML ("0.01", "[512, 256]").
TrainConfig parse_train_config(const std::string& yaml_text, const std::string& source,
                               const std::vector<std::string>& overrides = {});
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace ember::cli
