// op-info rows of the attention family: flash_attention (the fused op behind
// nn::functional::scaled_dot_product_attention) and flash_attention_backward.
// The reference is the textbook formula in double, one (batch, head) problem
// at a time: S = scale * Q K^T + mask, P = softmax(S), O = P V; and for the
// backward dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O) + dlse),
// dQ = scale * dS K, dK = scale * dS^T Q.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/op_decls_attention.h"
#include "tests/op_info.h"

namespace ember::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue opt(const Tensor& t) { return t.defined() ? IValue::Payload(t) : IValue(); }
IValue flag(bool b) { return IValue::Payload(b); }
IValue opt_scale(std::optional<double> s) { return s ? IValue::Payload(Scalar(*s)) : IValue(); }

// Inputs from a seeded generator, one stream per (op, dtype, size).
class Inputs {
 public:
  Inputs(const std::string& op, DType t, SampleSize size) : dtype_(t) {
    for (char c : op) seed_ = seed_ * 131 + static_cast<uint8_t>(c);
    seed_ += 17 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 5 : 0);
  }
  // Uniform in [-1.5, 1.5): scores stay moderate, so the softmax is not one-hot.
  Tensor uniform(const Shape& shape, DType t) { return rand_in(shape).mul(Scalar(3.0)).sub(Scalar(1.5)).to(t); }
  Tensor uniform(const Shape& shape) { return uniform(shape, dtype_); }
  // Same values laid out as the transpose of a contiguous [..., cols, rows] tensor.
  Tensor transposed(Shape shape) {
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    return uniform(shape).transpose(-1, -2);
  }
  // Every other element of the last dim (stride 2, storage offset 1).
  Tensor sliced(Shape shape) {
    shape.back() = 2 * shape.back() + 1;
    return uniform(shape).slice(-1, 1, std::nullopt, 2);
  }
  // A bool mask, true with probability 0.7, with key 0 always attended (no empty rows).
  Tensor bool_mask(const Shape& shape) {
    const Tensor u = rand_in(shape);
    Tensor m = ember::empty(shape, kBool);
    const double* pu = u.data_ptr<double>();
    bool* pm = m.data_ptr<bool>();
    const int64_t cols = shape.empty() ? 1 : shape.back();
    for (int64_t k = 0; k < m.numel(); ++k) pm[k] = k % cols == 0 || pu[k] < 0.7;
    return m;
  }

 private:
  Tensor rand_in(const Shape& shape) {
    Generator g(seed_++);
    return ember::rand(shape, kFloat64, &g);
  }
  DType dtype_;
  uint64_t seed_ = 7;
};

// ---------------------------------------------------------------------------
// Reference

// t (right-aligned against a full shape of rank `rank`) as strides over the full index; 0 where it broadcasts.
std::vector<int64_t> full_strides(const HostTensor& t, size_t rank) {
  std::vector<int64_t> st(rank, 0);
  int64_t s = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const size_t fd = rank - static_cast<size_t>(t.dim() - d);
    st[fd] = t.shape[static_cast<size_t>(d)] == 1 ? 0 : s;
    s *= t.shape[static_cast<size_t>(d)];
  }
  return st;
}

struct Problem {
  Shape batch;
  int64_t n = 1, l = 0, s = 0, e = 0, ev = 0;
  double scale = 1;
  bool causal = false;
};

// One operand of the problem: element (b, i, c) of batch problem b.
struct Operand {
  const HostTensor* t = nullptr;
  std::vector<int64_t> base;  // offset of each batch problem
  int64_t rs = 0, cs = 0;
  Operand() = default;
  Operand(const HostTensor& h, const Problem& p) : t(&h) {
    const size_t nb = p.batch.size();
    const std::vector<int64_t> st = full_strides(h, nb + 2);
    rs = st[nb];
    cs = st[nb + 1];
    for (int64_t b = 0; b < p.n; ++b) {
      int64_t rest = b, off = 0;
      for (size_t d = nb; d-- > 0;) {
        off += (rest % p.batch[d]) * st[d];
        rest /= p.batch[d];
      }
      base.push_back(off);
    }
  }
  double at(int64_t b, int64_t i, int64_t c) const { return t->f[static_cast<size_t>(base[b] + i * rs + c * cs)]; }
  bool flag_at(int64_t b, int64_t i, int64_t c) const {
    return t->i[static_cast<size_t>(base[b] + i * rs + c * cs)] != 0;
  }
};

