// ember::SummaryWriter (include/ember/summary_writer.h): Event protos
// (tensorboard_event.h) in TFRecord framing (serialize/tfrecord.h).
#include "ember/summary_writer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "ember/error.h"
#include "profiler/tensorboard_event.h"
#include "serialize/tfrecord.h"

namespace ember {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// events.out.tfevents.<seconds>.<host>.<pid>.<n>: TensorBoard reads only files
// whose name holds "tfevents"; <n> tells two writers of one second apart.
std::string event_file_name(double wall_time) {
  static std::atomic<int64_t> counter{0};
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "localhost");
  return "events.out.tfevents." + std::to_string(static_cast<int64_t>(wall_time)) + "." + host + "." +
         std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

struct SummaryWriter::State {
  std::mutex mutex;  // add_* may be called from several threads
  std::unique_ptr<serialize::TFRecordWriter> file;

  void write(const std::string& event) {
    std::lock_guard<std::mutex> lock(mutex);
    file->write(event);
    file->flush();
  }
};

SummaryWriter::SummaryWriter(const std::string& log_dir) : state_(std::make_unique<State>()) {
  namespace fs = std::filesystem;
  EMBER_CHECK(!log_dir.empty(), "SummaryWriter: log_dir is empty; give the folder the event file goes to");
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  EMBER_CHECK(!ec, "SummaryWriter: cannot create the folder ", log_dir, ": ", ec.message());
  const double wall_time = now_seconds();
  state_->file = std::make_unique<serialize::TFRecordWriter>((fs::path(log_dir) / event_file_name(wall_time)).string());
  state_->write(tensorboard::file_version_event(wall_time));
}

SummaryWriter::~SummaryWriter() = default;

void SummaryWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  add_scalar(tag, value, step, now_seconds());
}

void SummaryWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  EMBER_CHECK(!tag.empty(), "SummaryWriter::add_scalar: the tag is empty");
  state_->write(tensorboard::scalar_event(wall_time, step, tag, static_cast<float>(value)));
}

void SummaryWriter::add_histogram(const std::string& tag, const Tensor& values, int64_t step, int64_t bins) {
  EMBER_CHECK(!tag.empty(), "SummaryWriter::add_histogram: the tag is empty");
  EMBER_CHECK(values.defined(), "SummaryWriter::add_histogram(", tag, "): the tensor is undefined");
  const Tensor flat = values.detach().to(Device::cpu(), DType::Float64).contiguous();
  const std::string event = [&] {
    try {
      return tensorboard::histogram_event(
          now_seconds(), step, tag,
          tensorboard::make_histogram(flat.data_ptr<double>(), static_cast<size_t>(flat.numel()), bins));
    } catch (const Error& e) {
      EMBER_FAIL("SummaryWriter::add_histogram(", tag, ", shape ", values.sizes(), "): ", e.what());
    }
  }();
  state_->write(event);
}

void SummaryWriter::flush() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->file->flush();
}

const std::string& SummaryWriter::file_path() const { return state_->file->path(); }

}  // namespace ember
