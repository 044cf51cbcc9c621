// The Profiler dispatch key's kernel: one boxed function that records every
// op call (Note [The profiler is a dispatch layer] in <ember/profiler.h>).
#include "autograd/autograd_meta.h"
#include "core/dispatcher.h"
#include "profiler/recorder.h"

namespace ember::profiler {
namespace {

void add_shape(Event& e, const IValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          e.input_shapes.push_back(x.defined() ? x.sizes().vec() : std::vector<int64_t>{});
          e.input_dtypes.emplace_back(x.defined() ? dtype_name(x.dtype()) : "None");
        } else if constexpr (std::is_same_v<T, TensorList>) {
          for (const Tensor& t : x) {
            e.input_shapes.push_back(t.defined() ? t.sizes().vec() : std::vector<int64_t>{});
            e.input_dtypes.emplace_back(t.defined() ? dtype_name(t.dtype()) : "None");
          }
        } else {
          e.input_shapes.emplace_back();
          if constexpr (std::is_same_v<T, Scalar>) e.input_dtypes.emplace_back("Scalar");
          else if constexpr (std::is_same_v<T, int64_t>) e.input_dtypes.emplace_back("int");
          else if constexpr (std::is_same_v<T, double>) e.input_dtypes.emplace_back("float");
          else if constexpr (std::is_same_v<T, bool>) e.input_dtypes.emplace_back("bool");
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>) e.input_dtypes.emplace_back("int[]");
          else if constexpr (std::is_same_v<T, DType>) e.input_dtypes.emplace_back("ScalarType");
          else if constexpr (std::is_same_v<T, std::string>) e.input_dtypes.emplace_back("str");
          else e.input_dtypes.emplace_back("None");
        }
      },
      v.payload());
}

Device first_device(const Stack& stack) {
  for (const IValue& v : stack) {
    if (v.is_tensor() && v.tensor().defined()) return v.tensor().device();
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list())
        if (t.defined()) return t.device();
  }
  return Device::cpu();
}

// The device of the first CUDA tensor argument (a copy to the host has its
// CPU destination first), or the CPU.
Device cuda_device(const Stack& stack) {
  for (const IValue& v : stack) {
    if (v.is_tensor() && v.tensor().defined() && v.tensor().is_cuda()) return v.tensor().device();
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list())
        if (t.defined() && t.is_cuda()) return t.device();
  }
  return Device::cpu();
}

// The sequence number of the backward node this call recorded (one created
// at or after `first`), or -1.
int64_t recorded_node(const Stack& results, uint64_t first) {
  for (const IValue& v : results) {
    if (!v.is_tensor() || !v.tensor().defined()) continue;
    const autograd::AutogradMeta* m = autograd::get_meta(v.tensor());
    if (m && m->grad_fn && m->grad_fn->sequence_nr() >= first) return static_cast<int64_t>(m->grad_fn->sequence_nr());
  }
  return -1;
}

// Closes the op's event however the call ends.
class OpEvent {
 public:
  OpEvent(detail::ThreadBuffer& buffer, size_t index) : buffer_(buffer), index_(index) {}
  ~OpEvent() { close(-1, nullptr); }
  void close(int64_t sequence_nr, const Stack* results) {
    if (done_) return;
    done_ = true;
    const int64_t end = buffer_.now_ns();
    if (results && buffer_.options.profile_memory) annotate(*results);
    std::lock_guard<std::mutex> lock(buffer_.mutex);
    if (buffer_.closed) return;
    if (sequence_nr >= 0 && sequence_nr != buffer_.last_claimed_node) {
      buffer_.events[index_].sequence_nr = sequence_nr;
      buffer_.last_claimed_node = sequence_nr;
    }
    buffer_.end_locked(index_, end);
  }

 private:
  static void annotate(const Stack& results) {
    for (const IValue& v : results) {
      if (!v.is_tensor() || !v.tensor().defined()) continue;
      const Tensor& t = v.tensor();
      detail::annotate_allocation(t.device(), t.impl()->storage()->data(), t.sizes().vec(), dtype_name(t.dtype()));
    }
  }

  detail::ThreadBuffer& buffer_;
  size_t index_;
  bool done_ = false;
};

void profiler_kernel(const OpEntry& op, DispatchKeySet keys, Stack& stack) {
  const DispatchKeySet below = keys.remove(DispatchKey::Profiler);
  detail::ThreadBuffer* buffer = detail::current_buffer();
  if (!buffer) {  // a thread that joined no running profile
    Dispatcher::call_boxed(op, below, stack);
    return;
  }
  const int64_t start = buffer->now_ns();
  size_t index = 0;
  const Device device = first_device(stack);
  {
    std::lock_guard<std::mutex> lock(buffer->mutex);
    if (buffer->closed) {
      buffer = nullptr;
    } else {
      index = buffer->begin_locked(op.name(), EventKind::Op, start);
      Event& e = buffer->events[index];
      e.device = device;
      if (buffer->options.record_shapes)
        for (const IValue& v : stack) add_shape(e, v);
    }
  }
  if (!buffer) {
    Dispatcher::call_boxed(op, below, stack);
    return;
  }
  OpEvent event(*buffer, index);
  const Device timed_on = cuda_device(stack);
  const bool timed = timed_on.is_cuda();
  const size_t timing = timed ? detail::begin_device_timing(*buffer, index, timed_on.index) : 0;
  const uint64_t first_node = autograd::next_node_sequence_nr();
  Dispatcher::call_boxed(op, below, stack);
  if (timed) detail::end_device_timing(*buffer, timing);
  event.close(recorded_node(stack, first_node), &stack);
}

}  // namespace

void install_profiler() {
  Dispatcher::instance().set_fallback(DispatchKey::Profiler, &profiler_kernel, "profiler (record, then run below)");
}

}  // namespace ember::profiler