// The problem of (query, key, value), or nullopt when the shapes are invalid.
std::optional<Problem> problem_of(const HostTensor& q, const HostTensor& k, const HostTensor& v, bool causal,
                                  std::optional<double> scale) {
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim()) return std::nullopt;
  Problem p;
  for (int64_t d = 0; d + 2 < q.dim(); ++d) {
    int64_t size = 1;
    for (const HostTensor* t : {&q, &k, &v}) {
      const int64_t sd = t->shape[static_cast<size_t>(d)];
      if (sd != 1 && size != 1 && sd != size) return std::nullopt;
      if (sd != 1) size = sd;
    }
    p.batch.push_back(size);
    p.n *= size;
  }
  p.l = q.shape[q.shape.size() - 2];
  p.e = q.shape.back();
  p.s = k.shape[k.shape.size() - 2];
  p.ev = v.shape.back();
  if (k.shape.back() != p.e || v.shape[v.shape.size() - 2] != p.s) return std::nullopt;
  p.causal = causal;
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(p.e));
  return p;
}

bool mask_broadcasts(const HostTensor& m, const Problem& p) {
  Shape full = p.batch;
  full.push_back(p.l);
  full.push_back(p.s);
  if (m.dim() > static_cast<int64_t>(full.size())) return false;
  for (int64_t d = 1; d <= m.dim(); ++d) {
    const int64_t ms = m.shape[m.shape.size() - static_cast<size_t>(d)];
    if (ms != 1 && ms != full[full.size() - static_cast<size_t>(d)]) return false;
  }
  return true;
}

// P of problem b ([L][S], row-major), zero rows where every key is masked (PyTorch >= 2.5); lse per row.
void probabilities(const Problem& p, const Operand& q, const Operand& k, const std::optional<Operand>& mask,
                   bool bool_mask, int64_t b, std::vector<double>& prob, std::vector<double>& lse) {
  prob.assign(static_cast<size_t>(p.l * p.s), 0.0);
  lse.assign(static_cast<size_t>(p.l), -kInf);
  for (int64_t i = 0; i < p.l; ++i) {
    double* row = prob.data() + i * p.s;
    double m = -kInf;
    for (int64_t j = 0; j < p.s; ++j) {
      double acc = 0;
      for (int64_t c = 0; c < p.e; ++c) acc += q.at(b, i, c) * k.at(b, j, c);
      double sc = p.scale * acc;
      if (mask && bool_mask && !mask->flag_at(b, i, j)) sc = -kInf;
      if (mask && !bool_mask) sc += mask->at(b, i, j);
      if (p.causal && j > i) sc = -kInf;
      row[j] = sc;
      m = std::max(m, sc);
    }
    if (p.s == 0) continue;
    if (m == -kInf) {
      std::fill(row, row + p.s, 0.0);
      continue;
    }
    double sum = 0;
    for (int64_t j = 0; j < p.s; ++j) sum += (row[j] = std::exp(row[j] - m));
    for (int64_t j = 0; j < p.s; ++j) row[j] /= sum;
    lse[static_cast<size_t>(i)] = m + std::log(sum);
  }
}

DType lse_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

Shape with_tail(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

struct ReadArgs {
  HostTensor q, k, v;
  std::optional<HostTensor> mask;
  bool causal = false;
  std::optional<double> scale;
};

// Checks shared by both rows; "" when the arguments are valid.
std::optional<Problem> checked(const ReadArgs& r, DType qdtype, std::string& error) {
  std::optional<Problem> p = problem_of(r.q, r.k, r.v, r.causal, r.scale);
  if (!p) return std::nullopt;
  if (r.k.dtype != qdtype || r.v.dtype != qdtype) return std::nullopt;
  if (r.mask) {
    if (r.causal) {
      error = "is_causal and attn_mask";
      return std::nullopt;
    }
    if (r.mask->dtype != DType::Bool && r.mask->dtype != qdtype) {
      error = "attn_mask must be bool";
      return std::nullopt;
    }
    if (!mask_broadcasts(*r.mask, *p)) {
      error = "cannot be broadcast";
      return std::nullopt;
    }
  }
  return p;
}

// flash_attention(query, key, value, attn_mask, is_causal, scale)
Expected forward_ref(const RefArgs& a) {
  ReadArgs r{a.tensor(0), a.tensor(1), a.tensor(2), std::nullopt, a.flag(4), std::nullopt};
  if (!a.is_none(3)) r.mask = a.tensor(3);
  if (!a.is_none(5)) r.scale = a.number(5);
  std::string error;
  const std::optional<Problem> p = checked(r, r.q.dtype, error);
  if (!p) return Expected::raises(error);
  const Operand q(r.q, *p), k(r.k, *p), v(r.v, *p);
  std::optional<Operand> mask;
  if (r.mask) mask.emplace(*r.mask, *p);
  HostTensor out(with_tail(p->batch, {p->l, p->ev}), a.out);
  HostTensor lse(with_tail(p->batch, {p->l}), lse_dtype(a.out));
  std::vector<double> prob, row_lse;
  for (int64_t b = 0; b < p->n; ++b) {
    probabilities(*p, q, k, mask, r.mask && r.mask->dtype == DType::Bool, b, prob, row_lse);
    for (int64_t i = 0; i < p->l; ++i) {
      lse.set(b * p->l + i, row_lse[static_cast<size_t>(i)]);
      for (int64_t c = 0; c < p->ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < p->s; ++j) acc += prob[static_cast<size_t>(i * p->s + j)] * v.at(b, j, c);
        out.set((b * p->l + i) * p->ev + c, acc);
      }
    }
  }
  return {{out, lse}, false, ""};
}

