#include "kernels/cuda/emulate/heap.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "kernels/cuda/emulate/config.h"

namespace ember::cuda::emulate {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> live;  // by start address
  std::vector<size_t> in_use;            // bytes per device
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: tensors may be freed after static destructors
  return *r;
}

void* raw_alloc(size_t size, size_t alignment) {
  void* p = nullptr;
  // posix_memalign keeps the exact size, so ASan flags a read one past the end.
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  return p;
}

}  // namespace

void* device_alloc(int device, size_t size) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.in_use.empty()) r.in_use.assign(static_cast<size_t>(config().devices), 0);
    if (size > config().memory_bytes - r.in_use[static_cast<size_t>(device)]) return nullptr;
    r.in_use[static_cast<size_t>(device)] += size;
  }
  void* p = raw_alloc(size, 256);  // cudaMalloc aligns to at least 256 bytes
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!p) {
    r.in_use[static_cast<size_t>(device)] -= size;
    return nullptr;
  }
  std::memset(p, 0xff, size);
  const auto at = reinterpret_cast<uintptr_t>(p);
  r.live[at] = Allocation{at, size, device};
  return p;
}

bool device_free(void* ptr) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == r.live.end() || it->second.device < 0) return false;
  r.in_use[static_cast<size_t>(it->second.device)] -= it->second.size;
  r.live.erase(it);
  std::free(ptr);
  return true;
}

void* pinned_alloc(size_t size) {
  void* p = raw_alloc(size, 4096);
  if (!p) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto at = reinterpret_cast<uintptr_t>(p);
  r.live[at] = Allocation{at, size, -1};
  return p;
}

bool pinned_free(void* ptr) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == r.live.end() || it->second.device >= 0) return false;
  r.live.erase(it);
  std::free(ptr);
  return true;
}

std::optional<Allocation> find_allocation(const void* ptr, size_t size) {
  Registry& r = registry();
  const auto at = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.upper_bound(at);
  if (it == r.live.begin()) return std::nullopt;
  --it;
  const Allocation& a = it->second;
  // A zero-byte allocation still owns its start address.
  const size_t extent = a.size == 0 ? 1 : a.size;
  if (at - a.begin >= extent || size > extent - (at - a.begin)) return std::nullopt;
  return a;
}

size_t device_bytes_in_use(int device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.in_use.empty() ? 0 : r.in_use[static_cast<size_t>(device)];
}

}  // namespace ember::cuda::emulate
