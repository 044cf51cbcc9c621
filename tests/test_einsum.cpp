// einsum (core/ops_einsum.cpp) against a brute-force host reference: every
// assignment of the labels, the product of the operands' elements summed
// into the output. Covers matrix products, diagonals and traces, implicit
// outputs, ellipses with broadcasting, size-1 broadcasting, chains of three
// and four operands (any contraction order must give these values), dtype
// promotion and integers, and each malformed equation's error.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::all_close;
using ::ember::testing::values;

Tensor random(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  Generator g(seed);
  return randn(shape, dtype, &g);
}

// The einsum of letter-only terms ("ij", "jk" -> "ik"), by visiting every
// assignment of the labels.
Tensor reference(const std::vector<std::string>& terms, const std::string& out, const TensorList& ops) {
  std::map<char, int64_t> size;
  for (size_t k = 0; k < terms.size(); ++k) {
    for (size_t d = 0; d < terms[k].size(); ++d) {
      const int64_t s = ops[k].size(static_cast<int64_t>(d));
      if (!size.count(terms[k][d]) || size[terms[k][d]] == 1) size[terms[k][d]] = s;
    }
  }
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ops) vals.push_back(values(t));
  std::vector<char> labels;
  for (const auto& [c, s] : size) labels.push_back(c);
  std::vector<int64_t> out_shape;
  for (char c : out) out_shape.push_back(size[c]);
  Tensor result = zeros(out_shape, kFloat64);
  double* r = result.data_ptr<double>();
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  for (;;) {
    double p = 1;
    for (size_t k = 0; k < terms.size(); ++k) {
      int64_t flat = 0;
      for (size_t d = 0; d < terms[k].size(); ++d) {
        const int64_t s = ops[k].size(static_cast<int64_t>(d));
        flat = flat * s + (s == 1 ? 0 : at[terms[k][d]]);
      }
      p *= vals[k][static_cast<size_t>(flat)];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    r[o] += p;
    size_t i = labels.size();
    while (i > 0 && ++at[labels[i - 1]] == size[labels[i - 1]]) at[labels[--i]] = 0;
    if (i == 0) break;
  }
  return result;
}

void expect_matches(const std::string& equation, const std::vector<std::string>& terms, const std::string& out,
                    const TensorList& ops) {
  SCOPED_TRACE(equation);
  const Tensor got = einsum(equation, ops);
  EXPECT_EQ(got.dtype(), kFloat64);
  EXPECT_TRUE(all_close(got, reference(terms, out, ops), 1e-12, 1e-12));
}

TEST(Einsum, MatrixProducts) {
  const Tensor a = random({2, 3, 4}, 1), b = random({2, 4, 5}, 2);
  expect_matches("bij,bjk->bik", {"bij", "bjk"}, "bik", {a, b});
  expect_matches("bij,bkj->bik", {"bij", "bkj"}, "bik", {a, random({2, 5, 4}, 3)});
  expect_matches("ij,jk", {"ij", "jk"}, "ik", {random({3, 4}, 4), random({4, 2}, 5)});
  expect_matches("i,i", {"i", "i"}, "", {random({6}, 6), random({6}, 7)});
  expect_matches("i,j->ij", {"i", "j"}, "ij", {random({3}, 8), random({4}, 9)});
  expect_matches("ij,ij->ij", {"ij", "ij"}, "ij", {random({2, 3}, 10), random({2, 3}, 11)});
}

TEST(Einsum, DiagonalsTracesAndSums) {
  const Tensor m = random({4, 4}, 12);
  expect_matches("ii", {"ii"}, "", {m});
  expect_matches("ii->i", {"ii"}, "i", {m});
  expect_matches("iij->ji", {"iij"}, "ji", {random({3, 3, 2}, 13)});
  expect_matches("ijk->", {"ijk"}, "", {random({2, 3, 4}, 14)});
  expect_matches("ijk->ki", {"ijk"}, "ki", {random({2, 3, 4}, 15)});
  expect_matches("ij,jj->i", {"ij", "jj"}, "i", {random({2, 3}, 16), random({3, 3}, 17)});
}

TEST(Einsum, ImplicitOutputIsTheLabelsUsedOnceInOrderUppercaseFirst) {
  const Tensor a = random({3, 4}, 18);
  EXPECT_EQ(einsum("ba", {a}).sizes(), IntArrayRef({4, 3}));
  expect_matches("ba", {"ba"}, "ab", {a});
  expect_matches("aB,Bc->...", {"aB", "Bc"}, "", {random({2, 3}, 19), random({3, 4}, 20)});
  const Tensor upper = einsum("cA,Ab", {random({2, 3}, 21), random({3, 4}, 22)});
  EXPECT_EQ(upper.sizes(), IntArrayRef({4, 2}));  // b before c
}