// flash_attention_backward(grad_output, grad_logsumexp, query, key, value, output, logsumexp,
//                          attn_mask, is_causal, scale)
Expected backward_ref(const RefArgs& a) {
  ReadArgs r{a.tensor(2), a.tensor(3), a.tensor(4), std::nullopt, a.flag(8), std::nullopt};
  if (!a.is_none(7)) r.mask = a.tensor(7);
  if (!a.is_none(9)) r.scale = a.number(9);
  std::string error;
  const std::optional<Problem> p = checked(r, r.q.dtype, error);
  if (!p) return Expected::raises(error);
  const HostTensor go_h = a.tensor(0);
  if (go_h.shape != with_tail(p->batch, {p->l, p->ev})) return Expected::raises("grad_output must have shape");
  std::optional<HostTensor> glse;
  if (!a.is_none(1)) glse = a.tensor(1);
  const Operand q(r.q, *p), k(r.k, *p), v(r.v, *p), go(go_h, *p);
  std::optional<Operand> mask;
  if (r.mask) mask.emplace(*r.mask, *p);
  HostTensor dq(with_tail(p->batch, {p->l, p->e}), a.out), dk(with_tail(p->batch, {p->s, p->e}), a.out),
      dv(with_tail(p->batch, {p->s, p->ev}), a.out);
  std::vector<double> prob, row_lse;
  for (int64_t b = 0; b < p->n; ++b) {
    probabilities(*p, q, k, mask, r.mask && r.mask->dtype == DType::Bool, b, prob, row_lse);
    std::vector<double> ds(prob.size()), gq(static_cast<size_t>(p->l * p->e), 0.0),
        gk(static_cast<size_t>(p->s * p->e), 0.0), gv(static_cast<size_t>(p->s * p->ev), 0.0);
    for (int64_t i = 0; i < p->l; ++i) {
      std::vector<double> dp(static_cast<size_t>(p->s));
      double d = 0;  // rowsum(P * dP) = rowsum(dO * O)
      for (int64_t j = 0; j < p->s; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < p->ev; ++c) acc += go.at(b, i, c) * v.at(b, j, c);
        dp[static_cast<size_t>(j)] = acc;
        d += prob[static_cast<size_t>(i * p->s + j)] * acc;
      }
      const double g = glse ? glse->f[static_cast<size_t>(b * p->l + i)] : 0.0;
      for (int64_t j = 0; j < p->s; ++j) {
        const double pij = prob[static_cast<size_t>(i * p->s + j)];
        ds[static_cast<size_t>(i * p->s + j)] = pij * (dp[static_cast<size_t>(j)] - d + g);
        for (int64_t c = 0; c < p->ev; ++c) gv[static_cast<size_t>(j * p->ev + c)] += pij * go.at(b, i, c);
      }
    }
    for (int64_t i = 0; i < p->l; ++i) {
      for (int64_t j = 0; j < p->s; ++j) {
        const double dsij = p->scale * ds[static_cast<size_t>(i * p->s + j)];
        for (int64_t c = 0; c < p->e; ++c) {
          gq[static_cast<size_t>(i * p->e + c)] += dsij * k.at(b, j, c);
          gk[static_cast<size_t>(j * p->e + c)] += dsij * q.at(b, i, c);
        }
      }
    }
    for (size_t x = 0; x < gq.size(); ++x) dq.set(b * p->l * p->e + static_cast<int64_t>(x), gq[x]);
    for (size_t x = 0; x < gk.size(); ++x) dk.set(b * p->s * p->e + static_cast<int64_t>(x), gk[x]);
    for (size_t x = 0; x < gv.size(); ++x) dv.set(b * p->s * p->ev + static_cast<int64_t>(x), gv[x]);
  }
  return {{dq, dk, dv}, false, ""};
}

