#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "distributed/dtype_convert.h"
#include "distributed/process_group_impl.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::distributed {

namespace {

enum OpCode { kAllReduce = 1, kBroadcast, kAllGather, kReduceScatter, kBarrier };

// Reductions take f32, f64, f16, bf16 and i64; ops that only move bytes take
// any dtype. The device is the backend's to check (check_device).
void check_layout(const Tensor& t, const char* op, bool reduces = false) {
  EMBER_CHECK(t.defined(), op, ": the tensor is undefined");
  EMBER_CHECK(t.is_contiguous(), op, ": expected a contiguous tensor, got sizes ", t.sizes(), " strides ",
              t.strides());
  const DType d = t.dtype();
  EMBER_CHECK(!reduces || d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16 ||
                  d == DType::Int64,
              op, ": dtype ", d, " is not supported (float32, float64, float16, bfloat16, int64)");
}

void check_like(const Tensor& t, const Tensor& like, const char* op, const char* what, size_t i) {
  check_layout(t, op);
  EMBER_CHECK(t.sizes() == like.sizes() && t.dtype() == like.dtype() && t.device() == like.device(), op, ": ", what,
              "[", i, "] is ", t.dtype(), " ", t.sizes(), " on ", t.device(), ", expected ", like.dtype(), " ",
              like.sizes(), " on ", like.device());
}

Collective describe(const char* op, int code, const Tensor& t) {
  Collective c;
  c.op = op;
  c.op_code = code;
  c.dtype = t.dtype();
  c.shape.assign(t.sizes().begin(), t.sizes().end());
  c.numel = t.numel();
  return c;
}

bool detail_requested() {
  const char* v = std::getenv("EMBER_DISTRIBUTED_DEBUG");
  return v != nullptr && std::strcmp(v, "DETAIL") == 0;
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "sum";
    case ReduceOp::AVG: return "avg";
    case ReduceOp::MAX: return "max";
    case ReduceOp::MIN: return "min";
    case ReduceOp::PRODUCT: return "product";
  }
  return "?";
}

ProcessGroup::ProcessGroup(int rank, int size, std::chrono::milliseconds timeout, std::shared_ptr<Store> store)
    : rank_(rank), size_(size), timeout_(timeout), store_(std::move(store)), impl_(std::make_unique<Impl>()) {
  impl_->detail = detail_requested();
  impl_->worker = std::thread([this] {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(impl_->mu);
        impl_->cv.wait(lock, [this] { return impl_->stop || !impl_->queue.empty(); });
        if (impl_->queue.empty()) return;
        task = std::move(impl_->queue.front());
        impl_->queue.pop_front();
      }
      task();
    }
  });
}

ProcessGroup::~ProcessGroup() { shutdown(); }

void ProcessGroup::shutdown() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->worker.joinable()) impl_->worker.join();
  for (std::thread& t : impl_->p2p) t.join();
  impl_->p2p.clear();
}

void ProcessGroup::run_in_order(const std::function<void()>& fn) {
  auto done = std::make_shared<Work>("run_in_order", timeout_ + std::chrono::seconds(5));
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    EMBER_CHECK(!impl_->stop, "ProcessGroup: shut down");
    impl_->queue.push_back([fn, done] {  // copies: the wait below may give up first
      try {
        fn();
        done->finish();
      } catch (...) {
        done->finish(std::current_exception());
      }
    });
  }
  impl_->cv.notify_one();
  done->wait();
}

std::shared_ptr<Work> ProcessGroup::run_collective(Collective c, std::function<void()> body) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  EMBER_CHECK(!impl_->stop, c.op, ": the process group is shut down");
  c.seq = impl_->next_seq++;
  before_enqueue();
  auto work = std::make_shared<Work>(c.describe() + " on rank " + std::to_string(rank_),
                                     timeout_ + std::chrono::seconds(5));
  impl_->queue.push_back([this, c, body = std::move(body), work] { execute(c, body, *work); });
  impl_->cv.notify_one();
  return work;
}

