// The Gloo backend: collectives over Gloo's TCP transport.
#pragma once

#include <memory>
#include <string>

#include "ember/distributed/process_group.h"

namespace gloo {
class Context;
}

namespace ember::distributed {

class GlooProcessGroup final : public ProcessGroup {
 public:
  // Meets the other ranks through `store` and connects to each of them;
  // `hostname` is the address this rank's Gloo device listens on.
  GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size, std::chrono::milliseconds timeout,
                   std::string hostname);
  ~GlooProcessGroup() override;
  std::string backend_name() const override { return "gloo"; }

 protected:
  void do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) override;
  void do_broadcast(void* data, size_t bytes, int root) override;
  void do_all_gather(const void* input, void* output, size_t bytes_per_rank) override;
  void do_barrier() override;
  void do_send(const void* data, size_t bytes, int dst, int tag) override;
  void do_recv(void* data, size_t bytes, int src, int tag) override;
  void do_abort() override;
  std::shared_ptr<ProcessGroup> make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) override;

 private:
  uint32_t next_tag() { return tag_++; }
  std::string hostname_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t tag_ = 0;  // collectives run one at a time, in the same order on every rank
};

}  // namespace ember::distributed
