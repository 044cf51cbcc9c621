// TensorBoard event files, written by ember itself (no TensorFlow, no
// protobuf library), like torch.utils.tensorboard.SummaryWriter:
//
//   ember::SummaryWriter writer("runs/exp1/tensorboard");
//   for (int64_t step = 0; step < steps; ++step) {
//     ...
//     writer.add_scalar("train/loss", loss.item<double>(), step);
//   }
//   writer.add_histogram("fc1.weight", model->fc1->weight, step);
//
// then `tensorboard --logdir runs/exp1/tensorboard`. docs/profiling.md
// ("TensorBoard") has the format; `ember train --set tensorboard=true` logs
// a run's metrics this way (ember::TensorBoardLogger in <ember/trainer.h>).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ember/tensor.h"

namespace ember {

class SummaryWriter {
 public:
  // Creates `log_dir` (and its parents) and a new event file in it, named
  // events.out.tfevents.<unix seconds>.<host>.<pid>.<n> as TensorBoard
  // expects; its first event is the file version.
  explicit SummaryWriter(const std::string& log_dir);
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // Appends one value of the scalar series `tag` at `step` (stored as a
  // 32-bit float, as TensorBoard does), stamped with the wall time now or
  // `wall_time` (seconds since 1970).
  void add_scalar(const std::string& tag, double value, int64_t step);
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time);
  // A histogram of `values` (any dtype, any device): `bins` equal-width
  // buckets from the smallest value to the largest. NaN or infinity is an error.
  void add_histogram(const std::string& tag, const Tensor& values, int64_t step, int64_t bins = 30);

  // Every add_* call is handed to the OS before it returns, so a running
  // TensorBoard sees it; flush() is there for symmetry with PyTorch.
  void flush();
  // The event file being written.
  const std::string& file_path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ember
