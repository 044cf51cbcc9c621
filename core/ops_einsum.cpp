// einsum, a composite of views, sum, mul and bmm (so autograd and every
// backend come for free).
//
// Note [How einsum runs]
// 1. Parse: each operand's term gives one label per dim. Letters are labels
//    0..51 (A-Z, then a-z); the dims an ellipsis covers get labels 52, 53, ...
//    aligned from the right across operands, so they broadcast like batch
//    dims. A label's size is the one size of its dims other than 1 (size 1
//    broadcasts). Without "->", the output is the ellipsis dims, then the
//    letters used exactly once, in label order.
// 2. Each operand alone: a label repeated in one term becomes the diagonal
//    of those dims; a label that neither the output nor another operand has
//    is summed away.
// 3. Contract pairs. For a pair, a label of both operands is a batch dim if
//    it is still needed (by the output or a later operand), else it is
//    summed over by the product; the others stay. Both sides are permuted
//    to (batch, own, summed) and (batch, summed, own), reshaped to three
//    dims, and multiplied with one bmm (with mul when nothing is summed).
//    The order of the pairs minimises the multiply-adds: an exact search
//    over subsets of operands (each subset's best split), for up to 12
//    operands; more are contracted left to right.
// 4. Permute the last tensor's dims to the output's order.
#include <algorithm>
#include <bit>
#include <bitset>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {
namespace {

constexpr int kNumLetters = 52;
constexpr int kMaxEllipsisDims = 64;
constexpr int kMaxLabels = kNumLetters + kMaxEllipsisDims;
constexpr int kEllipsis = -1;          // where "..." stands in a parsed term
constexpr size_t kMaxExactSearch = 12;  // operands; the subset search grows as 3^n

using Labels = std::vector<int>;
using LabelSet = std::bitset<kMaxLabels>;

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return kEllipsis;
}

std::string label_name(int label) {
  if (label < 26) return std::string(1, static_cast<char>('A' + label));
  if (label < kNumLetters) return std::string(1, static_cast<char>('a' + label - 26));
  return "... dim " + std::to_string(label - kNumLetters);
}

// A term's letters and at most one ellipsis, spaces skipped.
Labels parse_term(std::string_view term, std::string_view equation) {
  Labels out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!ellipsis && term.substr(i, 3) == "...", "einsum: a '.' in \"", equation,
                  "\" is not part of a term's one ellipsis '...'");
      ellipsis = true;
      out.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int label = letter_label(c);
    EMBER_CHECK(label != kEllipsis, "einsum: invalid subscript '", c, "' in \"", equation,
                "\"; subscripts must be in [a-zA-Z]");
    out.push_back(label);
  }
  return out;
}

struct Operand {
  Tensor t;
  Labels labels;  // one per dim, no ellipsis
};

LabelSet set_of(const Labels& labels) {
  LabelSet s;
  for (int l : labels) s.set(static_cast<size_t>(l));
  return s;
}

// Sums away the dims whose labels are not in `keep`.
void sum_unneeded(Operand& op, const LabelSet& keep) {
  std::vector<int64_t> dims;
  Labels kept;
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (keep.test(static_cast<size_t>(op.labels[d]))) kept.push_back(op.labels[d]);
    else dims.push_back(static_cast<int64_t>(d));
  }
  if (dims.empty()) return;
  op.t = op.t.sum(dims);
  op.labels = std::move(kept);
}

// A label repeated in one term (its dims have one size): the diagonal of its dims, which diagonal() puts last.
void take_diagonals(Operand& op) {
  for (;;) {
    size_t p = 0, q = 0;
    for (size_t i = 0; i < op.labels.size() && q == 0; ++i) {
      for (size_t j = i + 1; j < op.labels.size(); ++j) {
        if (op.labels[i] == op.labels[j]) {
          p = i;
          q = j;
          break;
        }
      }
    }
    if (q == 0) return;
    const int label = op.labels[p];
    op.t = op.t.diagonal(0, static_cast<int64_t>(p), static_cast<int64_t>(q));
    op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(q));
    op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(p));
    op.labels.push_back(label);
  }
}

