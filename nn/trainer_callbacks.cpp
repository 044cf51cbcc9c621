// The built-in Trainer callbacks (<ember/trainer.h>): checkpoints, early
// stopping, the lr monitor, the progress line and the metrics files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "ember/error.h"
#include "ember/trainer.h"

namespace ember {

namespace {

bool improves(double value, std::optional<double> best, bool maximize, double min_delta) {
  if (!best) return true;
  return maximize ? value > *best + min_delta : value < *best - min_delta;
}

// "1:05:09" or "5:09".
std::string clock_time(double seconds) {
  const auto total = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return text;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  EMBER_CHECK(out.good(), "Trainer: cannot write ", path.string());
}

const char* kCsvHeader = "epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds,data_wait_seconds";

std::string csv_row(const EpochMetrics& m) {
  std::ostringstream os;
  os << std::setprecision(8) << m.epoch << ',' << m.train.loss << ',' << m.train.accuracy << ',';
  if (m.test) os << m.test->loss << ',' << m.test->accuracy;
  else os << ',';
  os << ',' << m.lr << ',' << m.seconds << ',' << m.data_wait_seconds;
  return os.str();
}

// The rows csv_row wrote; malformed lines are skipped.
std::vector<EpochMetrics> read_csv(const std::filesystem::path& path) {
  std::vector<EpochMetrics> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (line.ends_with(',')) cells.emplace_back();
    if (cells.size() != 8) continue;
    try {
      EpochMetrics m;
      m.epoch = std::stoll(cells[0]);
      m.train = {std::stod(cells[1]), std::stod(cells[2]), 0};
      if (!cells[3].empty()) m.test = EvalResult{std::stod(cells[3]), std::stod(cells[4]), 0};
      m.lr = std::stod(cells[5]);
      m.seconds = std::stod(cells[6]);
      m.data_wait_seconds = std::stod(cells[7]);
      rows.push_back(m);
    } catch (const std::exception&) {
      continue;
    }
  }
  return rows;
}

}  // namespace

// ---- CheckpointCallback ----

CheckpointCallback::CheckpointCallback(std::string dir, std::string monitor, bool maximize)
    : dir_(std::move(dir)), monitor_(std::move(monitor)), maximize_(maximize) {}

void CheckpointCallback::on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) {
  // Every rank keeps track of the best value (they all see the same metrics); rank 0 writes.
  const bool writes = trainer.is_main_process();
  std::optional<TrainingCheckpoint> checkpoint;
  if (writes) {
    std::filesystem::create_directories(dir_);
    checkpoint = trainer.make_checkpoint();
    save_training_checkpoint(*checkpoint, (std::filesystem::path(dir_) / "last.ckpt").string());
  }
  const double value = metrics.get(monitor_);
  if (improves(value, best_, maximize_, 0)) {
    best_ = value;
    if (writes) save_training_checkpoint(*checkpoint, (std::filesystem::path(dir_) / "best.ckpt").string());
  }
}

// ---- EarlyStopping ----

EarlyStopping::EarlyStopping(std::string monitor, int64_t patience, bool maximize, double min_delta)
    : monitor_(std::move(monitor)), patience_(patience), maximize_(maximize), min_delta_(min_delta) {
  EMBER_CHECK(patience_ >= 1, "EarlyStopping: patience must be >= 1, got ", patience_);
  EMBER_CHECK(min_delta_ >= 0, "EarlyStopping: min_delta must be >= 0, got ", min_delta_);
}

void EarlyStopping::on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) {
  const double value = metrics.get(monitor_);
  if (improves(value, best_, maximize_, min_delta_)) {
    best_ = value;
    epochs_without_improvement_ = 0;
    return;
  }
  if (++epochs_without_improvement_ >= patience_) {
    stopped_ = true;
    trainer.request_stop();
  }
}

// ---- LearningRateMonitor ----

void LearningRateMonitor::on_batch_end(Trainer& trainer, const BatchProgress& progress) {
  history_.emplace_back(progress.step, trainer.current_lr());
}

// ---- ProgressLogger ----

