// Generic tests driven by the op-info table (tests/op_info.h): one instance
// per row, named after the op (OpInfo/OpInfoTest.MatchesReference/add_).
//
//   DispatchTableMatchesOpInfo  the dtypes with a CPU kernel are the row's dtypes
//   EveryDispatchedOpHasARow    a new op without a row fails, naming it
//   MatchesReference            every dtype and sample against the reference:
//                               shape, dtype, values; errors for refused dtypes
//                               and bad inputs; in place: self updated, returned,
//                               version bumped; views share storage
//   ThreadCountInvariance       1, 2 and 3 threads give the same bits (large samples, every dtype)
// A summary line at the end says how much was checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <set>

#include "core/dispatcher.h"
#include "ember/parallel.h"
#include "tests/op_info.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

struct Counts {
  std::set<std::string> ops;
  int64_t cases = 0, error_cases = 0, thread_cases = 0;
};
Counts& counts() {
  static Counts c;
  return c;
}

class OpInfoSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    const Counts& c = counts();
    if (c.ops.empty()) return;
    std::cout << "[ op-info  ] " << c.ops.size() << " ops: " << c.cases << " (op, dtype, sample) cases checked ("
              << c.cases - c.error_cases << " against the reference, " << c.error_cases << " expected errors), "
              << c.thread_cases << " large samples bitwise equal to their 1-thread result on 2 and 3 threads\n";
  }
};
[[maybe_unused]] ::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new OpInfoSummary);

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string dtype_list(std::vector<DType> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::string> names;
  for (DType t : v) names.emplace_back(dtype_name(t));
  return "[" + join(names) + "]";
}

// The op's name as its error messages spell it (the public function's name):
// "add_" -> "add", "max_dim" -> "max", "div_mode" -> "div", "linalg_qr" -> "linalg.qr".
std::string error_name(std::string name) {
  while (name.ends_with("_")) name.pop_back();
  if (name.starts_with("linalg_")) name[6] = '.';
  for (const char* suffix : {"_dim", "_mode"}) {
    if (name.ends_with(suffix)) name.resize(name.size() - std::strlen(suffix));
  }
  return name;
}

// The input whose storage `out` shares, if any.
const Tensor* aliased_input(const TensorList& inputs, const Tensor& out) {
  for (const Tensor& in : inputs) {
    if (in.defined() && in.numel() > 0 && in.impl()->storage().get() == out.impl()->storage().get()) return &in;
  }
  return nullptr;
}

TensorList input_tensors(const Sample& s) {
  TensorList out;
  for (const IValue& v : s.args) {
    if (v.is_tensor()) out.push_back(v.tensor());
    else if (v.is_tensor_list()) out.insert(out.end(), v.tensor_list().begin(), v.tensor_list().end());
  }
  return out;
}

// Everything wrong with one sample's run ("" when it behaves as the row says).
std::string problems_of(const OpInfo& row, DType t, const Sample& s) {
  const DType declared = s.out_dtype.value_or(row.out_dtype(t));
  Expected want;
  if (row.rejects_dtype(t)) want = Expected::raises("");
  else if (!s.error.empty()) want = Expected::raises(s.error);
  else if (row.reference) want = row.reference(RefArgs(s, declared));  // before the op can write its inputs

  const Tensor self = !s.args.empty() && s.args[0].is_tensor() ? s.args[0].tensor() : Tensor();
  const uint32_t version = self.defined() ? self._version() : 0;
  const TensorList inputs = input_tensors(s);
  TensorList outs;
  try {
    outs = run_sample(row, s);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (!want.fails) return "unexpected ember::Error: " + msg;
    ++counts().error_cases;
    if (msg.find(want.error_part) == std::string::npos) return "message '" + msg + "' lacks '" + want.error_part + "'";
    if (msg.find(error_name(row.name)) == std::string::npos) return "message '" + msg + "' does not name the op";
    return "";
  } catch (const std::exception& e) {
    return std::string("unexpected exception (not an ember::Error): ") + e.what();
  }
  if (want.fails) {
    if (row.rejects_dtype(t)) return "expected an ember::Error: the row refuses this dtype";
    return "expected an ember::Error" + (want.error_part.empty() ? "" : " containing '" + want.error_part + "'");
  }
  std::string p;
  auto problem = [&](const std::string& what) { p += (p.empty() ? "" : "; ") + what; };
  if (row.kind == OpKind::InPlace || row.kind == OpKind::Random) {
    if (outs.empty() || !outs[0].is_same(self)) problem("an in-place op must return self");
    if (self._version() <= version) problem("an in-place op must bump the version");
  }
  if (row.kind == OpKind::Random || row.kind == OpKind::Sampled || row.kind == OpKind::Factorization) {
    const ::testing::AssertionResult ok = row.check(s, outs);
    if (!ok) problem(ok.message());
    return p;
  }
  if (outs.size() != want.outputs.size()) {
    problem(std::to_string(outs.size()) + " outputs, expected " + std::to_string(want.outputs.size()));
    return p;
  }
  if (want.outputs[0].dtype != declared) problem("the reference disagrees with the row's output dtype");
  if (row.kind == OpKind::View && outs[0].impl()->storage().get() != self.impl()->storage().get())
    problem("a view must share self's storage");
  if (row.kind == OpKind::Functional) {
    for (const Tensor& out : outs) {
      if (out.numel() > 0 && aliased_input(inputs, out) != nullptr) problem("an output aliases an input");
    }
  }
  const Accuracy accuracy = accuracy_of(row, s);
  for (size_t k = 0; k < outs.size(); ++k) {
    const ::testing::AssertionResult m = matches(to_host(outs[k]), want.outputs[k], accuracy);
    if (!m) problem("output " + std::to_string(k) + ": " + m.message());
  }
  if (row.kind == OpKind::InPlace) {
    const ::testing::AssertionResult m = matches(to_host(self), want.outputs[0], accuracy);
    if (!m) problem("self after the op: " + std::string(m.message()));
  }
  return p;
}

