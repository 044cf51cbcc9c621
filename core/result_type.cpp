#include "core/result_type.h"

namespace ember {
namespace {

int category(DType t) { return is_floating_point(t) ? 2 : t == DType::Bool ? 0 : 1; }

// Combines a higher-priority class with a lower one (see the note in the header).
int combine(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0) return higher;
  const DType h = static_cast<DType>(higher), l = static_cast<DType>(lower);
  if (category(l) > category(h)) return static_cast<int>(promote_types(h, l));
  return higher;
}

}  // namespace

DType ResultTypeState::result() const {
  const int r = combine(dimmed_, combine(zero_dim_, wrapped_));
  return r < 0 ? DType::Float32 : static_cast<DType>(r);
}

}  // namespace ember
