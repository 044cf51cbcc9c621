// The argument checks of scaled_dot_product_attention (attention_checks.h).
#include "core/attention_checks.h"

#include <cmath>

#include "ember/error.h"

namespace ember::attention {

AttentionShape check_attention(std::string_view op, const Tensor& q, const Tensor& k, const Tensor& v,
                               const std::optional<Tensor>& attn_mask, bool is_causal,
                               const std::optional<Scalar>& scale) {
  EMBER_CHECK(q.is_floating_point(), op, ": query must be floating point, got ", q.dtype());
  EMBER_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), op,
              ": query, key and value must have one dtype, got ", q.dtype(), ", ", k.dtype(), " and ", v.dtype());
  EMBER_CHECK(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim(), op,
              ": query [..., L, E], key [..., S, E] and value [..., S, Ev] must have the same number of dims "
              "(at least 2), got query ", q.sizes(), ", key ", k.sizes(), " and value ", v.sizes());
  EMBER_CHECK(q.size(-1) == k.size(-1), op, ": query ", q.sizes(), " and key ", k.sizes(),
              " must have the same head dim E (last dim)");
  EMBER_CHECK(k.size(-2) == v.size(-2), op, ": key ", k.sizes(), " and value ", v.sizes(),
              " must have the same length S (dim -2)");
  AttentionShape g;
  for (int64_t d = 0; d + 2 < q.dim(); ++d) {
    int64_t size = 1;
    for (const Tensor* t : {&q, &k, &v}) {
      const int64_t sd = t->size(d);
      EMBER_CHECK(sd == 1 || size == 1 || sd == size, op, ": the batch dims of query ", q.sizes(), ", key ",
                  k.sizes(), " and value ", v.sizes(), " do not broadcast (dim ", d, ")");
      if (sd != 1) size = sd;
    }
    g.batch.push_back(size);
    g.n *= size;
  }
  g.l = q.size(-2);
  g.s = k.size(-2);
  g.e = q.size(-1);
  g.ev = v.size(-1);
  g.causal = is_causal;
  if (attn_mask) {
    const Tensor& m = *attn_mask;
    EMBER_CHECK(!is_causal, op, ": is_causal and attn_mask cannot both be set (put the causal mask into attn_mask)");
    EMBER_CHECK(m.dtype() == DType::Bool || m.dtype() == q.dtype(), op, ": attn_mask must be bool (true = attend) or ",
                "query's dtype ", q.dtype(), " (added to the scores), got ", m.dtype());
    DimVector full = g.batch;
    full.push_back(g.l);
    full.push_back(g.s);
    bool ok = m.dim() <= static_cast<int64_t>(full.size());
    for (int64_t d = 1; ok && d <= m.dim(); ++d) {
      const int64_t want = full[full.size() - static_cast<size_t>(d)];
      ok = m.size(-d) == 1 || m.size(-d) == want;
    }
    EMBER_CHECK(ok, op, ": attn_mask of shape ", m.sizes(), " cannot be broadcast to the attention shape ",
                IntArrayRef(full), " (batch..., L, S)");
  }
  g.scale = scale ? scale->to_double() : 1.0 / std::sqrt(static_cast<double>(g.e));
  return g;
}

}  // namespace ember::attention
