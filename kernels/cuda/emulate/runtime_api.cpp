// The emulated CUDA runtime API (runtime_api.h): devices, memory, copies,
// streams, events and kernel launches, with the argument checks a real
// driver makes (Note [CUDA emulation] in README.md).
#include "kernels/cuda/emulate/runtime_api.h"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/emulate/block_runner.h"
#include "kernels/cuda/emulate/config.h"
#include "kernels/cuda/emulate/executor.h"
#include "kernels/cuda/emulate/heap.h"

namespace ember::cuda::emulate {
namespace {

constexpr size_t kSharedPerBlock = 48 << 10;
constexpr size_t kSharedPerBlockOptin = 227 << 10;  // an H200 (sm_90)
constexpr size_t kSharedPerBlockDefault = 48 << 10;  // without cudaFuncAttributeMaxDynamicSharedMemorySize

// The dynamic shared memory each kernel opted in to (cudaFuncSetAttribute).
struct SharedOptins {
  std::mutex mutex;
  std::map<const void*, size_t> bytes;
};
SharedOptins& shared_optins() {
  static auto* o = new SharedOptins();  // leaked: read by launches until exit
  return *o;
}

int env_int(const char* name, int fallback, int low, int high) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < low || n > high) return fallback;
  return static_cast<int>(n);
}

bool schedule_is_newest() {
  const char* v = std::getenv("EMBER_CUDA_EMULATE_SCHEDULE");
  return v && std::strcmp(v, "newest") == 0;
}

struct LaunchLog {
  std::mutex mutex;
  std::deque<LaunchRecord> records;
};
LaunchLog& launch_log() {
  static auto* log = new LaunchLog();
  return *log;
}

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_device = 0;
thread_local std::string t_fault_message;

cudaError_t fail(cudaError_t err) {
  t_last_error = err;
  return err;
}

bool valid_device(int device) { return device >= 0 && device < config().devices; }

// The pending fault of the current device, reported by a synchronising call.
cudaError_t fault_or(cudaError_t ok) {
  if (auto f = take_fault(t_device)) {
    t_fault_message = f->message;
    return fail(cudaErrorLaunchFailure);
  }
  return ok;
}

Stream* resolve(cudaStream_t s) { return s ? s : legacy_stream(t_device); }

enum class Side { Host, Device };
Side side_of(const void* p, size_t n) {
  auto a = find_allocation(p, n);
  return a && a->device >= 0 ? Side::Device : Side::Host;
}

// The checks cudaMemcpy makes: the kind matches where the pointers are, and
// device ranges lie inside one allocation.
bool copy_ok(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  if (n == 0) return true;
  if (!dst || !src) return false;
  const bool dst_dev = find_allocation(dst).has_value() && find_allocation(dst)->device >= 0;
  const bool src_dev = find_allocation(src).has_value() && find_allocation(src)->device >= 0;
  if (dst_dev && side_of(dst, n) != Side::Device) return false;  // runs past the end of its allocation
  if (src_dev && side_of(src, n) != Side::Device) return false;
  switch (kind) {
    case cudaMemcpyHostToHost: return !dst_dev && !src_dev;
    case cudaMemcpyHostToDevice: return dst_dev && !src_dev;
    case cudaMemcpyDeviceToHost: return !dst_dev && src_dev;
    case cudaMemcpyDeviceToDevice: return dst_dev && src_dev;
    case cudaMemcpyDefault: return true;
  }
  return false;
}

cudaError_t queue_copy(void* dst, const void* src, size_t n, Stream* s) {
  if (n == 0) return cudaSuccess;
  const bool src_dev = side_of(src, n) == Side::Device;
  const bool dst_dev = side_of(dst, n) == Side::Device;
  const auto src_alloc = find_allocation(src, n);
  const auto dst_alloc = find_allocation(dst, n);
  const bool src_pinned = src_alloc && src_alloc->device < 0;
  const bool dst_pinned = dst_alloc && dst_alloc->device < 0;
  if (!src_dev && !src_pinned && dst_dev) {
    // From pageable memory the driver stages the source before returning.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + n);
    enqueue(s, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
    return cudaSuccess;
  }
  enqueue(s, [dst, src, n] { std::memcpy(dst, src, n); });
  // Into pageable memory the call returns only once the data has arrived.
  if (src_dev && !dst_dev && !dst_pinned) {
    wait_stream(s);
    return fault_or(cudaSuccess);
  }
  return cudaSuccess;
}

}  // namespace