void check_sample(const OpInfo& row, DType t, const Sample& s) {
  SCOPED_TRACE(row.name + "(" + std::string(dtype_name(t)) + ") sample '" + s.name + "'");
  ++counts().cases;
  const std::string problems = problems_of(row, t, s);
  if (const Divergence* d = row.divergence(s.name, t)) {
    EXPECT_FALSE(problems.empty()) << "the known divergence '" << d->what
                                   << "' is gone: delete it from the row in tests/op_info_<family>.cpp";
  } else {
    EXPECT_TRUE(problems.empty()) << problems;
  }
}

class OpInfoTest : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpInfoTest, DispatchTableMatchesOpInfo) {
  const OpInfo& row = *GetParam();
  const OpEntry* op = Dispatcher::instance().find(row.name);
  ASSERT_NE(op, nullptr) << "the row names no dispatched op";
  std::vector<DType> registered;
  for (int k = 0; k < kNumDTypes; ++k) {
    const DType t = static_cast<DType>(k);
    if (op->backend_kernel(DispatchKey::CPU, t).present()) registered.push_back(t);
  }
  EXPECT_EQ(dtype_list(registered), dtype_list(row.dtypes)) << "CPU kernels vs the op-info row's dtypes";
  for (DType t : row.rejects) {
    EXPECT_NE(std::find(row.dtypes.begin(), row.dtypes.end(), t), row.dtypes.end())
        << "refuses " << t << ", which has no kernel anyway";
  }
}

// The fused optimiser updates (_fused_adam_, ...) update lists of tensors in
// place, which the row format cannot describe; tests/test_optim_fused.cpp and
// tests/golden_optim.cpp cover them. _fused_elementwise runs a program of
// jit's fusion pass; tests/test_jit_fusion.cpp covers it.
bool needs_row(const std::string& op) { return !op.starts_with("_fused_"); }

TEST(OpInfo, EveryDispatchedOpHasARow) {
  std::vector<std::string> missing;
  for (const OpEntry* op : Dispatcher::instance().ops()) {
    if (needs_row(op->name()) && find_op_info(op->name()) == nullptr) missing.push_back(op->name());
  }
  EXPECT_TRUE(missing.empty()) << "dispatched ops without an op-info row in tests/op_info_<family>.cpp: " << join(missing);
}

TEST_P(OpInfoTest, MatchesReference) {
  const OpInfo& row = *GetParam();
  counts().ops.insert(row.name);
  for (DType t : row.dtypes) {
    for (const Sample& s : row.make_samples(t, SampleSize::Small)) check_sample(row, t, s);
  }
}

// Every op says what it refuses, as PyTorch's error_inputs do: at least one
// sample (beyond a refused dtype) must raise an ember::Error.
TEST_P(OpInfoTest, HasErrorInputs) {
  const OpInfo& row = *GetParam();
  const auto dtype = std::find_if(row.dtypes.begin(), row.dtypes.end(), [&](DType t) { return !row.rejects_dtype(t); });
  ASSERT_NE(dtype, row.dtypes.end()) << row.name << " takes no dtype";
  int64_t errors = 0;
  for (const Sample& s : row.make_samples(*dtype, SampleSize::Small)) {
    if (!s.error.empty()) ++errors;
    else if (row.reference && row.reference(RefArgs(s, s.out_dtype.value_or(row.out_dtype(*dtype)))).fails) ++errors;
  }
  EXPECT_GT(errors, 0) << row.name << " has no error input: add samples with `error` set (wrong ranks, dims out of "
                       << "range, shapes that do not broadcast, bad sizes, indices out of range, ...) to its row";
}

TEST_P(OpInfoTest, ThreadCountInvariance) {
  const OpInfo& row = *GetParam();
  ThreadCount restore_threads;
  bool any = false;
  for (DType t : row.dtypes) {  // every dtype: float64/16 and bfloat16 kernels are separate code too
    if (row.rejects_dtype(t)) continue;
    any = true;
    // A fresh, identical set of samples per run: in-place ops write their inputs.
    const std::vector<Sample> reference_samples = row.make_samples(t, SampleSize::Large);
    ASSERT_FALSE(reference_samples.empty());
    set_num_threads(1);
    std::vector<TensorList> one;
    for (const Sample& s : reference_samples) one.push_back(run_sample(row, s));
    for (int threads : {2, 3}) {
      const std::vector<Sample> samples = row.make_samples(t, SampleSize::Large);
      set_num_threads(threads);
      for (size_t k = 0; k < samples.size(); ++k) {
        SCOPED_TRACE(row.name + "(" + std::string(dtype_name(t)) + ") sample '" + samples[k].name + "', " +
                     std::to_string(threads) + " threads vs 1");
        const TensorList b = run_sample(row, samples[k]);
        ASSERT_EQ(one[k].size(), b.size());
        for (size_t j = 0; j < b.size(); ++j) EXPECT_TRUE(bitwise_equal(one[k][j], b[j])) << "output " << j;
        ++counts().thread_cases;
      }
    }
  }
  EXPECT_TRUE(any) << row.name << " takes no dtype";
}

std::vector<const OpInfo*> rows() {
  std::vector<const OpInfo*> out;
  for (const OpInfo& r : op_infos()) out.push_back(&r);
  return out;
}

INSTANTIATE_TEST_SUITE_P(OpInfo, OpInfoTest, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<const OpInfo*>& info) { return info.param->name; });

}  // namespace
}  // namespace ember::testing
