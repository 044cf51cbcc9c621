// Tuned kernel vs reference kernel comparisons (reference_check.h).
#include "tests/reference_check.h"

#include "ember/parallel.h"
#include "kernels/reference_kernels.h"
#include "kernels/reference_values.h"

namespace ember::testing {
namespace {

class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

std::vector<Tensor> run_reference(const std::string& op, const Stack& args) {
  const ReferenceKernel* r = find_cpu_reference(op);
  EMBER_CHECK(r != nullptr, "no CPU reference kernel with a run for ", op);
  std::vector<Tensor> out = r->run(args);
  for (const Tensor& t : out)
    EMBER_CHECK(t.is_contiguous() && !t.is_cuda(), op, ": a reference output must be a contiguous CPU tensor");
  return out;
}

}  // namespace

const char* layout_name(RefLayout l) {
  switch (l) {
    case RefLayout::Contiguous:
      return "contiguous";
    case RefLayout::Transposed:
      return "transposed";
    case RefLayout::Stepped:
      return "stepped";
  }
  return "?";
}

Tensor random_input(const Shape& shape, DType dtype, RefLayout layout, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Shape stored = shape;
  if (layout == RefLayout::Transposed) std::reverse(stored.begin(), stored.end());
  if (layout == RefLayout::Stepped && !stored.empty()) stored.back() *= 2;
  std::vector<double> values(static_cast<size_t>(numel_of(stored)));
  for (double& v : values) v = dist(rng);
  const Tensor t = reference::write(stored, values, dtype);
  if (layout == RefLayout::Transposed) {
    Shape reverse(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) reverse[d] = static_cast<int64_t>(shape.size() - 1 - d);
    return t.permute(reverse);
  }
  if (layout == RefLayout::Stepped && !shape.empty()) return t.slice(-1, 0, std::nullopt, 2);
  return t;
}

::testing::AssertionResult tuned_matches_reference(const std::string& op, const Stack& args, int64_t accumulated,
                                                   bool exact) try {
  const std::vector<Tensor> expected = run_reference(op, args);
  for (int threads : {1, 2}) {
    const ThreadCount guard(threads);
    const TensorList actual = run_sample(op, Sample{"", args});
    if (actual.size() < expected.size())
      return ::testing::AssertionFailure()
             << op << ": " << actual.size() << " outputs, the reference has " << expected.size();
    for (size_t i = 0; i < expected.size(); ++i) {
      ::testing::AssertionResult r = matches(to_host(actual[i]), to_host(expected[i]), {exact, accumulated, false});
      if (!r)
        return ::testing::AssertionFailure()
               << op << " output " << i << " with " << threads << " threads: " << r.message();
    }
  }
  return ::testing::AssertionSuccess();
} catch (const Error& e) {
  return ::testing::AssertionFailure() << op << " raised: " << e.what();
}

::testing::AssertionResult perturbation_is_rejected(const std::string& op, const Stack& args, int64_t accumulated) {
  const std::vector<Tensor> expected = run_reference(op, args);
  const HostTensor exact = to_host(expected.at(0));
  if (exact.numel() == 0 || !exact.floating()) return ::testing::AssertionFailure() << op << ": nothing to perturb";
  const Accuracy accuracy{false, accumulated, false};
  if (!matches(exact, exact, accuracy)) return ::testing::AssertionFailure() << op << ": output 0 rejects itself";
  HostTensor moved = exact;
  const size_t k = static_cast<size_t>(moved.numel() / 2);
  moved.f[k] += 3 * tolerance(exact.dtype, accumulated).bound(exact.f[k]);
  if (matches(moved, exact, accuracy)) return ::testing::AssertionFailure() << op << ": a moved element passes";
  return ::testing::AssertionSuccess();
}

}  // namespace ember::testing
