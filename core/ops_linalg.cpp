// Matrix products as the user calls them. mm, bmm, addmm, dot and mv are
// dispatched ops (CPU kernels in kernels/cpu/linalg/matmul.cpp, which check shapes
// and dtypes); matmul, linear and outer are composites built from those ops
// and from views, so autograd and the tracer see only the primitives. The
// composites leave dtype checks to those primitives (as PyTorch does): under
// autocast the dispatched products cast mixed operands to one dtype.
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {
namespace {

// What every product checks before it is dispatched (the dispatcher would
// otherwise pick one device's kernel for tensors on two devices).
void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), op, ": got an undefined tensor");
  EMBER_CHECK(a.device() == b.device(), op, ": expected all tensors on the same device, but got ", a.device(),
              " and ", b.device(), " (shapes ", a.sizes(), " and ", b.sizes(), ")");
}

void check_matrix_operands(const char* op, const Tensor& a, const Tensor& b) {
  check_same_device(op, a, b);
  EMBER_CHECK(a.dtype() != DType::Bool && b.dtype() != DType::Bool, op, ": bool tensors are not supported (got ",
              a.dtype(), " ", a.sizes(), " and ", b.dtype(), " ", b.sizes(),
              "); convert them to an integer or floating dtype");
}

int64_t product(IntArrayRef sizes) {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  return p;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_matrix_operands("mm", a, b);
  return op::mm.call(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_matrix_operands("bmm", a, b);
  return op::bmm.call(a, b);
}

Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
  check_matrix_operands("addmm", m1, m2);
  check_same_device("addmm", self, m1);
  return op::addmm.call(self, m1, m2, beta, alpha);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_matrix_operands("dot", a, b);
  return op::dot.call(a, b);
}

Tensor mv(const Tensor& m, const Tensor& v) {
  check_matrix_operands("mv", m, v);
  return op::mv.call(m, v);
}

// torch.matmul: 1-D operands act as a row (left) or a column (right) vector
// and lose that dim in the result; dims before the last two are batch dims
// and broadcast.
Tensor matmul(const Tensor& a, const Tensor& b) {
  check_matrix_operands("matmul", a, b);
  const int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da >= 1 && db >= 1, "matmul: both arguments need at least 1 dim, but got shapes ", a.sizes(), " and ",
              b.sizes(), " (", da, "-D and ", db, "-D)");
  const int64_t k = a.size(-1), kb = db == 1 ? b.size(0) : b.size(-2);
  EMBER_CHECK(k == kb, "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (", k,
              " columns in the first vs ", kb, " rows in the second)");

  if (da == 1 && db == 1) return op::dot.call(a, b);
  if (da == 2 && db == 1) return op::mv.call(a, b);
  if (da == 1 && db == 2) return op::mm.call(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return op::mm.call(a, b);

  if (db <= 2) {
    // (B..., n, k) (k, m) or (k): fold the batch dims into the rows of one product.
    DimVector out_shape(a.sizes().slice(0, static_cast<size_t>(da - 1)));
    const Tensor rows = a.reshape({product(out_shape), k});
    if (db == 1) return op::mv.call(rows, b).view(out_shape);
    out_shape.push_back(b.size(1));
    return op::mm.call(rows, b).view(out_shape);
  }

  // Batched: (Ba..., n, k) (Bb..., k, m) -> (broadcast(Ba, Bb)..., n, m) through one bmm.
  const Tensor a3 = da == 1 ? a.unsqueeze(0) : a;   // (..., n, k)
  const Tensor b3 = db == 1 ? b.unsqueeze(-1) : b;  // (..., k, m)
  const IntArrayRef batch_a = a3.sizes().slice(0, static_cast<size_t>(a3.dim() - 2)),
                    batch_b = b3.sizes().slice(0, static_cast<size_t>(b3.dim() - 2));
  const DimVector batch = broadcast_shapes(batch_a, batch_b, "matmul");
  const int64_t n = a3.size(-2), m = b3.size(-1), count = product(batch);
  DimVector a_shape(batch), b_shape(batch);
  a_shape.push_back(n);
  a_shape.push_back(k);
  b_shape.push_back(k);
  b_shape.push_back(m);
  const Tensor out = op::bmm.call(a3.expand(a_shape).reshape({count, n, k}), b3.expand(b_shape).reshape({count, k, m}));
  DimVector out_shape(batch);
  if (da > 1) out_shape.push_back(n);
  if (db > 1) out_shape.push_back(m);
  return out.view(out_shape);
}

// input (..., in) @ weight (out, in)^T + bias -> (..., out). With a 2-D
// weight the leading dims of input fold into the rows of one mm or addmm.
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  check_matrix_operands("linear", input, weight);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) check_same_device("linear", input, *bias);
  EMBER_CHECK(input.dim() >= 1, "linear: input must have at least 1 dim, but got shape ", input.sizes(),
              " (weight ", weight.sizes(), ")");
  if (weight.dim() != 2 || (has_bias && input.dim() != 2 && bias->dim() > 1)) {
    // A 1-D weight, or a bias that broadcasts over more than the last dim: as torch, matmul then add.
    const Tensor y = matmul(input, weight.t());
    return has_bias ? op::add.call(y, *bias, 1) : y;
  }
  const int64_t in_features = input.size(-1);
  EMBER_CHECK(in_features == weight.size(1), "linear: input of shape ", input.sizes(), " and weight of shape ",
              weight.sizes(), " don't match (", in_features, " input features vs ", weight.size(1), ")");
  const IntArrayRef lead = input.sizes().slice(0, static_cast<size_t>(input.dim() - 1));
  const Tensor rows = input.dim() == 2 ? input : input.reshape({product(lead), in_features});
  const Tensor wt = weight.t();
  const Tensor y = has_bias ? op::addmm.call(*bias, rows, wt, 1, 1) : op::mm.call(rows, wt);
  if (input.dim() == 2) return y;
  DimVector out_shape(lead);
  out_shape.push_back(weight.size(0));
  return y.view(out_shape);
}

// (n) x (m) -> (n, m), a[i] * b[j], with mul's type promotion.
Tensor outer(const Tensor& a, const Tensor& b) {
  check_same_device("outer", a, b);
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expected two 1-D tensors, but got shapes ", a.sizes(), " and ",
              b.sizes());
  return op::mul.call(a.unsqueeze(1), b.unsqueeze(0));
}

// ---- Tensor methods ----

Tensor Tensor::mm(const Tensor& other) const { return ember::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return ember::bmm(*this, other); }
Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }
Tensor Tensor::dot(const Tensor& other) const { return ember::dot(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return ember::mv(*this, vec); }
Tensor Tensor::outer(const Tensor& other) const { return ember::outer(*this, other); }

}  // namespace ember
