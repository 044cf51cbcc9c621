#include "distributed/ddp_buckets.h"

namespace ember::distributed {

std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& order, const std::vector<size_t>& bytes,
                                                const std::vector<DType>& dtypes, size_t first_cap, size_t cap) {
  std::vector<std::vector<size_t>> buckets;
  size_t filled = 0;
  bool open = false;
  for (size_t i : order) {
    if (open && dtypes[i] != dtypes[buckets.back().front()]) open = false;
    if (!open) {
      buckets.emplace_back();
      filled = 0;
      open = true;
    }
    buckets.back().push_back(i);
    filled += bytes[i];
    if (filled >= (buckets.size() == 1 ? first_cap : cap)) open = false;
  }
  return buckets;
}

}  // namespace ember::distributed