ProgressLogger::ProgressLogger(std::ostream& out, int64_t every_n_batches, bool terminal)
    : out_(out), every_(every_n_batches), terminal_(terminal) {
  EMBER_CHECK(every_ >= 1, "ProgressLogger: every_n_batches must be >= 1, got ", every_);
}

ProgressLogger::ProgressLogger() : ProgressLogger(std::cout, 20, ::isatty(STDOUT_FILENO) == 1) {}

void ProgressLogger::on_batch_end(Trainer& trainer, const BatchProgress& p) {
  if (!trainer.is_main_process()) return;
  if (p.resumed_after > 0 && p.batch == p.resumed_after + 1) {
    out_ << (terminal_ ? "\r" : "") << "epoch " << p.epoch << ": resumed after batch " << p.resumed_after << " of "
         << p.batches_per_epoch << "; this epoch's train metrics cover the batches from here on\n";
  }
  if (!terminal_) return;
  if (p.batch % every_ != 0 && p.batch != p.batches_per_epoch) return;
  const double per_batch = p.seconds / static_cast<double>(p.batch - p.resumed_after);
  const int64_t epochs_left = trainer.options().epochs - p.epoch;
  const double eta = per_batch * static_cast<double>((p.batches_per_epoch - p.batch) +
                                                     epochs_left * p.batches_per_epoch);
  char line[256];
  std::snprintf(line, sizeof line,
                "\repoch %lld/%lld  %5lld/%lld  loss %.4f  acc %.4f  %6.0f samples/s  ETA %s  data wait %.1fs ",
                static_cast<long long>(p.epoch), static_cast<long long>(trainer.options().epochs),
                static_cast<long long>(p.batch), static_cast<long long>(p.batches_per_epoch), p.loss, p.accuracy,
                static_cast<double>(p.samples) / std::max(p.seconds, 1e-9), clock_time(eta).c_str(),
                p.data_wait_seconds);
  out_ << line << std::flush;
}

void ProgressLogger::on_epoch_end(Trainer& trainer, const EpochMetrics& m) {
  if (!trainer.is_main_process()) return;
  char line[256];
  int n = std::snprintf(line, sizeof line, "%sepoch %lld/%lld  train loss %.4f acc %.4f", terminal_ ? "\r" : "",
                        static_cast<long long>(m.epoch), static_cast<long long>(trainer.options().epochs),
                        m.train.loss, m.train.accuracy);
  if (m.test) {
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  test loss %.4f acc %.4f", m.test->loss,
                       m.test->accuracy);
  }
  // On a terminal, trailing blanks wipe the rest of the longer progress line.
  std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "  lr %.3g  %.1fs (data wait %.1fs)%s", m.lr,
                m.seconds, m.data_wait_seconds, terminal_ ? "                    " : "");
  out_ << line << "\n" << std::flush;
}

// ---- MetricsLogger ----

MetricsLogger::MetricsLogger(std::string dir) : dir_(std::move(dir)) {}

void MetricsLogger::on_train_start(Trainer& trainer) {
  if (!trainer.is_main_process()) return;
  std::filesystem::create_directories(dir_);
  const std::filesystem::path csv = std::filesystem::path(dir_) / "metrics.csv";
  history_.clear();
  // A resumed run keeps the rows of the epochs its checkpoint had completed.
  if (trainer.epochs_completed() > 0 && std::filesystem::exists(csv)) {
    for (const EpochMetrics& m : read_csv(csv)) {
      if (m.epoch <= trainer.epochs_completed()) history_.push_back(m);
    }
  }
  std::string text = std::string(kCsvHeader) + "\n";
  for (const EpochMetrics& m : history_) text += csv_row(m) + "\n";
  write_file(csv, text);
}

void MetricsLogger::on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) {
  if (!trainer.is_main_process()) return;
  history_.push_back(metrics);
  const std::filesystem::path dir(dir_);
  std::ofstream csv(dir / "metrics.csv", std::ios::app);
  csv << csv_row(metrics) << "\n";
  EMBER_CHECK(csv.good(), "MetricsLogger: cannot write ", (dir / "metrics.csv").string());
  write_file(dir / "curves.svg", training_curves_svg(history_));
}

}  // namespace ember