void ProcessGroup::execute(const Collective& c, const std::function<void()>& body, Work& work) {
  const std::string where = "ProcessGroup(" + backend_name() + ") rank " + std::to_string(rank_) + "/" +
                            std::to_string(size_) + ": ";
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->failure.empty()) {
      work.finish(std::make_exception_ptr(Error(where + c.describe() + " not run: the group failed earlier: " +
                                                impl_->failure)));
      return;
    }
  }
  std::string failure;
  try {
    const std::optional<std::string> mismatch =
        impl_->detail && store_ ? check_fingerprints(c, *store_, rank_, size_, timeout_)
                      : check_sizes(c, [this](int64_t* h, size_t n) { do_all_reduce(h, n, DType::Int64, ReduceOp::MAX); });
    if (mismatch) {
      failure = *mismatch;
    } else {
      body();
      work.finish();
      return;
    }
  } catch (const std::exception& e) {
    do_abort();
    const auto grace = std::min<std::chrono::milliseconds>(timeout_, std::chrono::seconds(3));
    const std::string missing = store_ ? diagnose_missing_ranks(c.seq, *store_, rank_, size_, grace)
                                       : "(no store to learn which rank is missing)";
    failure = c.describe() + " failed: " + missing + " (" + backend_name() + ": " + e.what() + ")";
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->failure = failure;
  }
  work.finish(std::make_exception_ptr(Error(where + failure)));
}

void ProcessGroup::check_device(const Tensor& tensor, const char* op) const {
  EMBER_CHECK(tensor.device().is_cpu(), op, ": the ", backend_name(), " backend takes CPU tensors, got one on ",
              tensor.device());
}

void ProcessGroup::all_reduce_tensor(const Tensor& tensor, ReduceOp op) {
  reduce_in_place(tensor.data_ptr(), static_cast<size_t>(tensor.numel()), tensor.dtype(), op);
}

void ProcessGroup::all_gather_tensors(const std::vector<Tensor>& outputs, const Tensor& input) {
  const size_t bytes = input.nbytes();
  std::vector<uint8_t> flat(bytes * outputs.size());
  do_all_gather(input.data_ptr(), flat.data(), bytes);
  for (size_t r = 0; r < outputs.size(); ++r) std::memcpy(outputs[r].data_ptr(), flat.data() + r * bytes, bytes);
}

