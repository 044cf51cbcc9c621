// Intra-op parallelism: a small thread pool owned by ember (not OpenMP).
//
// Note [Deterministic parallelism]
// Work is cut into chunks of a fixed size chosen by the caller (`grain`, in
// elements), never by the thread count. A chunk is the unit handed to a
// thread, so any per-chunk result (a partial sum, say) is the same whatever
// the number of threads; callers that combine partials do it in chunk order.
// Ranges no larger than one grain run inline on the calling thread with no
// wake-up cost, which keeps tiny ops cheap.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace ember {

// Number of threads used by intra-op parallel loops (the caller counts as one).
int get_num_threads();
// Sets the intra-op thread count (>= 1). Results do not depend on it.
void set_num_threads(int n);
// True while the current thread is running a chunk of a parallel_for.
bool in_parallel_region();

namespace detail {
// A non-owning reference to a callable void(int64_t, int64_t).
class ChunkFn {
 public:
  template <class F>
  ChunkFn(F& f)
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) { (*static_cast<F*>(o))(b, e); }) {}
  void operator()(int64_t b, int64_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};
void parallel_for_chunks(int64_t begin, int64_t end, int64_t grain, ChunkFn fn);
}  // namespace detail

// Calls fn(chunk_begin, chunk_end) for the chunks [begin + k*grain, ...) of
// [begin, end). Chunks may run concurrently on the pool; the call returns
// when all are done. The first exception thrown by a chunk is rethrown.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (end - begin <= grain) {
    fn(begin, end);
    return;
  }
  auto& ref = fn;
  detail::parallel_for_chunks(begin, end, grain, detail::ChunkFn(ref));
}

}  // namespace ember