// ---------------------------------------------------------------------------
// Samples

// The arguments of one forward call.
struct Call {
  Tensor q, k, v, mask;
  bool causal = false;
  std::optional<double> scale;
  Call(Tensor q_, Tensor k_, Tensor v_, Tensor mask_ = Tensor(), bool causal_ = false,
       std::optional<double> scale_ = std::nullopt)
      : q(std::move(q_)), k(std::move(k_)), v(std::move(v_)), mask(std::move(mask_)), causal(causal_), scale(scale_) {}
  Stack stack() const { return {arg(q), arg(k), arg(v), opt(mask), flag(causal), opt_scale(scale)}; }
};

// Valid problems: odd sizes, several key blocks, every mask kind, broadcast
// batch dims, strided inputs.
std::vector<std::pair<std::string, Call>> valid_calls(Inputs& in, SampleSize size) {
  std::vector<std::pair<std::string, Call>> out;
  auto add = [&](std::string name, Call c) { out.emplace_back(std::move(name), std::move(c)); };
  if (size == SampleSize::Large) {  // ~100k input elements, several blocks of queries and keys
    add("large", {in.uniform({2, 4, 100, 32}), in.uniform({2, 4, 150, 32}), in.uniform({2, 4, 150, 32})});
    add("large_causal", {in.uniform({2, 4, 150, 32}), in.uniform({2, 4, 150, 32}), in.uniform({2, 4, 150, 32}),
                         Tensor(), true});
    add("large_mask", {in.uniform({1, 4, 130, 32}), in.uniform({1, 4, 140, 32}), in.uniform({1, 4, 140, 32}),
                       in.bool_mask({130, 140})});
    return out;
  }
  add("basic", {in.uniform({2, 3, 5, 8}), in.uniform({2, 3, 7, 8}), in.uniform({2, 3, 7, 6})});
  add("batch1", {in.uniform({1, 1, 4, 4}), in.uniform({1, 1, 3, 4}), in.uniform({1, 1, 3, 5})});
  add("rank3", {in.uniform({3, 4, 5}), in.uniform({3, 6, 5}), in.uniform({3, 6, 2})});
  add("rank2", {in.uniform({4, 3}), in.uniform({5, 3}), in.uniform({5, 3})});
  add("one_key", {in.uniform({1, 2, 3, 4}), in.uniform({1, 2, 1, 4}), in.uniform({1, 2, 1, 4})});
  add("causal", {in.uniform({2, 2, 6, 4}), in.uniform({2, 2, 6, 4}), in.uniform({2, 2, 6, 3}), Tensor(), true});
  add("causal_more_queries", {in.uniform({1, 2, 7, 4}), in.uniform({1, 2, 4, 4}), in.uniform({1, 2, 4, 4}),
                              Tensor(), true});
  add("causal_more_keys", {in.uniform({1, 2, 3, 4}), in.uniform({1, 2, 6, 4}), in.uniform({1, 2, 6, 4}),
                           Tensor(), true});
  add("bool_mask", {in.uniform({2, 2, 5, 4}), in.uniform({2, 2, 6, 4}), in.uniform({2, 2, 6, 4}),
                    in.bool_mask({5, 6})});
  add("bool_mask_per_head", {in.uniform({2, 2, 3, 4}), in.uniform({2, 2, 4, 4}), in.uniform({2, 2, 4, 4}),
                             in.bool_mask({2, 1, 3, 4})});
  add("float_mask", {in.uniform({2, 2, 4, 4}), in.uniform({2, 2, 5, 4}), in.uniform({2, 2, 5, 3}),
                     in.uniform({1, 2, 1, 5})});
  add("float_mask_full", {in.uniform({1, 2, 3, 4}), in.uniform({1, 2, 4, 4}), in.uniform({1, 2, 4, 4}),
                          in.uniform({1, 2, 3, 4})});
  add("scale", {in.uniform({1, 2, 4, 6}), in.uniform({1, 2, 5, 6}), in.uniform({1, 2, 5, 6}), Tensor(), false, 0.3});
  add("broadcast_batch", {in.uniform({2, 3, 4, 4}), in.uniform({1, 3, 5, 4}), in.uniform({2, 1, 5, 3})});
  add("transposed", {in.transposed({2, 2, 5, 4}), in.transposed({2, 2, 6, 4}), in.uniform({2, 2, 6, 3})});
  add("sliced", {in.sliced({2, 2, 5, 4}), in.uniform({2, 2, 6, 4}), in.sliced({2, 2, 6, 3})});
  add("blocks", {in.uniform({1, 1, 70, 3}), in.uniform({1, 1, 150, 3}), in.uniform({1, 1, 150, 2})});
  add("blocks_causal", {in.uniform({1, 1, 70, 3}), in.uniform({1, 1, 140, 3}), in.uniform({1, 1, 140, 2}),
                        Tensor(), true});
  return out;
}

