#include "ember/distributed/process_group.h"
#include "ember/error.h"

namespace ember::distributed {

Work::Work(std::string description, std::chrono::milliseconds default_timeout)
    : description_(std::move(description)), default_timeout_(default_timeout) {}

bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ && !error_;
}

void Work::wait() { wait(default_timeout_); }

void Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  EMBER_CHECK(cv_.wait_for(lock, timeout, [this] { return done_; }), "Work::wait: ", description_,
              " did not complete within ", timeout.count(), " ms");
  if (error_) std::rethrow_exception(error_);
}

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

}  // namespace ember::distributed
