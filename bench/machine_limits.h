// The two limits every kernel is judged against (the roofline): the fp32 FMA
// peak and the STREAM memory bandwidth, measured on the spot. One copy of the
// measuring loops, used by bench/fma_peak, bench/stream and `ember bench`
// (tools/ember/bench_machine.cpp).
//
// FMA peak: each thread runs kFmaChains independent FMA chains on
// full-width vector registers (zmm with AVX-512, ymm with AVX2/FMA). With at
// least latency x pipes chains in flight the FMA units never wait, so
// flops / second = threads x pipes x lanes x 2 x clock.
//
// Bandwidth: STREAM's triad a = b + s*c and copy a = b over three arrays of
// doubles much larger than the caches, split evenly between the threads;
// bytes moved count each array read or written once (triad 3, copy 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::bench {

// The instruction set the FMA loop uses: "AVX-512 (zmm)", "AVX2/FMA (ymm)",
// or "generic vectors (no FMA)" when the build targets neither (then a
// multiply and an add stand in for each FMA).
const char* fma_isa();
int fma_chains();

// GFLOP/s of `threads` threads each running `flops_per_thread` fp32 FMA flops
// at once: one timed run, best taken by the caller.
double fma_gflops(int threads, double flops_per_thread);

// The three STREAM arrays, allocated and touched once, timed many times.
class StreamArrays {
 public:
  explicit StreamArrays(size_t bytes_per_array);
  // GB/s of one triad (a = b + 3c) or copy (a = b) pass on `threads` threads.
  double triad_gbs(int threads);
  double copy_gbs(int threads);
  size_t bytes_per_array() const { return a_.size() * sizeof(double); }

 private:
  std::vector<double> a_, b_, c_;
};

// The median of repeated measurements (sorted copy; at least one value).
double median_of(std::vector<double> values);

}  // namespace ember::bench