// Valid problems at the edges (rows with every key masked, no keys): not gradchecked, pinned by the reference.
std::vector<std::pair<std::string, Call>> special_calls(Inputs& in, DType t) {
  std::vector<std::pair<std::string, Call>> out;
  Tensor none_row = in.bool_mask({3, 4});
  none_row.select(0, 1).fill_(Scalar(false));  // query 1 attends nothing: zeros, as torch >= 2.5
  out.emplace_back("masked_row",
                   Call{in.uniform({1, 2, 3, 4}), in.uniform({1, 2, 4, 4}), in.uniform({1, 2, 4, 4}), none_row});
  Tensor inf_mask = in.uniform({3, 4}, t);
  inf_mask.select(0, 2).fill_(Scalar(-kInf));  // a float mask of -inf: the same
  out.emplace_back("minus_inf_row",
                   Call{in.uniform({1, 1, 3, 4}), in.uniform({1, 1, 4, 4}), in.uniform({1, 1, 4, 4}), inf_mask});
  out.emplace_back("no_keys", Call{in.uniform({2, 3, 4}), in.uniform({2, 0, 4}), in.uniform({2, 0, 3})});
  out.emplace_back("no_queries", Call{in.uniform({2, 0, 4}), in.uniform({2, 3, 4}), in.uniform({2, 3, 3})});
  return out;
}

// Invalid calls: (name, call, part of the message).
std::vector<std::tuple<std::string, Call, std::string>> bad_calls(Inputs& in, DType t) {
  const DType other = t == DType::Float64 ? DType::Float32 : DType::Float64;
  std::vector<std::tuple<std::string, Call, std::string>> out;
  auto q = [&] { return in.uniform({2, 2, 4, 8}); };
  auto kv = [&] { return in.uniform({2, 2, 5, 8}); };
  out.emplace_back("bad_mask_shape", Call{q(), kv(), kv(), in.bool_mask({3, 5})}, "cannot be broadcast");
  out.emplace_back("bad_mask_batch", Call{q(), kv(), kv(), in.uniform({3, 1, 4, 5})}, "cannot be broadcast");
  out.emplace_back("bad_mask_rank", Call{q(), kv(), kv(), in.uniform({1, 2, 2, 4, 5})}, "cannot be broadcast");
  out.emplace_back("head_dim_mismatch", Call{q(), in.uniform({2, 2, 5, 6}), kv()}, "head dim");
  out.emplace_back("batch_mismatch", Call{q(), in.uniform({3, 2, 5, 8}), in.uniform({3, 2, 5, 8})},
                   "do not broadcast");
  out.emplace_back("key_value_length", Call{q(), kv(), in.uniform({2, 2, 6, 8})}, "same length");
  out.emplace_back("rank_mismatch", Call{q(), in.uniform({2, 5, 8}), in.uniform({2, 5, 8})}, "number of dims");
  out.emplace_back("rank1", Call{in.uniform({8}), in.uniform({8}), in.uniform({8})}, "number of dims");
  out.emplace_back("causal_with_mask", Call{q(), kv(), kv(), in.bool_mask({4, 5}), true}, "is_causal and attn_mask");
  Tensor int_mask = in.bool_mask({4, 5}).to(DType::Int64);
  out.emplace_back("int_mask", Call{q(), kv(), kv(), int_mask}, "attn_mask must be bool");
  out.emplace_back("mask_other_float", Call{q(), kv(), kv(), in.uniform({4, 5}, other)}, "attn_mask must be bool");
  out.emplace_back("dtype_mismatch", Call{q(), in.uniform({2, 2, 5, 8}, other), kv()}, "one dtype");
  return out;
}

