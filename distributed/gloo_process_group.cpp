#include "distributed/gloo_process_group.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <signal.h>

#include <algorithm>
#include <cstring>

#include "distributed/gloo_store.h"
#include "distributed/process_group_impl.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

template <class T>
gloo::AllreduceOptions::Func reduce_function(ReduceOp op) {
  using Fn = void (*)(void*, const void*, const void*, size_t);
  Fn fn = nullptr;
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      fn = [](void* o, const void* a, const void* b, size_t n) {
        for (size_t i = 0; i < n; ++i)
          static_cast<T*>(o)[i] = static_cast<const T*>(a)[i] + static_cast<const T*>(b)[i];
      };
      break;
    case ReduceOp::PRODUCT:
      fn = [](void* o, const void* a, const void* b, size_t n) {
        for (size_t i = 0; i < n; ++i)
          static_cast<T*>(o)[i] = static_cast<const T*>(a)[i] * static_cast<const T*>(b)[i];
      };
      break;
    case ReduceOp::MAX:
      fn = [](void* o, const void* a, const void* b, size_t n) {
        for (size_t i = 0; i < n; ++i)
          static_cast<T*>(o)[i] = std::max(static_cast<const T*>(a)[i], static_cast<const T*>(b)[i]);
      };
      break;
    case ReduceOp::MIN:
      fn = [](void* o, const void* a, const void* b, size_t n) {
        for (size_t i = 0; i < n; ++i)
          static_cast<T*>(o)[i] = std::min(static_cast<const T*>(a)[i], static_cast<const T*>(b)[i]);
      };
      break;
  }
  return fn;
}

template <class T>
void all_reduce_typed(const std::shared_ptr<gloo::Context>& context, T* data, size_t count, ReduceOp op,
                      uint32_t tag) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(data, count);
  opts.setReduceFunction(reduce_function<T>(op));
  opts.setTag(tag);
  gloo::allreduce(opts);
}

// Gloo writes to its peers with writev, which raises SIGPIPE once a peer has
// died; its default action would end this rank at once (exit code 141)
// instead of letting the collective fail with an ember::Error that names the
// peer. So, as Python does for PyTorch, SIGPIPE is ignored, unless the program
// has installed its own handler.
void ignore_sigpipe_unless_handled() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
}

// Point-to-point slots live above every collective's (Gloo's collectives put
// a small prefix in the top byte).
uint64_t p2p_slot(int tag) { return (uint64_t{0xEB} << 56) | static_cast<uint64_t>(tag); }

}  // namespace

GlooProcessGroup::GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                                   std::chrono::milliseconds timeout, std::string hostname)
    : ProcessGroup(rank, size, timeout, store), hostname_(std::move(hostname)) {
  join_rendezvous(*store, rank, size, timeout, "ProcessGroup(gloo)");
  ignore_sigpipe_unless_handled();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname_;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    GlooStore gloo_store(std::make_shared<PrefixStore>("gloo", store));
    context->connectFullMesh(gloo_store, device);
    context_ = std::move(context);
  } catch (const Error&) {
    shutdown();
    throw;
  } catch (const std::exception& e) {
    shutdown();
    EMBER_FAIL("ProcessGroup(gloo): rank ", rank, " of ", size, " could not connect to its peers through '",
               hostname_, "': ", e.what());
  }
}

GlooProcessGroup::~GlooProcessGroup() { shutdown(); }

void GlooProcessGroup::do_all_reduce(void* data, size_t count, DType dtype, ReduceOp op) {
  if (count == 0) return;
  switch (dtype) {
    case DType::Float32: return all_reduce_typed(context_, static_cast<float*>(data), count, op, next_tag());
    case DType::Float64: return all_reduce_typed(context_, static_cast<double*>(data), count, op, next_tag());
    case DType::Int64: return all_reduce_typed(context_, static_cast<int64_t*>(data), count, op, next_tag());
    default: EMBER_FAIL("ProcessGroup(gloo): no reduction for ", dtype);
  }
}

void GlooProcessGroup::do_broadcast(void* data, size_t bytes, int root) {
  if (bytes == 0) return;
  gloo::BroadcastOptions opts(context_);
  opts.setOutput(static_cast<uint8_t*>(data), bytes);
  opts.setRoot(root);
  opts.setTag(next_tag());
  gloo::broadcast(opts);
}

void GlooProcessGroup::do_all_gather(const void* input, void* output, size_t bytes_per_rank) {
  if (bytes_per_rank == 0) return;
  gloo::AllgatherOptions opts(context_);
  opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(input)), bytes_per_rank);
  opts.setOutput(static_cast<uint8_t*>(output), bytes_per_rank * static_cast<size_t>(size()));
  opts.setTag(next_tag());
  gloo::allgather(opts);
}

void GlooProcessGroup::do_barrier() {
  gloo::BarrierOptions opts(context_);
  opts.setTag(next_tag());
  gloo::barrier(opts);
}

// A transfer is a length (8 bytes) and then the data, so a receiver with a
// buffer of another size raises instead of Gloo reading past it.
void GlooProcessGroup::do_send(const void* data, size_t bytes, int dst, int tag) {
  uint64_t length = bytes;
  auto header = context_->createUnboundBuffer(&length, sizeof length);
  header->send(dst, p2p_slot(tag));
  header->waitSend(timeout());
  if (bytes == 0) return;
  auto payload = context_->createUnboundBuffer(const_cast<void*>(data), bytes);
  payload->send(dst, p2p_slot(tag));
  payload->waitSend(timeout());
}

void GlooProcessGroup::do_recv(void* data, size_t bytes, int src, int tag) {
  uint64_t length = 0;
  auto header = context_->createUnboundBuffer(&length, sizeof length);
  header->recv(src, p2p_slot(tag));
  header->waitRecv(timeout());
  EMBER_CHECK(length == bytes, "recv: rank ", src, " sent ", length, " bytes, the receiving tensor holds ", bytes);
  if (bytes == 0) return;
  auto payload = context_->createUnboundBuffer(data, bytes);
  payload->recv(src, p2p_slot(tag));
  payload->waitRecv(timeout());
}

void GlooProcessGroup::do_abort() { context_->closeConnections(); }

std::shared_ptr<ProcessGroup> GlooProcessGroup::make_group(std::shared_ptr<Store> store, const std::vector<int>& ranks) {
  const auto me = std::find(ranks.begin(), ranks.end(), rank());
  if (me == ranks.end()) return nullptr;
  return std::make_shared<GlooProcessGroup>(std::move(store), static_cast<int>(me - ranks.begin()),
                                            static_cast<int>(ranks.size()), timeout(), hostname_);
}

}  // namespace ember::distributed