const Config& config() {
  static const Config c{env_int("EMBER_CUDA_EMULATE_DEVICES", 2, 1, 16), env_int("EMBER_CUDA_EMULATE_SMS", 1, 1, 1024),
                        static_cast<size_t>(env_int("EMBER_CUDA_EMULATE_MEMORY_MB", 8192, 1, 1 << 20)) << 20,
                        env_int("EMBER_CUDA_EMULATE_LAG_MS", 2, 0, 10000), schedule_is_newest()};
  return c;
}

void launch(const void* kernel, const char* kernel_name, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
            cudaStream_t stream, std::function<void()> thread_body) {
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 || block.z > 64 ||
      threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535) {
    fail(cudaErrorInvalidConfiguration);
    return;
  }
  if (dynamic_shared_bytes > kSharedPerBlockDefault) {
    SharedOptins& o = shared_optins();
    std::lock_guard<std::mutex> lock(o.mutex);
    const auto it = o.bytes.find(kernel);
    if (it == o.bytes.end() || dynamic_shared_bytes > it->second) {
      fail(cudaErrorInvalidValue);
      return;
    }
  }
  if (stream && (!is_live(stream) || stream->device != t_device)) {
    fail(cudaErrorInvalidResourceHandle);  // a stream of another device, or one destroyed
    return;
  }
  {
    LaunchLog& log = launch_log();
    std::lock_guard<std::mutex> lock(log.mutex);
    log.records.push_back({kernel_name, grid, block, dynamic_shared_bytes});
    if (log.records.size() > 64) log.records.pop_front();
  }
  enqueue(resolve(stream), [kernel_name, grid, block, dynamic_shared_bytes, body = std::move(thread_body)] {
    run_grid(kernel_name, grid, block, dynamic_shared_bytes, body);
  });
}

std::vector<LaunchRecord> recent_launches() {
  LaunchLog& log = launch_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  return {log.records.begin(), log.records.end()};
}

const char* last_fault_message() { return t_fault_message.c_str(); }

}  // namespace ember::cuda::emulate

using namespace ember::cuda::emulate;

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t err = fault_or(t_last_error);
  t_last_error = cudaSuccess;
  return err;
}

cudaError_t cudaPeekAtLastError() { return t_last_error; }

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return fail(cudaErrorInvalidValue);
  *count = config().devices;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return fail(cudaErrorInvalidValue);
  *device = t_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!valid_device(device)) return fail(cudaErrorInvalidDevice);
  t_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return fail(cudaErrorInvalidValue);
  if (!valid_device(device)) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "ember emulated device (H200 limits)", sizeof(prop->name) - 1);
  prop->totalGlobalMem = config().memory_bytes;
  prop->sharedMemPerBlock = kSharedPerBlock;
  prop->sharedMemPerBlockOptin = kSharedPerBlockOptin;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->multiProcessorCount = config().multiprocessors;
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  cudaDeviceProp p;
  if (!value) return fail(cudaErrorInvalidValue);
  if (const cudaError_t err = cudaGetDeviceProperties(&p, device); err != cudaSuccess) return err;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
    default: return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  wait_device(t_device);
  return fault_or(cudaSuccess);
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (!free_bytes || !total_bytes) return fail(cudaErrorInvalidValue);
  *total_bytes = config().memory_bytes;
  *free_bytes = config().memory_bytes - device_bytes_in_use(t_device);
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  if (!ptr) return fail(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  *ptr = device_alloc(t_device, size);
  return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  const auto a = find_allocation(ptr);
  if (!a || a->device < 0 || a->begin != reinterpret_cast<uintptr_t>(ptr)) return fail(cudaErrorInvalidValue);
  wait_device(a->device);  // cudaFree waits for the device's work, which may still use the memory
  device_free(ptr);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned) {
  if (!ptr) return fail(cudaErrorInvalidValue);
  *ptr = pinned_alloc(size);
  return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, cudaHostAllocDefault); }

