// The attention reference (attention_reference.h): for each problem, the
// score matrix S [L, S], its row softmax, and P V.
#include "kernels/cpu/attention/attention_reference.h"

#include <cmath>
#include <limits>

#include "core/attention_checks.h"
#include "kernels/reference_values.h"

namespace ember::cpu {

std::vector<Tensor> attention_reference(const Tensor& query, const Tensor& key, const Tensor& value,
                                        const Tensor& attn_mask, bool is_causal, std::optional<double> scale) {
  const char* op = "flash_attention";
  reference::check_dtype(query, op);
  const attention::AttentionShape g = attention::check_attention(
      op, query, key, value, attn_mask.defined() ? std::optional<Tensor>(attn_mask) : std::nullopt, is_causal,
      scale ? std::optional<Scalar>(*scale) : std::nullopt);
  const int64_t L = g.l, S = g.s, E = g.e, Ev = g.ev;
  // Every operand broadcast to the full batch, as plain row-major values.
  auto full = [&](const Tensor& t, int64_t rows, int64_t cols) {
    std::vector<int64_t> sizes(g.batch.begin(), g.batch.end());
    sizes.push_back(rows);
    sizes.push_back(cols);
    return reference::read(t.expand(sizes), op);
  };
  const reference::Values q = full(query, L, E), k = full(key, S, E), v = full(value, S, Ev);
  const std::optional<reference::Values> mask =
      attn_mask.defined() ? std::optional<reference::Values>(full(attn_mask, L, S)) : std::nullopt;
  const bool bool_mask = attn_mask.defined() && attn_mask.dtype() == DType::Bool;
  constexpr long double kNegInf = -std::numeric_limits<long double>::infinity();

  std::vector<double> out(g.n * L * Ev), lse(g.n * L);
  std::vector<long double> scores(S);
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t i = 0; i < L; ++i) {
      long double m = kNegInf;
      for (int64_t j = 0; j < S; ++j) {
        long double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += static_cast<long double>(q.v[(b * L + i) * E + e]) * k.v[(b * S + j) * E + e];
        long double s = g.scale * dot;
        if (mask) {
          const double mv = mask->v[(b * L + i) * S + j];
          s = bool_mask ? (mv != 0 ? s : kNegInf) : s + mv;
        }
        if (is_causal && j > i) s = kNegInf;
        scores[j] = s;
        m = std::fmax(m, s);
      }
      long double l = 0;  // the softmax's denominator, relative to exp(m)
      for (int64_t j = 0; j < S; ++j) {
        scores[j] = m == kNegInf ? 0 : std::exp(scores[j] - m);
        l += scores[j];
      }
      for (int64_t c = 0; c < Ev; ++c) {
        long double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += scores[j] * v.v[(b * S + j) * Ev + c];
        out[(b * L + i) * Ev + c] = l == 0 ? 0.0 : static_cast<double>(acc / l);
      }
      lse[b * L + i] = l == 0 ? -std::numeric_limits<double>::infinity() : static_cast<double>(m + std::log(l));
    }
  }
  std::vector<int64_t> out_sizes(g.batch.begin(), g.batch.end()), lse_sizes = out_sizes;
  out_sizes.push_back(L);
  out_sizes.push_back(Ev);
  lse_sizes.push_back(L);
  return {reference::write(out_sizes, out, query.dtype()), reference::write(lse_sizes, lse, query.dtype())};
}

}  // namespace ember::cpu