int64_t size_of(const Operand& op, int label) {
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (op.labels[d] == label) return op.t.size(static_cast<int64_t>(d));
  }
  return 1;
}

// The operand's dims in the order of `groups`, with the shared labels broadcast to `sizes`.
Tensor arrange(const Operand& op, const std::vector<const Labels*>& groups, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> perm;
  DimVector shape;
  for (const Labels* g : groups) {
    for (int l : *g) {
      for (size_t d = 0; d < op.labels.size(); ++d) {
        if (op.labels[d] == l) perm.push_back(static_cast<int64_t>(d));
      }
      shape.push_back(sizes[static_cast<size_t>(l)]);
    }
  }
  return op.t.permute(perm).expand(shape);
}

int64_t product_of(const Labels& labels, const std::vector<int64_t>& sizes) {
  int64_t p = 1;
  for (int l : labels) p *= sizes[static_cast<size_t>(l)];
  return p;
}

// a and b contracted into one operand holding the labels of either that `keep` has.
Operand contract_pair(Operand a, Operand b, const LabelSet& keep) {
  sum_unneeded(a, keep | set_of(b.labels));
  sum_unneeded(b, keep | set_of(a.labels));
  const LabelSet in_b = set_of(b.labels), in_a = set_of(a.labels);
  Labels batch, own_a, summed, own_b;
  std::vector<int64_t> sizes(kMaxLabels, 1);
  for (int l : a.labels) {
    const auto k = static_cast<size_t>(l);
    sizes[k] = size_of(a, l);
    if (!in_b.test(k)) own_a.push_back(l);
    else (keep.test(k) ? batch : summed).push_back(l);
  }
  for (int l : b.labels) {
    const auto k = static_cast<size_t>(l);
    if (!in_a.test(k)) own_b.push_back(l);
    if (sizes[k] == 1) sizes[k] = size_of(b, l);  // b's own labels, and shared ones of size 1 in a (broadcast)
  }
  const int64_t nb = product_of(batch, sizes), m = product_of(own_a, sizes), n = product_of(own_b, sizes),
                k = product_of(summed, sizes);
  const Tensor ta = arrange(a, {&batch, &own_a, &summed}, sizes).reshape({nb, m, k});
  const Tensor tb = arrange(b, {&batch, &summed, &own_b}, sizes).reshape({nb, k, n});
  const Tensor product = summed.empty() ? op::mul.call(ta, tb) : op::bmm.call(ta, tb);
  Operand out;
  DimVector shape;
  for (const Labels* g : {&batch, &own_a, &own_b}) {
    for (int l : *g) {
      out.labels.push_back(l);
      shape.push_back(sizes[static_cast<size_t>(l)]);
    }
  }
  out.t = product.reshape(shape);
  return out;
}

// The order of the pairwise contractions: for each subset S of the operands
// (a bit mask), the split of S into two contracted halves.
class ContractionOrder {
 public:
  ContractionOrder(const std::vector<Operand>& ops, const LabelSet& output, const std::vector<int64_t>& sizes)
      : all_(static_cast<uint32_t>((uint64_t{1} << ops.size()) - 1)), output_(output) {
    for (const Operand& op : ops) sets_.push_back(set_of(op.labels));
    if (ops.size() > kMaxExactSearch) return;
    unions_.resize(size_t{all_} + 1);
    for (uint32_t s = 1; s <= all_; ++s) unions_[s] = unions_[s & (s - 1)] | sets_[std::countr_zero(s)];
    splits_.assign(unions_.size(), 0);
    std::vector<double> cost(unions_.size(), 0.0);
    for (uint32_t s = 1; s <= all_; ++s) {
      if (std::popcount(s) < 2) continue;
      cost[s] = std::numeric_limits<double>::infinity();
      const uint32_t low = s & (~s + 1);  // halves containing the lowest operand: each split once
      for (uint32_t part = (s - 1) & s; part != 0; part = (part - 1) & s) {
        if ((part & low) == 0) continue;
        const double c = cost[part] + cost[s ^ part] + work(intermediate(part) | intermediate(s ^ part), sizes);
        if (c < cost[s]) {
          cost[s] = c;
          splits_[s] = part;
        }
      }
    }
  }

