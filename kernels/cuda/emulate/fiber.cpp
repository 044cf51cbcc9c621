#include "kernels/cuda/emulate/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "ember/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define EMBER_FIBER_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif

namespace ember::cuda::emulate {

Fiber::Fiber(size_t stack_bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
  map_bytes_ = stack_bytes_ + page;
  // Pages are committed only when touched; the lowest one is a guard against overflow.
  stack_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EMBER_CHECK(stack_ != MAP_FAILED, "CUDA emulation: cannot map a ", map_bytes_, "-byte fiber stack");
  EMBER_CHECK(mprotect(stack_, page, PROT_NONE) == 0, "CUDA emulation: cannot protect a fiber stack's guard page");
}

Fiber::~Fiber() { munmap(stack_, map_bytes_); }

void Fiber::start(void (*entry)(void*), void* arg) {
  entry_ = entry;
  arg_ = arg;
  EMBER_CHECK(getcontext(&context_) == 0, "CUDA emulation: getcontext failed");
  context_.uc_stack.ss_sp = static_cast<char*>(stack_) + (map_bytes_ - stack_bytes_);
  context_.uc_stack.ss_size = stack_bytes_;
  context_.uc_link = &scheduler_;
  const auto self = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::trampoline), 2, static_cast<unsigned>(self),
              static_cast<unsigned>(self >> 32));
}

void Fiber::trampoline(unsigned lo, unsigned hi) {
  auto* self = reinterpret_cast<Fiber*>(static_cast<uintptr_t>(lo) | (static_cast<uintptr_t>(hi) << 32));
#ifdef EMBER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &self->asan_scheduler_bottom_, &self->asan_scheduler_size_);
#endif
  self->entry_(self->arg_);
#ifdef EMBER_FIBER_ASAN
  // The fiber ends: its fake stack can go (nullptr save slot).
  __sanitizer_start_switch_fiber(nullptr, self->asan_scheduler_bottom_, self->asan_scheduler_size_);
#endif
  // Returning switches to uc_link, the scheduler.
}

void Fiber::resume() {
#ifdef EMBER_FIBER_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, static_cast<char*>(stack_) + (map_bytes_ - stack_bytes_), stack_bytes_);
#endif
  EMBER_CHECK(swapcontext(&scheduler_, &context_) == 0, "CUDA emulation: swapcontext failed");
#ifdef EMBER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void Fiber::suspend() {
#ifdef EMBER_FIBER_ASAN
  __sanitizer_start_switch_fiber(&asan_fake_stack_, asan_scheduler_bottom_, asan_scheduler_size_);
#endif
  swapcontext(&context_, &scheduler_);
#ifdef EMBER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(asan_fake_stack_, &asan_scheduler_bottom_, &asan_scheduler_size_);
#endif
}

}  // namespace ember::cuda::emulate
