// Checks shared by the loss kernels and the composite losses (loss_checks.h).
#include "core/loss_checks.h"

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::loss {

Reduction parse_reduction(std::string_view reduction, const char* op) {
  if (reduction == "none") return Reduction::None;
  if (reduction == "mean") return Reduction::Mean;
  if (reduction == "sum") return Reduction::Sum;
  EMBER_FAIL(op, ": unknown reduction '", reduction, "'; expected 'none', 'mean' or 'sum'");
}

ClassRows check_class_target(const char* op, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight) {
  EMBER_CHECK(self.is_floating_point(), op, ": expected a floating-point input, got ", self.dtype());
  EMBER_CHECK(self.dim() >= 1, op, ": expected an input of shape (C), (N, C) or (N, C, d1, ...), got a 0-d tensor");
  EMBER_CHECK(target.dtype() == DType::Int64, op, ": expected int64 class indices as target, got ", target.dtype(),
              " ", target.sizes(), " (class probabilities need a floating target of the input's shape ",
              self.sizes(), ")");
  ClassRows g;
  if (self.dim() == 1) {
    EMBER_CHECK(target.dim() == 0, op, ": an unbatched input of shape ", self.sizes(),
                " expects a 0-d target, got target of shape ", target.sizes());
    g.rows = 1;
    g.classes = self.size(0);
  } else {
    bool ok = target.dim() == self.dim() - 1 && target.size(0) == self.size(0);
    for (int64_t d = 2; ok && d < self.dim(); ++d) ok = target.size(d - 1) == self.size(d);
    EMBER_CHECK(ok, op, ": input of shape ", self.sizes(), " (N, C, d...) expects a target of shape (N, d...), got ",
                target.sizes());
    g.classes = self.size(1);
    for (int64_t d = 2; d < self.dim(); ++d) g.inner *= self.size(d);
    g.rows = self.size(0) * g.inner;
  }
  if (weight && weight->defined()) {
    EMBER_CHECK(weight->is_floating_point() && weight->dim() == 1 && weight->size(0) == g.classes, op,
                ": expected a floating weight of shape [", g.classes, "] (one per class), got ", weight->dtype(),
                " ", weight->sizes());
  }
  return g;
}

std::vector<double> class_weights(const std::optional<Tensor>& weight, int64_t classes) {
  std::vector<double> w(static_cast<size_t>(classes), 1.0);
  if (!weight || !weight->defined()) return w;
  const Tensor h = weight->to(DType::Float64).contiguous();
  const double* p = h.data_ptr<double>();
  for (int64_t c = 0; c < classes; ++c) w[static_cast<size_t>(c)] = p[c];
  return w;
}

double checked_target_weight(const char* op, const int64_t* target, int64_t rows, int64_t classes,
                             int64_t ignore_index, const std::vector<double>& weights) {
  double total = 0;
  for (int64_t n = 0; n < rows; ++n) {
    const int64_t t = target[n];
    if (t == ignore_index) continue;
    EMBER_CHECK(t >= 0 && t < classes, op, ": target ", t, " at position ", n, " is out of bounds for ", classes,
                " classes (expected 0 <= target < ", classes, ", or ignore_index = ", ignore_index, ")");
    total += weights[static_cast<size_t>(t)];
  }
  return total;
}

}  // namespace ember::loss