  uint32_t all() const { return all_; }
  // The labels still needed once S is contracted: the output's and those of the other operands.
  LabelSet needed(uint32_t s) const { return output_ | union_of(all_ ^ s); }
  // The halves of S; without the exact search, all but the last operand, then the last.
  std::pair<uint32_t, uint32_t> split(uint32_t s) const {
    const uint32_t part = splits_.empty() ? s & ~(uint32_t{1} << (31 - std::countl_zero(s))) : splits_[s];
    return {part, s ^ part};
  }

 private:
  LabelSet union_of(uint32_t s) const {
    if (!unions_.empty()) return unions_[s];
    LabelSet u;
    for (size_t i = 0; i < sets_.size(); ++i) {
      if ((s >> i) & 1) u |= sets_[i];
    }
    return u;
  }
  LabelSet intermediate(uint32_t s) const { return union_of(s) & needed(s); }
  static double work(const LabelSet& labels, const std::vector<int64_t>& sizes) {
    double w = 1;
    for (size_t l = 0; l < labels.size(); ++l) {
      if (labels.test(l)) w *= static_cast<double>(sizes[l]);
    }
    return w;
  }

  uint32_t all_;  // every operand
  LabelSet output_;
  std::vector<LabelSet> sets_;    // each operand's labels
  std::vector<LabelSet> unions_;  // each subset's labels (with the exact search)
  std::vector<uint32_t> splits_;  // each subset's best split (with the exact search)
};

Operand contract(std::vector<Operand>& ops, const ContractionOrder& order, uint32_t s) {
  if (std::popcount(s) == 1) return std::move(ops[static_cast<size_t>(std::countr_zero(s))]);
  const auto [first, second] = order.split(s);
  return contract_pair(contract(ops, order, first), contract(ops, order, second), order.needed(s));
}

}  // namespace