TEST(Einsum, EllipsisBroadcastsLikeBatchDims) {
  const Tensor a = random({5, 2, 3}, 23), b = random({3, 4}, 24);
  const Tensor got = einsum("...ij,...jk->...ik", {a, b});
  EXPECT_TRUE(all_close(got, reference({"zij", "jk"}, "zik", {a, b}), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(einsum("...ij,...jk", {a, b}), got, 0, 0));  // implicit: ellipsis first
  const Tensor c = random({2, 3, 4, 5}, 25), v = random({5}, 26);
  EXPECT_TRUE(all_close(einsum("i...j,j->...", {c, v}), reference({"iyzj", "j"}, "yz", {c, v}), 1e-12, 1e-12));
  // An ellipsis missing from an explicit output is summed over.
  EXPECT_TRUE(all_close(einsum("...ij->ij", {a}), a.sum({0}), 1e-12, 1e-12));
  // Size-1 dims broadcast, inside the ellipsis and for letters.
  const Tensor x = random({2, 1}, 27), y = random({3}, 28);
  EXPECT_TRUE(all_close(einsum("...,...->...", {x, y}), x * y, 0, 0));
  const Tensor p = random({3, 1}, 29), q = random({3, 4}, 30);
  expect_matches("ij,ij->i", {"ij", "ij"}, "i", {p, q});
}

TEST(Einsum, ChainsOfOperandsGiveTheSameValuesInAnyOrder) {
  const Tensor a = random({2, 30}, 31), b = random({30, 40}, 32), c = random({40, 3}, 33);
  expect_matches("ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {a, b, c});
  expect_matches("ab,bc,cd,de->ae", {"ab", "bc", "cd", "de"}, "ae",
                 {random({8, 2}, 34), random({2, 9}, 35), random({9, 3}, 36), random({3, 7}, 37)});
  expect_matches("bn,anm,bm->ba", {"bn", "anm", "bm"}, "ba", {random({2, 3}, 38), random({4, 3, 5}, 39), random({2, 5}, 40)});
  expect_matches("i,j,k->", {"i", "j", "k"}, "", {random({2}, 41), random({3}, 42), random({4}, 43)});
  // A label shared by three operands stays until the last product.
  expect_matches("ij,ik,il->jkl", {"ij", "ik", "il"}, "jkl", {random({3, 2}, 44), random({3, 2}, 45), random({3, 2}, 46)});
}

TEST(Einsum, PromotesDtypesAndKeepsIntegers) {
  const Tensor a = random({2, 3}, 47, kFloat32), b = random({3, 2}, 48);
  const Tensor got = einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(got.dtype(), kFloat64);
  EXPECT_TRUE(all_close(got, a.to(kFloat64).mm(b), 1e-12, 1e-12));
  const Tensor i = arange(6, kInt64).reshape({2, 3}), j = arange(6, kInt64).reshape({3, 2});
  const Tensor ij = einsum("ij,jk->ik", {i, j});
  EXPECT_EQ(ij.dtype(), kInt64);
  EXPECT_EQ(values(ij), std::vector<double>({10, 13, 28, 40}));
  const Tensor bools = ones({2, 2}, kBool);
  EXPECT_EQ(einsum("ij,ij->ij", {bools, bools}).dtype(), kBool);
}

TEST(Einsum, EmptyAndZeroDimOperands) {
  EXPECT_EQ(einsum("i->", {zeros({0})}).item<double>(), 0.0);
  EXPECT_EQ(einsum("ij,jk->ik", {zeros({2, 0}), zeros({0, 3})}).sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(einsum(",->", {full({}, 2.0), full({}, 3.5)}).item<double>(), 7.0);
  EXPECT_EQ(einsum("", {full({}, 2.0)}).item<double>(), 2.0);
}

TEST(Einsum, ErrorsNameTheEquationsProblem) {
  const Tensor m = zeros({2, 3});
  EXPECT_EMBER_ERROR(einsum("ij,jk", {m}), "einsum", "2 operand terms", "1 operands");
  EXPECT_EMBER_ERROR(einsum("ij", {m, m}), "einsum", "1 operand terms");
  EXPECT_EMBER_ERROR(einsum("i1", {m}), "einsum", "invalid subscript '1'");
  EXPECT_EMBER_ERROR(einsum("i.j", {m}), "einsum", "ellipsis");
  EXPECT_EMBER_ERROR(einsum("......", {m}), "einsum", "ellipsis");
  EXPECT_EMBER_ERROR(einsum("ijk", {m}), "einsum", "operand 0 has 2 dims", "names 3");
  EXPECT_EMBER_ERROR(einsum("ij->k", {m}), "einsum", "output subscript k does not appear");
  EXPECT_EMBER_ERROR(einsum("ij->ii", {zeros({2, 2})}), "einsum", "output subscript i appears more than once");
  EXPECT_EMBER_ERROR(einsum("i,i", {zeros({3}), zeros({4})}), "einsum", "subscript i has size 4", "size 3");
  EXPECT_EMBER_ERROR(einsum("ii->i", {m}), "einsum", "subscript i is repeated for operand 0", "3 != 2");
  EXPECT_EMBER_ERROR(einsum("i", {}), "einsum", "at least one operand");
}

}  // namespace
}  // namespace ember
