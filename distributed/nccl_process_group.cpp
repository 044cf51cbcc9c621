// Note [NCCL groups]
// One NCCL communicator per group: rank 0 makes NCCL's unique id and puts it
// in the group's store, the others read it there, and every rank creates its
// communicator non-blocking (ncclConfig_t::blocking = 0), so no NCCL call can
// hang: each one is followed by polling ncclCommGetAsyncError until it has
// settled, up to the group's timeout. Collectives run on a stream of the
// group's own. When a collective is queued, the stream waits (an event) for
// the work the caller's current stream has queued so far, so the inputs are
// ready; the worker thread then launches the NCCL call, records an event
// after it and polls the event and the communicator's async error until the
// event completes, which completes the Work (is_completed / wait). Past the
// timeout, or on an async error, the communicator is aborted
// (ncclCommAbort) and the collective fails like any other (Note
// [Collectives, checks and failures]). NCCL reduces f16 and bf16 itself and
// averages with ncclAvg. The default-level size check all-reduces host
// memory: it goes through a small device buffer.
#include "distributed/nccl_process_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "distributed/process_group_impl.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

void check_cuda(cudaError_t e, const char* what) {
  EMBER_CHECK(e == cudaSuccess, "nccl: ", what, " failed: ", cudaGetErrorString(e));
}

ncclDataType_t nccl_dtype(DType d) {
  switch (d) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Int64: return ncclInt64;
    default: EMBER_FAIL("nccl: dtype ", d, " cannot be reduced (float32, float64, float16, bfloat16, int64)");
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return ncclSum;
    case ReduceOp::AVG: return ncclAvg;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::PRODUCT: return ncclProd;
  }
  return ncclSum;
}

// Makes `device` current for this thread while it lives.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace

struct NcclProcessGroup::State {
  int device = 0;
  std::chrono::milliseconds timeout{0};
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  std::atomic<bool> aborted{false};

  ~State() {
    if (comm != nullptr && !aborted.exchange(true)) ncclCommAbort(comm);
    if (scratch != nullptr) cudaFree(scratch);
    if (done != nullptr) cudaEventDestroy(done);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Waits until the communicator's last call has settled (non-blocking mode
  // returns ncclInProgress); raises on an error or past the timeout.
  void settle(ncclResult_t result, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result == ncclInProgress) {
      EMBER_CHECK(std::chrono::steady_clock::now() < deadline, "nccl: ", what, " did not finish within ",
                  timeout.count(), " ms");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (ncclCommGetAsyncError(comm, &result) != ncclSuccess) break;
    }
    EMBER_CHECK(result == ncclSuccess, "nccl: ", what, " failed: ", ncclGetErrorString(result), " (",
                ncclGetLastError(comm), ")");
  }