std::vector<Sample> forward_samples(DType t, SampleSize size) {
  Inputs in("flash_attention", t, size);
  std::vector<Sample> out;
  for (auto& [name, c] : valid_calls(in, size)) out.push_back({name, c.stack()});
  if (size == SampleSize::Large) return out;
  for (auto& [name, c] : special_calls(in, t)) out.push_back({name, c.stack()});
  for (auto& [name, c, err] : bad_calls(in, t)) out.push_back({name, c.stack(), {}, err});
  return out;
}

// The backward's arguments for a forward call: its results from the forward op, random upstream gradients.
Stack backward_stack(Inputs& in, const Call& c, bool with_grad_lse) {
  const auto [output, lse] = op::flash_attention.call(c.q, c.k, c.v, c.mask.defined() ? std::optional(c.mask)
                                                                                           : std::nullopt,
                                                      c.causal, c.scale ? std::optional(Scalar(*c.scale)) : std::nullopt);
  const Tensor go = in.uniform(output.sizes().vec());
  const Tensor glse = with_grad_lse ? in.uniform(lse.sizes().vec(), lse.dtype()) : Tensor();
  return {arg(go), opt(glse), arg(c.q), arg(c.k), arg(c.v), arg(output), arg(lse), opt(c.mask), flag(c.causal),
          opt_scale(c.scale)};
}

std::vector<Sample> backward_samples(DType t, SampleSize size) {
  Inputs in("flash_attention_backward", t, size);
  std::vector<Sample> out;
  bool with_grad_lse = false;
  for (auto& [name, c] : valid_calls(in, size)) {
    out.push_back({name, backward_stack(in, c, with_grad_lse)});
    with_grad_lse = !with_grad_lse;  // every other sample also has a gradient for logsumexp
  }
  if (size == SampleSize::Large) return out;
  // Errors: the forward's argument errors, and upstream tensors of the wrong shape.
  const Call good{in.uniform({2, 2, 4, 8}), in.uniform({2, 2, 5, 8}), in.uniform({2, 2, 5, 8})};
  Stack wrong_grad = backward_stack(in, good, false);
  wrong_grad[0] = arg(in.uniform({2, 2, 4, 7}));
  out.push_back({"bad_grad_output", wrong_grad, {}, "grad_output must have shape"});
  Call mismatched = good;
  mismatched.v = in.uniform({2, 2, 6, 8});
  Stack bad_kv = backward_stack(in, good, false);
  bad_kv[4] = arg(mismatched.v);
  out.push_back({"key_value_length", bad_kv, {}, "same length"});
  Stack causal_mask = backward_stack(in, good, false);
  causal_mask[7] = arg(in.bool_mask({4, 5}));
  causal_mask[8] = flag(true);
  out.push_back({"causal_with_mask", causal_mask, {}, "is_causal and attn_mask"});
  return out;
}

// K (Note [Tolerances]): an output sums over the S keys, a score over the E
// features of a query; the backward pass also sums dK and dV over the L queries.
int64_t attention_length(const Sample& s, size_t query_arg) {
  const Shape q = arg_sizes(s, query_arg), k = arg_sizes(s, query_arg + 1);
  if (q.size() < 2 || k.size() < 2) return 1;
  const int64_t l = q[q.size() - 2], e = q.back(), keys = k[k.size() - 2];
  return query_arg == 0 ? keys + e : keys + e + l;
}

}  // namespace

void add_attention_rows(std::vector<OpInfo>& rows) {
  const std::vector<DType> floating = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  rows.push_back({.name = "flash_attention", .dtypes = floating, .out_dtype = same_dtype,
                  .samples = forward_samples, .reference = forward_ref,
                  .accumulation = [](const Sample& s) { return attention_length(s, 0); },
                  .differentiable = true});
  // No formula of its own: under create_graph, flash_attention's formula takes a composite
  // route of differentiable ops instead of calling this op (autograd/formulas_attention.cpp).
  rows.push_back({.name = "flash_attention_backward", .dtypes = floating, .out_dtype = same_dtype,
                  .samples = backward_samples, .reference = backward_ref,
                  .accumulation = [](const Sample& s) { return attention_length(s, 2); },
                  .narrow_intermediates = true});
}

}  // namespace ember::testing
