// Training checkpoints: everything a run needs to resume bit for bit, in one
// file that is written atomically and verified when read.
//
//   ember::TrainingCheckpoint ckpt;
//   ckpt.states["model"] = model->state_dict();
//   ckpt.states["optimizer"] = optimizer.state_dict();
//   ckpt.epoch = epoch;
//   ckpt.step = step;
//   ckpt.info["seed"] = "0";                     // how the run was made
//   ember::capture_global_rng(ckpt);
//   ember::save_training_checkpoint(ckpt, "out/last.ckpt");
//   ...
//   ember::TrainingCheckpoint back = ember::load_training_checkpoint("out/last.ckpt");
//   model->load_state_dict(back.states.at("model"));
//   ember::restore_global_rng(back);
//
// The file is a safetensors file (readable by PyTorch's and Hugging Face's
// tools): the tensors of part P are stored as "P/<key>", and the metadata
// holds the format tag, epoch, step, the generator state, the info strings
// (as "info.<key>"), ember's version and a CRC-32 over all of it. A
// truncated, corrupted or foreign file is an ember::Error naming the file
// and what was wrong. `ember inspect checkpoint PATH` prints one.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ember/serialize.h"

namespace ember {

struct TrainingCheckpoint {
  // State dicts by part: "model", "optimizer", "scheduler", "scaler", "data", ...
  // A part name is letters, digits, '_' and '-'.
  std::map<std::string, TensorDict> states;
  int64_t epoch = 0;
  int64_t step = 0;
  // The global generator's state (see capture_global_rng).
  uint64_t rng_seed = 0;
  uint64_t rng_offset = 0;
  // How the run was made: seed, thread count, deterministic mode, dtype policy, config, ...
  std::map<std::string, std::string> info;
};

// Writes atomically (temporary file, fsync, rename): a reader sees the old
// checkpoint or the new one, never a partial one.
void save_training_checkpoint(const TrainingCheckpoint& checkpoint, const std::string& path);
// Reads and verifies the format tag and the checksum.
TrainingCheckpoint load_training_checkpoint(const std::string& path);

// Copies default_generator()'s (seed, offset) into / out of a checkpoint.
void capture_global_rng(TrainingCheckpoint& checkpoint);
void restore_global_rng(const TrainingCheckpoint& checkpoint);

}  // namespace ember
