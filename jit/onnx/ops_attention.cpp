// flash_attention (scaled dot-product attention) as ONNX nodes: opset 17
// has no attention operator, so it is the composite
//   softmax(Q K^T * scale + mask) V
// with a bool mask (false: masked out) applied as -inf and a causal mask as
// a constant lower-triangular pattern. Rows whose keys are all masked give 0,
// as ember's kernel does (ONNX's Softmax gives NaN there).
#include <cmath>
#include <limits>

#include "ember/ops.h"
#include "jit/onnx/op_table.h"

namespace ember::onnx {
namespace {

// flash_attention(query, key, value, attn_mask?, is_causal, scale?) -> (output, logsumexp)
// query (..., L, E), key (..., S, E), value (..., S, Ev)
void flash_attention(NodeExport& e) {
  const DType t = e.out_dtype();
  const jit::SymShape& q = e.value(0).shape;
  const jit::SymShape& k = e.value(1).shape;
  if (q.size() < 2 || k.size() < 2) e.fail("query and key need at least 2 dims");
  const int64_t rank = e.rank(1);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  const std::string key_t = e.b.op("Transpose", {e.in_as(1, t)}, e.tmp("key_t"));
  attr_ints(e.b.last(), "perm", perm);

  std::optional<double> scale = e.opt_float(5);
  if (!scale) {
    const jit::SymDim& embed = q.back();
    if (!embed.is_static()) e.fail("the head size depends on the batch");
    scale = 1.0 / std::sqrt(static_cast<double>(embed.offset));
  }
  std::string scores = e.b.op("MatMul", {e.in_as(0, t), key_t}, e.tmp("qk"));
  scores = e.b.op("Mul", {scores, e.b.scalar(*scale, t)}, e.tmp("scores"));

  auto minus_inf = [&] { return e.b.scalar(-std::numeric_limits<double>::infinity(), t); };
  bool masked = false;
  if (e.has(3)) {
    masked = true;
    if (e.value(3).dtype == DType::Bool) scores = e.b.op("Where", {e.in(3), scores, minus_inf()}, e.tmp("masked"));
    else scores = e.b.op("Add", {scores, e.in_as(3, t)}, e.tmp("masked"));
  }
  if (e.bool_arg(4)) {
    const jit::SymDim l = q[q.size() - 2], s = k[k.size() - 2];
    if (!l.is_static() || !s.is_static()) e.fail("is_causal with a sequence length that depends on the batch");
    const std::string pattern = e.tmp("causal");
    e.b.initializer(ones({l.offset, s.offset}, TensorOptions(DType::Bool)).tril(), pattern);
    scores = e.b.op("Where", {pattern, scores, minus_inf()}, e.tmp("causal_scores"));
    masked = true;
  }
  std::string probs = e.b.op("Softmax", {scores}, e.tmp("probs"));
  attr_int(e.b.last(), "axis", -1);
  if (masked) {
    const std::string nan = e.b.op("IsNaN", {probs}, e.tmp("all_masked"));
    probs = e.b.op("Where", {nan, e.b.scalar(0.0, t), probs}, e.tmp("probs_or_0"));
  }
  e.b.add("MatMul", {probs, e.in_as(2, t)}, {e.out(0)});
  if (e.used(1)) {
    const std::string lse = e.b.op("ReduceLogSumExp", {scores}, e.tmp("lse"));
    attr_ints(e.b.last(), "axes", {-1});
    attr_int(e.b.last(), "keepdims", 0);
    e.b.add("Identity", {e.b.cast(lse, t, e.out_dtype(1))}, {e.out(1)});
  }
}

}  // namespace

void add_attention_ops(OpTable& table) { table["flash_attention"] = flash_attention; }

}  // namespace ember::onnx