Tensor einsum(std::string_view equation, const TensorList& operands) {
  EMBER_CHECK(!operands.empty(), "einsum: expected at least one operand");
  EMBER_CHECK(operands.size() <= 31, "einsum: at most 31 operands are supported, got ", operands.size());
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<Labels> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma == std::string_view::npos ? lhs.npos : comma - start), equation));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  EMBER_CHECK(terms.size() == operands.size(), "einsum: the equation \"", equation, "\" has ", terms.size(),
              " operand terms but ", operands.size(), " operands were given");

  ResultTypeState promotion;
  for (size_t k = 0; k < operands.size(); ++k) {
    EMBER_CHECK(operands[k].defined(), "einsum: operand ", k, " is undefined");
    EMBER_CHECK(operands[k].device() == operands[0].device(), "einsum: expected operands on one device, got ",
                operands[0].device(), " and ", operands[k].device(), " (operand ", k, ")");
    promotion.update(operands[k]);
  }
  const DType dtype = promotion.result();

  // The dims each operand's ellipsis covers, and the most of any operand.
  int64_t ellipsis_dims = 0;
  std::vector<int64_t> covered(operands.size(), 0);
  for (size_t k = 0; k < operands.size(); ++k) {
    const int64_t letters = static_cast<int64_t>(std::count_if(terms[k].begin(), terms[k].end(),
                                                               [](int l) { return l != kEllipsis; }));
    const bool has_ellipsis = letters != static_cast<int64_t>(terms[k].size());
    const int64_t nd = operands[k].dim();
    EMBER_CHECK(has_ellipsis ? nd >= letters : nd == letters, "einsum: operand ", k, " has ", nd, " dims (shape ",
                operands[k].sizes(), ") but its term in \"", equation, "\" names ", letters,
                has_ellipsis ? " and an ellipsis" : "");
    covered[k] = nd - letters;
    ellipsis_dims = std::max(ellipsis_dims, covered[k]);
  }
  EMBER_CHECK(ellipsis_dims <= kMaxEllipsisDims, "einsum: an ellipsis may cover at most ", kMaxEllipsisDims,
              " dims, got ", ellipsis_dims);

  std::vector<Operand> ops(operands.size());
  std::vector<int64_t> sizes(kMaxLabels, 1);
  std::vector<int> uses(kMaxLabels, 0);
  LabelSet seen;
  for (size_t k = 0; k < operands.size(); ++k) {
    const Tensor& t = operands[k];
    ops[k].t = t.dtype() == dtype ? t : t.to(dtype);
    for (int l : terms[k]) {
      if (l != kEllipsis) {
        ops[k].labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < covered[k]; ++j) {
        ops[k].labels.push_back(kNumLetters + static_cast<int>(ellipsis_dims - covered[k] + j));
      }
    }
    for (size_t d = 0; d < ops[k].labels.size(); ++d) {
      const auto l = static_cast<size_t>(ops[k].labels[d]);
      const int64_t s = t.size(static_cast<int64_t>(d));
      for (size_t e = 0; e < d; ++e) {
        EMBER_CHECK(ops[k].labels[e] != ops[k].labels[d] || t.size(static_cast<int64_t>(e)) == s, "einsum: subscript ",
                    label_name(static_cast<int>(l)), " is repeated for operand ", k, " but the sizes don't match, ", s,
                    " != ", t.size(static_cast<int64_t>(e)));
      }
      ++uses[l];
      EMBER_CHECK(!seen.test(l) || s == sizes[l] || s == 1 || sizes[l] == 1, "einsum: subscript ",
                  label_name(static_cast<int>(l)), " has size ", s, " for operand ", k,
                  " which does not broadcast with previously seen size ", sizes[l]);
      if (!seen.test(l) || sizes[l] == 1) sizes[l] = s;
      seen.set(l);
    }
  }

  Labels output;
  if (arrow == std::string_view::npos) {
    for (int j = 0; j < ellipsis_dims; ++j) output.push_back(kNumLetters + j);
    for (int l = 0; l < kNumLetters; ++l) {
      if (uses[static_cast<size_t>(l)] == 1) output.push_back(l);
    }
  } else {
    for (int l : parse_term(equation.substr(arrow + 2), equation)) {
      if (l == kEllipsis) {
        for (int j = 0; j < ellipsis_dims; ++j) output.push_back(kNumLetters + j);
        continue;
      }
      EMBER_CHECK(seen.test(static_cast<size_t>(l)), "einsum: output subscript ", label_name(l),
                  " does not appear in the equation for any input operand");
      EMBER_CHECK(std::count(output.begin(), output.end(), l) == 0, "einsum: output subscript ", label_name(l),
                  " appears more than once in the output");
      output.push_back(l);
    }
  }
  const LabelSet output_set = set_of(output);

  for (size_t k = 0; k < ops.size(); ++k) {
    take_diagonals(ops[k]);
    LabelSet needed = output_set;
    for (size_t j = 0; j < ops.size(); ++j) {
      if (j != k) needed |= set_of(ops[j].labels);
    }
    sum_unneeded(ops[k], needed);
  }

  const ContractionOrder order(ops, output_set, sizes);
  const Operand result = contract(ops, order, order.all());
  std::vector<int64_t> perm;
  for (int l : output) {
    for (size_t d = 0; d < result.labels.size(); ++d) {
      if (result.labels[d] == l) perm.push_back(static_cast<int64_t>(d));
    }
  }
  return result.t.permute(perm);
}

}  // namespace ember
