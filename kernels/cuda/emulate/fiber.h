// A fiber: a function with its own stack that can be suspended and resumed
// on one OS thread (ucontext, with AddressSanitizer told about each stack
// switch). The block runner runs every thread of an emulated CUDA block as
// one fiber and switches at barriers and warp collectives.
#pragma once

#include <ucontext.h>

#include <cstddef>

namespace ember::cuda::emulate {

class Fiber {
 public:
  explicit Fiber(size_t stack_bytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares the fiber to run entry(arg) from the top of its stack on the next resume().
  void start(void (*entry)(void*), void* arg);
  // Runs the fiber until it calls suspend() or its entry returns; from the scheduler.
  void resume();
  // Back to the scheduler that resumed this fiber; from inside the fiber.
  void suspend();

 private:
  static void trampoline(unsigned lo, unsigned hi);

  ucontext_t context_{};
  ucontext_t scheduler_{};
  void* stack_ = nullptr;  // the mapping, a guard page first
  size_t stack_bytes_ = 0;
  size_t map_bytes_ = 0;
  void (*entry_)(void*) = nullptr;
  void* arg_ = nullptr;
  void* asan_fake_stack_ = nullptr;
  const void* asan_scheduler_bottom_ = nullptr;
  size_t asan_scheduler_size_ = 0;
};

}  // namespace ember::cuda::emulate
