// The NCCL backend: collectives on CUDA tensors (Note [NCCL groups] in
// nccl_process_group.cpp). Compiled in CUDA builds only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

class NcclProcessGroup final : public ProcessGroup {
 public:
  // Meets the other ranks through `store` (rank 0 puts NCCL's unique id
  // there) and makes one communicator over CUDA device `device`.
  NcclProcessGroup(std::shared_ptr<Store> store, int rank, int size, std::chrono::milliseconds timeout, int device);
  ~NcclProcessGroup() override;
  std::string backend_name() const override { return "nccl"; }

 protected:
  void check_device(const Tensor& tensor, const char* op) const override;
  void before_enqueue() override;
  void all_reduce_tensor(const Tensor& tensor, ReduceOp op) override;
  void all_gather_tensors(const std::vector<Tensor>& outputs, const Tensor& input) override;
  void copy_bytes(void* dst, const void* src, size_t bytes) override;
  void do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) override;
  void do_broadcast(void* data, size_t bytes, int root) override;
  void do_all_gather(const void* input, void* output, size_t bytes_per_rank) override;
  void do_barrier() override;
  void do_send(const void* data, size_t bytes, int dst, int tag) override;
  void do_recv(void* data, size_t bytes, int src, int tag) override;
  void do_abort() override;
  std::shared_ptr<ProcessGroup> make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) override;

 private:
  struct State;  // the communicator, the stream, the event, the scratch buffer (CUDA and NCCL types)
  std::unique_ptr<State> s_;
};

}  // namespace ember::distributed
