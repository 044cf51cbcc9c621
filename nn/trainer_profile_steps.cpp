// ProfileSteps (<ember/trainer.h>): a profiler::Profile over a window of
// optimiser steps.
#include "ember/error.h"
#include "ember/trainer.h"

namespace ember {

ProfileSteps::ProfileSteps(int64_t first, int64_t end, std::string trace_path, profiler::ProfileOptions options,
                           bool request_stop)
    : first_(first), end_(end), trace_path_(std::move(trace_path)), options_(options), request_stop_(request_stop) {
  EMBER_CHECK(first >= 0 && end > first, "ProfileSteps: the steps to profile must be first:end with 0 <= first < end, got ",
              first, ":", end);
}

void ProfileSteps::begin() {
  if (!profile_ && !finished_) profile_ = std::make_unique<profiler::Profile>(options_);
}

void ProfileSteps::finish(Trainer& trainer) {
  if (!profile_ || finished_) return;
  profile_->stop();
  finished_ = true;
  if (!trace_path_.empty() && trainer.is_main_process()) profile_->export_chrome_trace(trace_path_);
  if (request_stop_) trainer.request_stop();
}

void ProfileSteps::on_train_start(Trainer& trainer) {
  if (trainer.step() >= first_ && trainer.step() < end_) begin();
}

void ProfileSteps::on_batch_end(Trainer& trainer, const BatchProgress& progress) {
  if (progress.step >= end_) finish(trainer);
  else if (progress.step >= first_) begin();
}

void ProfileSteps::on_train_end(Trainer& trainer, const FitResult&) { finish(trainer); }

}  // namespace ember
