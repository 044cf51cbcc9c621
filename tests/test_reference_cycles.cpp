// Reference cycles through the autograd graph (docs/autograd.md, "Reference
// cycles"): where ember makes none, and the two a user can make, as in
// PyTorch. Memory is counted by the CPU allocator: a scope that leaves
// nothing alive gives back every byte it took.
//
// `make sanitize` runs LeakSanitizer over the suite; the one test that keeps
// a cycle on purpose says so to LeakSanitizer (ignored_by_leak_check).
#include <gtest/gtest.h>

#include <functional>

#include "ember/allocator.h"
#include "ember/custom_function.h"
#include "ember/ember.h"

// GCC says __SANITIZE_ADDRESS__; clang 14 (the fuzz build) says __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define EMBER_TEST_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBER_TEST_LEAK_CHECKED 1
#endif
#endif
#ifdef EMBER_TEST_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace ember::testing {
namespace {

int64_t allocated() { return memory_stats().allocated_bytes; }

// Bytes still allocated after `scope` returned (0: nothing it made lives on).
int64_t kept_by(const std::function<void()>& scope) {
  const int64_t before = allocated();
  scope();
  return allocated() - before;
}

TEST(ReferenceCycles, AResultSavedByItsOwnNodeMakesNone) {
  EXPECT_EQ(kept_by([] {
              const Tensor x = ones({1024}).requires_grad_();
              const Tensor y = x.exp();  // exp's backward reads its own result
              y.sum().backward();
            }),
            0);
  EXPECT_EQ(kept_by([] {
              const Tensor x = ones({1024}).requires_grad_();
              Tensor y = x.sigmoid().tanh();  // a graph never run backward
              (void)y;
            }),
            0);
}

// A hook that captures the tensor it is registered on: the tensor owns the
// hook, the hook owns the tensor. Removing the hook, or capturing a
// detached alias instead, breaks the cycle.
TEST(ReferenceCycles, AHookCapturingItsOwnTensorIsOneUntilRemoved) {
  Tensor leaked;
  uint64_t handle = 0;
  const int64_t kept = kept_by([&] {
    const Tensor y = ones({1024}).requires_grad_().mul(Scalar(2.0));
    handle = y.register_hook([y](const Tensor& g) { return g * y; });
    leaked = y;  // only to remove the hook below
  });
  EXPECT_GT(kept, 0);
  const int64_t before_removal = allocated();
  leaked.remove_hook(handle);
  leaked = Tensor();
  EXPECT_LT(allocated(), before_removal);

  EXPECT_EQ(kept_by([] {
              const Tensor y = ones({1024}).requires_grad_().mul(Scalar(2.0));
              y.register_hook([alias = y.detach()](const Tensor& g) { return g * alias; });
            }),
            0);
}

struct KeepsOutputInSavedData : autograd::Function<KeepsOutputInSavedData> {
  static Tensor forward(autograd::AutogradContext& ctx, const Tensor& x) {
    Tensor out = x * 2;
    ctx.saved_data["out"] = out;  // wrong: save_for_backward({out}) makes no cycle
    return out;
  }
  static autograd::tensor_list backward(autograd::AutogradContext&, autograd::tensor_list grads) {
    return {grads[0] * 2};
  }
};

struct SavesOutput : autograd::Function<SavesOutput> {
  static Tensor forward(autograd::AutogradContext& ctx, const Tensor& x) {
    Tensor out = x * 2;
    ctx.save_for_backward({out});
    return out;
  }
  static autograd::tensor_list backward(autograd::AutogradContext& ctx, autograd::tensor_list grads) {
    EXPECT_TRUE(ctx.get_saved_variables()[0].defined());
    return {grads[0] * 2};
  }
};

// A custom function that keeps its own output in saved_data (PyTorch's
// `ctx.out = out`) is a cycle through its node; save_for_backward is not.
TEST(ReferenceCycles, ACustomFunctionKeepingItsOutputInSavedDataIsOne) {
  EXPECT_EQ(kept_by([] { SavesOutput::apply(ones({1024}).requires_grad_()).sum().backward(); }), 0);
  const int64_t kept = kept_by([] {
#ifdef EMBER_TEST_LEAK_CHECKED
    __lsan::ScopedDisabler ignored_by_leak_check;  // the cycle this test makes on purpose
#endif
    (void)KeepsOutputInSavedData::apply(ones({1024}).requires_grad_());
  });
  EXPECT_GE(kept, 1024 * 4);
}

}  // namespace
}  // namespace ember::testing
