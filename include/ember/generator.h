// ember::Generator: a seeded stream of random numbers that is the same on CPU
// and CUDA and for any thread count.
//
// A Generator is just (seed, offset) over the counter-based Philox4x32-10
// generator: the seed picks the stream, the offset says how many 128-bit
// blocks of it are used up. A random op asks `reserve` for the blocks it
// needs and computes them from (seed, first block) on any device, in any
// order; see Note [Philox element mapping] in core/philox.h for which block
// and lane each element comes from.
#pragma once

#include <cstdint>
#include <memory>

namespace ember {

class Generator {  // a Philox stream: (seed, offset). Copyable state.
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL);
  // A copy continues the same stream independently of the original.
  Generator(const Generator& other);
  Generator& operator=(const Generator& other);
  ~Generator();

  void manual_seed(uint64_t seed);  // resets offset to 0
  uint64_t seed() const;
  uint64_t offset() const;
  void set_offset(uint64_t offset);
  // Reserves `blocks` Philox counter blocks and returns the first block's offset (thread-safe).
  uint64_t reserve(uint64_t blocks);

 private:
  // (seed, offset) and the mutex that guards them, kept in core/generator.cpp
  // so that this header does not need <mutex>.
  struct State;
  std::unique_ptr<State> state_;
};

// The global CPU generator.
Generator& default_generator();
// Seeds the default generator (and, once they exist, the CUDA ones).
void manual_seed(uint64_t seed);

}  // namespace ember