  // Waits for the work queued on the stream: polls an event after it and the
  // communicator's async error, up to the timeout.
  void finish(const char* what) {
    check_cuda(cudaEventRecord(done, stream), "cudaEventRecord");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const cudaError_t state = cudaEventQuery(done);
      if (state == cudaSuccess) return;
      EMBER_CHECK(state == cudaErrorNotReady, "nccl: ", what, " failed on the device: ", cudaGetErrorString(state));
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      EMBER_CHECK(async == ncclSuccess || async == ncclInProgress, "nccl: ", what, " failed: ",
                  ncclGetErrorString(async), " (", ncclGetLastError(comm), ")");
      EMBER_CHECK(std::chrono::steady_clock::now() < deadline, "nccl: ", what, " did not complete within ",
                  timeout.count(), " ms");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void* scratch_of(size_t bytes) {
    if (bytes > scratch_bytes) {
      if (scratch != nullptr) check_cuda(cudaFree(scratch), "cudaFree");
      scratch = nullptr;
      scratch_bytes = 0;
      check_cuda(cudaMalloc(&scratch, bytes), "cudaMalloc (the collective's scratch buffer)");
      scratch_bytes = bytes;
    }
    return scratch;
  }
};

NcclProcessGroup::NcclProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                                   std::chrono::milliseconds timeout, int device)
    : ProcessGroup(rank, size, timeout, store), s_(std::make_unique<State>()) {
  s_->device = device;
  s_->timeout = timeout;
  join_rendezvous(*store, rank, size, timeout, "ProcessGroup(nccl)");
  ncclUniqueId id;
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    EMBER_CHECK(r == ncclSuccess, "ProcessGroup(nccl): ncclGetUniqueId failed: ", ncclGetErrorString(r));
    store->set("nccl_unique_id", Bytes(reinterpret_cast<const uint8_t*>(&id), reinterpret_cast<const uint8_t*>(&id) + sizeof id));
  } else {
    const Bytes bytes = store->get("nccl_unique_id");
    EMBER_CHECK(bytes.size() == sizeof id, "ProcessGroup(nccl): the store's unique id has ", bytes.size(),
                " bytes, expected ", sizeof id);
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  // The worker thread makes the communicator: every later NCCL call comes from it too.
  run_in_order([this, id, rank, size] {
    DeviceGuard on(s_->device);
    check_cuda(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cuda(cudaEventCreateWithFlags(&s_->done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    s_->settle(ncclCommInitRankConfig(&s_->comm, size, id, rank, &config), "ncclCommInitRank");
  });
}

NcclProcessGroup::~NcclProcessGroup() { shutdown(); }

void NcclProcessGroup::check_device(const Tensor& tensor, const char* op) const {
  EMBER_CHECK(tensor.device().is_cuda() && tensor.device().index == s_->device, op,
              ": the nccl backend takes CUDA tensors on cuda:", s_->device, ", got one on ", tensor.device());
}

void NcclProcessGroup::before_enqueue() {
  DeviceGuard on(s_->device);
  cudaEvent_t ready = nullptr;
  check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const auto caller = static_cast<cudaStream_t>(cuda::current_stream(s_->device).handle());
  const cudaError_t recorded = cudaEventRecord(ready, caller);
  const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(s_->stream, ready, 0) : recorded;
  cudaEventDestroy(ready);  // freed once the wait has passed it
  check_cuda(waited, "ordering the collective after the caller's stream");
}

void NcclProcessGroup::do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) {
  DeviceGuard on(s_->device);
  cudaPointerAttributes where{};
  check_cuda(cudaPointerGetAttributes(&where, data), "cudaPointerGetAttributes");
  const bool on_host = where.type != cudaMemoryTypeDevice && where.type != cudaMemoryTypeManaged;
  // The size check's few bytes of host memory go through the scratch buffer.
  const size_t bytes = count * element_size(dtype);
  void* buffer = on_host ? s_->scratch_of(bytes) : data;
  if (on_host) check_cuda(cudaMemcpyAsync(buffer, data, bytes, cudaMemcpyHostToDevice, s_->stream), "cudaMemcpyAsync");
  s_->settle(ncclAllReduce(buffer, buffer, count, nccl_dtype(dtype), nccl_op(op), s_->comm, s_->stream),
             "ncclAllReduce");
  if (on_host) check_cuda(cudaMemcpyAsync(data, buffer, bytes, cudaMemcpyDeviceToHost, s_->stream), "cudaMemcpyAsync");
  s_->finish("all_reduce");
}

void NcclProcessGroup::all_reduce_tensor(const Tensor& tensor, ReduceOp op) {
  do_all_reduce(tensor.data_ptr(), static_cast<size_t>(tensor.numel()), tensor.dtype(), op);
}

void NcclProcessGroup::do_broadcast(void* data, size_t bytes, int root) {
  DeviceGuard on(s_->device);
  s_->settle(ncclBroadcast(data, data, bytes, ncclUint8, root, s_->comm, s_->stream), "ncclBroadcast");
  s_->finish("broadcast");
}

void NcclProcessGroup::do_all_gather(const void* input, void* output, size_t bytes_per_rank) {
  DeviceGuard on(s_->device);
  s_->settle(ncclAllGather(input, output, bytes_per_rank, ncclUint8, s_->comm, s_->stream), "ncclAllGather");
  s_->finish("all_gather");
}

void NcclProcessGroup::all_gather_tensors(const std::vector<Tensor>& outputs, const Tensor& input) {
  DeviceGuard on(s_->device);
  const size_t bytes = input.nbytes();
  auto* flat = static_cast<uint8_t*>(s_->scratch_of(bytes * outputs.size()));
  do_all_gather(input.data_ptr(), flat, bytes);
  for (size_t r = 0; r < outputs.size(); ++r)
    check_cuda(cudaMemcpyAsync(outputs[r].data_ptr(), flat + r * bytes, bytes, cudaMemcpyDeviceToDevice, s_->stream),
               "cudaMemcpyAsync");
  s_->finish("all_gather");
}

void NcclProcessGroup::copy_bytes(void* dst, const void* src, size_t bytes) {
  DeviceGuard on(s_->device);
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s_->stream), "cudaMemcpyAsync");
  s_->finish("copy");
}

void NcclProcessGroup::do_barrier() {
  DeviceGuard on(s_->device);
  void* one = s_->scratch_of(sizeof(int64_t));
  s_->settle(ncclAllReduce(one, one, 1, ncclInt64, ncclSum, s_->comm, s_->stream), "ncclAllReduce (barrier)");
  s_->finish("barrier");
}

void NcclProcessGroup::do_send(const void*, size_t, int, int) {
  EMBER_FAIL("the nccl backend runs collectives only: send and recv of CUDA tensors need a gloo or mpi group "
             "(copy the tensor to the CPU)");
}

void NcclProcessGroup::do_recv(void*, size_t, int, int) {
  EMBER_FAIL("the nccl backend runs collectives only: send and recv of CUDA tensors need a gloo or mpi group "
             "(copy the tensor to the CPU)");
}

void NcclProcessGroup::do_abort() {
  if (s_->comm != nullptr && !s_->aborted.exchange(true)) ncclCommAbort(s_->comm);
}

std::shared_ptr<ProcessGroup> NcclProcessGroup::make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) {
  const auto me = std::find(ranks.begin(), ranks.end(), rank());
  if (me == ranks.end()) return nullptr;
  return std::make_shared<NcclProcessGroup>(std::move(store), static_cast<int>(me - ranks.begin()),
                                            static_cast<int>(ranks.size()), timeout(), s_->device);
}

}  // namespace ember::distributed
