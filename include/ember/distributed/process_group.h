// Process groups: collectives across the ranks of a job, run by proven
// engines (Gloo over TCP, or MPI), with async Work handles and timeouts.
//
//   auto pg = ember::distributed::init_process_group({.backend = "gloo"});  // env:// by default
//   ember::Tensor g = ember::ones({4});
//   pg->all_reduce(g)->wait();   // g == world_size everywhere
//
// Note [Collectives, checks and failures]
// Every collective gets a sequence number and runs on the group's worker
// thread, in call order; the call returns a Work at once. Before the data
// moves, the ranks compare what they are about to do:
//  - by default, a 64-byte all-reduce of (op, dtype, element count, root):
//    a mismatch raises on every rank instead of letting the engine read a
//    message of the wrong size (Gloo aborts the process on that);
//  - with EMBER_DISTRIBUTED_DEBUG=DETAIL, full fingerprints (sequence
//    number, op, dtype, shape) through the store; a mismatch raises on every
//    rank with both fingerprints.
// A collective that fails (a peer died, or the timeout passed) closes the
// group's connections so the other ranks fail at once too, then each rank
// records in the store that it reached the collective and waits a few
// seconds for the others: the error names the ranks that never arrived.
// A failed group stays failed: later calls raise its first error.
// f16 and bf16 reductions are computed in f32; avg divides the f32 (or f64)
// sum by the group size.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/distributed/store.h"
#include "ember/tensor.h"

namespace ember::distributed {

struct Collective;  // what a collective does, as the ranks compare it (distributed/)

enum class ReduceOp { SUM, AVG, MAX, MIN, PRODUCT };
const char* reduce_op_name(ReduceOp op);

// The handle of one asynchronous operation.
class Work {
 public:
  Work(std::string description, std::chrono::milliseconds default_timeout);
  bool is_completed() const;
  // True when completed without error.
  bool is_success() const;
  // Blocks until the operation is done and rethrows its error. Without a
  // timeout, waits the group's timeout plus 5 s; past it, raises an
  // ember::Error naming the operation.
  void wait();
  void wait(std::chrono::milliseconds timeout);
  const std::string& description() const { return description_; }

  // For the backends: marks the operation done (with an error, or not).
  void finish(std::exception_ptr error = nullptr);

 private:
  std::string description_;
  std::chrono::milliseconds default_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  virtual std::string backend_name() const = 0;

  // Tensors are dense (contiguous) CPU tensors (gloo, mpi) or CUDA tensors of
  // the group's device (nccl) that stay untouched until the Work completes.
  // Reductions take f32, f64, f16, bf16 and i64; broadcast, all_gather, send
  // and recv move the bytes of any dtype (nccl: no send and recv).
  std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM);
  std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0);
  // outputs: size() tensors shaped like input; outputs[r] gets rank r's input.
  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input);
  // inputs: size() tensors shaped like output; output = reduction over
  // ranks of inputs[rank()].
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       ReduceOp op = ReduceOp::SUM);
  std::shared_ptr<Work> barrier();
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag = 0);
  std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag = 0);

  // A group of the given ranks of this group (every rank of this group
  // calls it, with the same list, in the same order as other new_group
  // calls). Ranks outside the list get nullptr.
  std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

  struct Impl;

 protected:
  // `store` may be null (MPI needs none): then DETAIL falls back to the size
  // check and a failure cannot name the missing ranks.
  ProcessGroup(int rank, int size, std::chrono::milliseconds timeout, std::shared_ptr<Store> store);
  // The backend's primitives, called on the worker thread (send and recv on
  // their own thread). Buffers are raw bytes; reductions see f32, f64 or i64
  // and never AVG. A failure throws (any std::exception).
  virtual void do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) = 0;
  virtual void do_broadcast(void* data, size_t bytes, int root) = 0;
  virtual void do_all_gather(const void* input, void* output, size_t bytes_per_rank) = 0;
  virtual void do_barrier() = 0;
  virtual void do_send(const void* data, size_t bytes, int dst, int tag) = 0;
  virtual void do_recv(void* data, size_t bytes, int src, int tag) = 0;
  // Closes the connections after a failure, so peers fail at once.
  virtual void do_abort() = 0;
  // Engines that work on host memory (gloo, mpi) keep these defaults: CPU
  // tensors; f16/bf16 reduced in f32 and AVG as a sum divided here; gathers
  // through a host buffer. A device engine (nccl) overrides them.
  // check_device runs on the caller's thread; before_enqueue too, just before
  // a collective is queued; the others on the worker thread.
  virtual void check_device(const Tensor& tensor, const char* op) const;
  virtual void before_enqueue() {}
  virtual void all_reduce_tensor(const Tensor& tensor, ReduceOp op);
  virtual void all_gather_tensors(const std::vector<Tensor>& outputs, const Tensor& input);
  virtual void copy_bytes(void* dst, const void* src, size_t bytes);
  // Called on every rank of this group by new_group; nullptr for a rank
  // outside `ranks`. `store` is null when this group has none.
  virtual std::shared_ptr<ProcessGroup> make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) = 0;
  // Runs fn on the worker thread, after the collectives queued before it, and
  // waits for it (for backends whose calls must not overlap collectives).
  void run_in_order(const std::function<void()>& fn);
  // Stops the worker; a backend's destructor calls it before tearing down.
  void shutdown();
  const std::shared_ptr<Store>& store() const { return store_; }

 private:
  std::shared_ptr<Work> run_collective(Collective c, std::function<void()> body);
  void execute(const Collective& c, const std::function<void()>& body, Work& work);
  std::shared_ptr<Work> run_point_to_point(std::string description, std::function<void()> body);
  // An all-reduce of a buffer of any supported dtype (Note [Collectives, ...]).
  void reduce_in_place(void* data, size_t count, DType dtype, ReduceOp op);

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<Store> store_;
  std::unique_ptr<Impl> impl_;
};

struct InitOptions {
  // "gloo" or "mpi" (started by mpirun) for CPU tensors; "nccl" for CUDA
  // tensors (CUDA builds; each rank on device LOCAL_RANK mod the devices).
  std::string backend = "gloo";
  // "env://" (MASTER_ADDR, MASTER_PORT), "tcp://host:port" or "file://path".
  // The mpi backend meets through MPI; it makes a store only from an explicit
  // method or MASTER_ADDR/MASTER_PORT (then failures name missing ranks).
  std::string init_method = "env://";
  int rank = -1;        // -1: from the environment (ember/distributed/environment.h)
  int world_size = -1;  // -1: from the environment
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
};

// Rendezvous, then the default group. Raises an ember::Error naming what is
// missing or contradictory in the options and the environment, and the ranks
// that did not join within the timeout.
std::shared_ptr<ProcessGroup> init_process_group(const InitOptions& options = {});
bool is_initialized();
// The group init_process_group made; raises when there is none.
std::shared_ptr<ProcessGroup> get_default_group();
int get_rank();
int get_world_size();
// new_group on the default group.
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);
void destroy_process_group();

}  // namespace ember::distributed
