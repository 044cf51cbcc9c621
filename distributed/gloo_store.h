// Gloo's rendezvous reads and writes keys through gloo::rendezvous::Store;
// this adapter sends them to an ember Store (TCP or file).
#pragma once

#include <gloo/rendezvous/store.h>

#include <memory>

#include "ember/distributed/store.h"

namespace ember::distributed {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const Bytes b = store_->get(key);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

}  // namespace ember::distributed
