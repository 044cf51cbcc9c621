// The machinery behind every ProcessGroup (Note [Collectives, checks and
// failures] in ember/distributed/process_group.h): the worker thread and its
// queue, what a collective is, and the checks before it runs.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

// What a collective is about to do, as the ranks compare it.
struct Collective {
  const char* op = "";
  int op_code = 0;  // distinct per op, for the size check
  ReduceOp reduce = ReduceOp::SUM;
  bool has_reduce = false;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  int root = -1;
  uint64_t seq = 0;
  // "all_reduce(sum) float32 [2, 3]"
  std::string fingerprint() const;
  // "all_reduce #7 (float32 [2, 3])"
  std::string describe() const;
};

struct ProcessGroup::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stop = false;
  std::thread worker;
  uint64_t next_seq = 0;
  int next_group_id = 0;
  std::string failure;  // the first error; later calls raise it
  std::vector<std::thread> p2p;
  bool detail = false;  // EMBER_DISTRIBUTED_DEBUG=DETAIL
};

// The size check of the default level: an all-reduce (max) of 64 bytes
// through `all_reduce_max`; the mismatch message, or nullopt.
std::optional<std::string> check_sizes(const Collective& c, const std::function<void(int64_t*, size_t)>& all_reduce_max);
// The DETAIL check: fingerprints through the store.
std::optional<std::string> check_fingerprints(const Collective& c, Store& store, int rank, int size,
                                              std::chrono::milliseconds timeout);
// Every rank announces itself and waits for the others; the error names the
// ranks that did not join within the timeout.
void join_rendezvous(Store& store, int rank, int size, std::chrono::milliseconds timeout, const std::string& what);
// After a failure: which ranks did not reach collective `seq` (through the
// store, waiting up to `grace`); a sentence for the error message.
std::string diagnose_missing_ranks(uint64_t seq, Store& store, int rank, int size, std::chrono::milliseconds grace);

}  // namespace ember::distributed
