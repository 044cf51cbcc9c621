// TensorBoardLogger (<ember/trainer.h>): a run's metrics as TensorBoard
// scalars. BatchProgress carries the epoch's running means; the sums behind
// them, compared with the sums at the last point written, give the means of
// just the batches in between.
#include <algorithm>

#include "ember/error.h"
#include "ember/summary_writer.h"
#include "ember/trainer.h"

namespace ember {

TensorBoardLogger::TensorBoardLogger(std::string log_dir, int64_t every_n_batches,
                                     std::shared_ptr<nn::Module> histograms_of)
    : log_dir_(std::move(log_dir)), every_(every_n_batches), histograms_of_(std::move(histograms_of)) {
  EMBER_CHECK(every_ >= 1, "TensorBoardLogger: every_n_batches must be >= 1, got ", every_);
}

TensorBoardLogger::~TensorBoardLogger() = default;

void TensorBoardLogger::on_train_start(Trainer& trainer) {
  writer_.reset();
  if (trainer.is_main_process()) writer_ = std::make_unique<SummaryWriter>(log_dir_);  // the other ranks write nothing
  epoch_ = 0;
}

void TensorBoardLogger::on_batch_end(Trainer& trainer, const BatchProgress& progress) {
  if (!writer_) return;
  if (progress.epoch != epoch_) {
    epoch_ = progress.epoch;
    loss_sum_ = correct_ = seconds_ = 0;
    samples_ = 0;
  }
  const int64_t done = progress.batch - progress.resumed_after;
  if (done % every_ != 0 && progress.batch != progress.batches_per_epoch) return;
  const int64_t samples = progress.samples - samples_;
  if (samples <= 0) return;
  const auto n = static_cast<double>(progress.samples);
  const double loss_sum = progress.loss * n, correct = progress.accuracy * n;
  const int64_t step = progress.step;
  writer_->add_scalar("train/loss", (loss_sum - loss_sum_) / static_cast<double>(samples), step);
  if (trainer.options().classification)
    writer_->add_scalar("train/accuracy", (correct - correct_) / static_cast<double>(samples), step);
  writer_->add_scalar("train/lr", trainer.current_lr(), step);
  if (progress.seconds > seconds_)
    writer_->add_scalar("train/samples_per_second", static_cast<double>(samples) / (progress.seconds - seconds_), step);
  loss_sum_ = loss_sum;
  correct_ = correct;
  samples_ = progress.samples;
  seconds_ = progress.seconds;
}

void TensorBoardLogger::on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) {
  if (!writer_) return;
  const int64_t step = trainer.step();
  const bool classification = trainer.options().classification;
  writer_->add_scalar("epoch/train_loss", metrics.train.loss, step);
  if (classification) writer_->add_scalar("epoch/train_acc", metrics.train.accuracy, step);
  if (metrics.test) {
    writer_->add_scalar("epoch/test_loss", metrics.test->loss, step);
    if (classification) writer_->add_scalar("epoch/test_acc", metrics.test->accuracy, step);
  }
  writer_->add_scalar("epoch/lr", metrics.lr, step);
  if (metrics.seconds > 0)
    writer_->add_scalar("epoch/samples_per_second", static_cast<double>(metrics.train.samples) / metrics.seconds, step);
  if (histograms_of_) {
    for (const auto& [name, p] : histograms_of_->named_parameters()) writer_->add_histogram("parameters/" + name, p, step);
  }
}

std::string TensorBoardLogger::file_path() const { return writer_ ? writer_->file_path() : std::string(); }

}  // namespace ember