cudaError_t cudaFreeHost(void* ptr) {
  if (!ptr) return cudaSuccess;
  return pinned_free(ptr) ? cudaSuccess : fail(cudaErrorInvalidValue);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (!attributes) return fail(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{cudaMemoryTypeUnregistered, -1, nullptr, const_cast<void*>(ptr)};
  if (const auto a = find_allocation(ptr)) {
    attributes->type = a->device >= 0 ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    attributes->device = a->device >= 0 ? a->device : t_device;
    attributes->devicePointer = const_cast<void*>(ptr);
    if (a->device >= 0) attributes->hostPointer = nullptr;
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!copy_ok(dst, src, count, kind)) return fail(cudaErrorInvalidValue);
  if (stream && !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  return queue_copy(dst, src, count, resolve(stream));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (const cudaError_t err = cudaMemcpyAsync(dst, src, count, kind, nullptr); err != cudaSuccess) return err;
  wait_stream(legacy_stream(t_device));
  return fault_or(cudaSuccess);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
  if (!valid_device(dst_device) || !valid_device(src_device)) return fail(cudaErrorInvalidDevice);
  if (count == 0) return cudaSuccess;
  const auto d = find_allocation(dst, count);
  const auto s = find_allocation(src, count);
  if (!d || !s || d->device != dst_device || s->device != src_device) return fail(cudaErrorInvalidValue);
  if (stream && !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  return queue_copy(dst, src, count, resolve(stream));
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const auto a = find_allocation(ptr, count);
  if (!a || a->device < 0) return fail(cudaErrorInvalidValue);
  if (stream && !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  enqueue(resolve(stream), [ptr, value, count] { std::memset(ptr, value, count); });
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  if (const cudaError_t err = cudaMemsetAsync(ptr, value, count, nullptr); err != cudaSuccess) return err;
  wait_stream(legacy_stream(t_device));
  return fault_or(cudaSuccess);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (!stream || flags > cudaStreamNonBlocking) return fail(cudaErrorInvalidValue);
  *stream = create_stream(t_device, flags != cudaStreamNonBlocking);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int) {
  return cudaStreamCreateWithFlags(stream, flags);  // one executor: priorities change nothing
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream || !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  destroy_stream(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (stream && !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  Stream* s = resolve(stream);
  wait_stream(s);
  const int saved = t_device;
  t_device = s->device;
  const cudaError_t err = fault_or(cudaSuccess);
  t_device = saved;
  return err;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (stream && !is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  return stream_done(resolve(stream)) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  if (!event || (stream && !is_live(stream))) return fail(cudaErrorInvalidResourceHandle);
  stream_wait_event(resolve(stream), event);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (!event) return fail(cudaErrorInvalidValue);
  *event = new Event();
  (*event)->device = t_device;
  (*event)->timing = (flags & cudaEventDisableTiming) == 0;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  // Work queued before may still stamp it: wait for its marker.
  wait_event(event);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event || (stream && !is_live(stream))) return fail(cudaErrorInvalidResourceHandle);
  Stream* s = resolve(stream);
  if (s->device != event->device) return fail(cudaErrorInvalidResourceHandle);
  record_event(event, s);
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  return event_done(event) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  wait_event(event);
  return fault_or(cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return fail(cudaErrorInvalidValue);
  if (!start->timing || !end->timing || !start->stream || !end->stream) return fail(cudaErrorInvalidResourceHandle);
  if (!event_done(start) || !event_done(end)) return fail(cudaErrorNotReady);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (!func || attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<size_t>(value) > kSharedPerBlockOptin) {
    return fail(cudaErrorInvalidValue);
  }
  SharedOptins& o = shared_optins();
  std::lock_guard<std::mutex> lock(o.mutex);
  o.bytes[func] = static_cast<size_t>(value);
  return cudaSuccess;
}