void ProcessGroup::copy_bytes(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

void ProcessGroup::reduce_in_place(void* data, size_t count, DType dtype, ReduceOp op) {
  const ReduceOp engine_op = op == ReduceOp::AVG ? ReduceOp::SUM : op;
  if (reduction_dtype(dtype) != dtype) {
    std::vector<float> wide(count);
    widen_to_f32(data, dtype, wide.data(), count);
    do_all_reduce(wide.data(), count, DType::Float32, engine_op);
    if (op == ReduceOp::AVG) divide_in_place(wide.data(), DType::Float32, count, size_);
    narrow_from_f32(wide.data(), dtype, data, count);
    return;
  }
  do_all_reduce(data, count, dtype, engine_op);
  if (op == ReduceOp::AVG) divide_in_place(data, dtype, count, size_);
}

std::shared_ptr<Work> ProcessGroup::all_reduce(Tensor& tensor, ReduceOp op) {
  check_layout(tensor, "all_reduce", true);
  check_device(tensor, "all_reduce");
  EMBER_CHECK(op != ReduceOp::AVG || tensor.is_floating_point(), "all_reduce: avg needs a floating-point tensor, got ",
              tensor.dtype());
  Collective c = describe("all_reduce", kAllReduce, tensor);
  c.reduce = op;
  c.has_reduce = true;
  return run_collective(c, [this, tensor, op] { all_reduce_tensor(tensor, op); });
}

std::shared_ptr<Work> ProcessGroup::broadcast(Tensor& tensor, int root) {
  check_layout(tensor, "broadcast");
  check_device(tensor, "broadcast");
  EMBER_CHECK(root >= 0 && root < size_, "broadcast: root ", root, " is outside [0, ", size_, ")");
  Collective c = describe("broadcast", kBroadcast, tensor);
  c.root = root;
  return run_collective(c, [this, tensor, root] { do_broadcast(tensor.data_ptr(), tensor.nbytes(), root); });
}

std::shared_ptr<Work> ProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  check_layout(input, "all_gather");
  check_device(input, "all_gather");
  EMBER_CHECK(outputs.size() == static_cast<size_t>(size_), "all_gather: expected ", size_, " output tensors, got ",
              outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) check_like(outputs[i], input, "all_gather", "outputs", i);
  return run_collective(describe("all_gather", kAllGather, input),
                        [this, outputs, input] { all_gather_tensors(outputs, input); });
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  check_layout(output, "reduce_scatter", true);
  check_device(output, "reduce_scatter");
  EMBER_CHECK(op != ReduceOp::AVG || output.is_floating_point(),
              "reduce_scatter: avg needs a floating-point tensor, got ", output.dtype());
  EMBER_CHECK(inputs.size() == static_cast<size_t>(size_), "reduce_scatter: expected ", size_,
              " input tensors, got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) check_like(inputs[i], output, "reduce_scatter", "inputs", i);
  Collective c = describe("reduce_scatter", kReduceScatter, output);
  c.reduce = op;
  c.has_reduce = true;
  // An all-reduce of the concatenated inputs; this rank keeps its slice.
  TensorList parts;
  for (const Tensor& in : inputs) parts.push_back(in.reshape({-1}));
  const Tensor flat = cat(parts);
  return run_collective(c, [this, output, flat, op] {
    all_reduce_tensor(flat, op);
    const size_t bytes = output.nbytes();
    copy_bytes(output.data_ptr(), static_cast<const uint8_t*>(flat.data_ptr()) + static_cast<size_t>(rank_) * bytes,
               bytes);
  });
}

std::shared_ptr<Work> ProcessGroup::barrier() {
  Collective c;
  c.op = "barrier";
  c.op_code = kBarrier;
  return run_collective(c, [this] { do_barrier(); });
}

std::shared_ptr<Work> ProcessGroup::run_point_to_point(std::string description, std::function<void()> body) {
  auto work = std::make_shared<Work>(description, timeout_ + std::chrono::seconds(5));
  std::lock_guard<std::mutex> lock(impl_->mu);
  EMBER_CHECK(!impl_->stop, description, ": the process group is shut down");
  EMBER_CHECK(impl_->failure.empty(), description, ": the group failed earlier: ", impl_->failure);
  // Each transfer waits on its own thread: a send and the matching recv may
  // be posted in either order on the two ranks.
  impl_->p2p.emplace_back([work, body = std::move(body), description] {
    try {
      body();
      work->finish();
    } catch (const std::exception& e) {
      work->finish(std::make_exception_ptr(Error(description + " failed: " + e.what())));
    }
  });
  return work;
}

std::shared_ptr<Work> ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
  check_layout(tensor, "send");
  check_device(tensor, "send");
  EMBER_CHECK(dst >= 0 && dst < size_ && dst != rank_, "send: destination ", dst, " must be another rank in [0, ",
              size_, ") (this is rank ", rank_, ")");
  EMBER_CHECK(tag >= 0, "send: the tag must be >= 0, got ", tag);
  return run_point_to_point("send to rank " + std::to_string(dst) + " (tag " + std::to_string(tag) + ") from rank " +
                                std::to_string(rank_),
                            [this, tensor, dst, tag] { do_send(tensor.data_ptr(), tensor.nbytes(), dst, tag); });
}

std::shared_ptr<Work> ProcessGroup::recv(Tensor& tensor, int src, int tag) {
  check_layout(tensor, "recv");
  check_device(tensor, "recv");
  EMBER_CHECK(src >= 0 && src < size_ && src != rank_, "recv: source ", src, " must be another rank in [0, ", size_,
              ") (this is rank ", rank_, ")");
  EMBER_CHECK(tag >= 0, "recv: the tag must be >= 0, got ", tag);
  return run_point_to_point("recv from rank " + std::to_string(src) + " (tag " + std::to_string(tag) + ") on rank " +
                                std::to_string(rank_),
                            [this, tensor, src, tag] { do_recv(tensor.data_ptr(), tensor.nbytes(), src, tag); });
}

std::shared_ptr<ProcessGroup> ProcessGroup::new_group(const std::vector<int>& ranks) {
  EMBER_CHECK(!ranks.empty(), "new_group: the rank list is empty");
  const std::set<int> unique(ranks.begin(), ranks.end());
  EMBER_CHECK(unique.size() == ranks.size(), "new_group: the rank list names a rank twice");
  for (int r : ranks) EMBER_CHECK(r >= 0 && r < size_, "new_group: rank ", r, " is outside [0, ", size_, ")");
  int id = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    id = impl_->next_group_id++;
  }
  std::shared_ptr<Store> store;
  if (store_) store = std::make_shared<PrefixStore>("group" + std::to_string(id), store_);
  return make_group(store, ranks);
}

}  // namespace ember::distributed
