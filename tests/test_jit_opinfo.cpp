// Op-info samples through the graph path: every sample of the op-info table
// (tests/op_info.h) of an op the tracer takes is traced as a one-op graph,
// optimised with the default passes, saved to an archive, loaded and run on
// the same inputs; its outputs must equal eager's bit for bit (within the
// row's op-info tolerance where the graph holds a fused group). The samples
// of one op share one graph and one archive.
//
// Samples the graph path cannot take are skipped by a rule, and counted:
//   random            the op draws random numbers: a graph run draws fresh
//                     ones from the default generator (docs/graphs.md)
//   bad input         eager raises an ember::Error (the row's bad inputs and
//                     refused dtypes): there is nothing to trace
//   no tensor input   the call reads no tensor, so the tracer records no node
//                     (its result is a constant of the graph)
//   non-tensor result the op returns a number (the graph's outputs are tensors)
// Ops with a fused form (add, exp, gelu, ...) are also traced followed by a
// neg of each floating-point result (sum and mean: preceded by a neg of their
// input), which the fusion pass fuses with the op: those graphs run the fused
// kernel on the op's samples (broadcast, strided, special values) and are
// compared with the same program run eagerly within the row's tolerance.
// Data-dependent output shapes (nonzero, unique, masked_select) are traced:
// the graph runs on the sample's own inputs, whose result has the traced
// shape. The test prints one line per op (traced / skipped and why) and a
// total, and asserts that at least 90% of the ops with samples are traced.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include <unistd.h>

#include "core/dispatcher.h"
#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "ember/jit.h"
#include "jit/graph.h"
#include "jit/op_traits.h"
#include "tests/op_info.h"

namespace ember::testing {
namespace {

struct TempFile {
  TempFile()
      : path((std::filesystem::temp_directory_path() / ("ember_jit_opinfo_" + std::to_string(::getpid()) + ".emb"))
                 .string()) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

// A sample's tensor arguments that a program would compute (tensor lists
// flattened); wrapped numbers (`x * 2`'s 2) stay in the call, as in a traced program.
bool is_input(const Tensor& t) { return t.defined() && !t.impl()->is_wrapped_number(); }

std::vector<Tensor> tensor_inputs(const Sample& s) {
  std::vector<Tensor> out;
  for (const IValue& v : s.args) {
    if (v.is_tensor() && is_input(v.tensor())) out.push_back(v.tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list())
        if (is_input(t)) out.push_back(t);
  }
  return out;
}

// The sample's stack with its input tensors replaced, in order, by inputs[k, ...).
Stack with_inputs(const Sample& s, const std::vector<Tensor>& inputs, size_t k) {
  Stack stack = s.args;
  for (IValue& v : stack) {
    if (v.is_tensor() && is_input(v.tensor())) v = IValue::Payload(inputs.at(k++));
    if (v.is_tensor_list()) {
      TensorList list = v.tensor_list();
      for (Tensor& t : list)
        if (is_input(t)) t = inputs.at(k++);
      v = IValue::Payload(std::move(list));
    }
  }
  return stack;
}

// The defined tensors a call left on the stack (list results flattened).
std::vector<Tensor> results(const Stack& stack) {
  std::vector<Tensor> out;
  for (const IValue& v : stack) {
    if (v.is_tensor() && v.tensor().defined()) out.push_back(v.tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list())
        if (t.defined()) out.push_back(t);
  }
  return out;
}

std::vector<Tensor> clones(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.clone());
  return out;
}

bool returns_non_tensor(const OpEntry& op) {
  for (const std::string& r : op.schema().returns)
    if (r.rfind("Tensor", 0) != 0) return true;
  return false;
}

// Why the graph path skips a sample before running it, or "".
std::string skip_rule(const OpInfo& row, const OpEntry& op, const Sample& s, DType dtype) {
  if (row.kind == OpKind::Random || row.kind == OpKind::Sampled || jit::is_random(op)) return "random";
  if (!s.error.empty() || row.rejects_dtype(dtype)) return "bad input";
  if (returns_non_tensor(op)) return "non-tensor result";
  if (tensor_inputs(s).empty()) return "no tensor input";
  return "";
}

size_t fused_nodes(const jit::Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes()) n += node->op == &op::_fused_elementwise.entry();
  return n;
}

// One sample the graph path takes.
struct Case {
  const Sample* sample;
  DType dtype;
  std::string where() const { return std::string(dtype_name(dtype)) + " sample '" + sample->name + "'"; }
};

// A second op around the sample's, for the fusion pass: none; a neg of each
// floating-point result (after an elementwise op); a neg of the first input
// when it is floating-point (before a sum or mean, which ends a group).
enum class Chain : uint8_t { None, NegAfter, NegBefore };

Tensor neg_if_floating(const Tensor& t) { return is_floating_point(t.dtype()) ? t.neg() : t; }

// Traces one program that calls the op on every case's inputs, optimises it,
// saves it, loads it and runs it on the same inputs; compares each case's
// outputs with the program run eagerly. (One archive per op, not per sample:
// each save syncs the file to disk.) Returns the number of fused nodes.
size_t check_cases(const OpInfo& row, const OpEntry& op, const std::vector<const Case*>& cases,
                   const std::string& file, Chain chain) {
  std::vector<Tensor> inputs;
  std::vector<size_t> first_input;
  for (const Case* c : cases) {
    first_input.push_back(inputs.size());
    for (const Tensor& t : tensor_inputs(*c->sample)) inputs.push_back(t);
  }
  std::vector<size_t> num_outputs(cases.size(), 0);
  auto program = [&](const std::vector<Tensor>& x) {
    std::vector<Tensor> out;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::vector<Tensor> in = x;
      if (chain == Chain::NegBefore) in[first_input[i]] = neg_if_floating(in[first_input[i]]);
      Stack stack = with_inputs(*cases[i]->sample, in, first_input[i]);
      Dispatcher::call_boxed(op, Dispatcher::boxed_key_set(stack), stack);
      const std::vector<Tensor> r = results(stack);
      num_outputs[i] = r.size();
      for (const Tensor& t : r) out.push_back(chain == Chain::NegAfter ? neg_if_floating(t) : t);
    }
    return out;
  };
  const std::vector<Tensor> expected = program(clones(inputs));  // eager (in-place ops write their inputs)
  jit::TraceOptions options;
  options.dynamic_batch = false;  // samples are 0-d, empty, broadcast: no batch dim to speak of
  jit::GraphModule traced = jit::trace_function(program, clones(inputs), options);
  jit::optimize(traced);
  jit::save(traced, file);
  const jit::GraphModule loaded = jit::load(file);
  EXPECT_EQ(loaded.graph_text(), traced.graph_text()) << row.name;
  const std::vector<Tensor> actual = loaded.forward(clones(inputs));
  const size_t fused = fused_nodes(loaded.graph());
  if (actual.size() != expected.size()) {
    ADD_FAILURE() << row.name << ": the graph returns " << actual.size() << " outputs, eager " << expected.size();
    return fused;
  }
  size_t k = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = *cases[i];
    for (size_t j = 0; j < num_outputs[i]; ++j, ++k) {
      if (fused > 0)
        EXPECT_TRUE(matches(to_host(actual[k]), to_host(expected[k]), accuracy_of(row, *c.sample)))
            << row.name << " " << c.where();
      else
        EXPECT_TRUE(bitwise_equal(actual[k], expected[k]))
            << row.name << " " << c.where() << ": output " << j << " differs from eager";
    }
  }
  return fused;
}

struct OpCount {
  int64_t traced = 0;
  std::map<std::string, int64_t> skipped;  // rule -> samples
};

TEST(JitOpInfo, SamplesRoundTripThroughArchives) {
  TempFile file;
  int64_t ops_with_samples = 0, ops_traced = 0, traced = 0, skipped = 0, fused_ops = 0;
  for (const OpInfo& row : op_infos()) {
    const OpEntry* op = Dispatcher::instance().find(row.name);
    ASSERT_NE(op, nullptr) << row.name;
    OpCount count;
    std::vector<std::vector<Sample>> samples;
    std::vector<Case> cases;
    for (DType dtype : row.dtypes) {
      samples.push_back(row.make_samples(dtype, SampleSize::Small));
      for (const Sample& s : samples.back()) {
        std::string rule = skip_rule(row, *op, s, dtype);
        if (rule.empty()) {
          try {  // eager, on copies (in-place ops write their inputs)
            Stack stack = with_inputs(s, clones(tensor_inputs(s)), 0);
            Dispatcher::call_boxed(*op, Dispatcher::boxed_key_set(stack), stack);
            cases.push_back({&s, dtype});
          } catch (const Error&) {
            rule = "bad input";
          }
        }
        if (!rule.empty()) ++count.skipped[rule];
      }
    }
    count.traced = static_cast<int64_t>(cases.size());
    std::vector<const Case*> all;
    for (const Case& c : cases) all.push_back(&c);
    fused::FusedOp fusible;
    std::vector<Chain> chains{Chain::None};
    if (fused::find_op(row.name, fusible))
      chains.push_back(fused::FusedProgram::is_reduction(fusible) ? Chain::NegBefore : Chain::NegAfter);
    for (Chain chain : chains) {
      if (all.empty()) break;
      try {
        const size_t f = check_cases(row, *op, all, file.path, chain);
        EXPECT_TRUE(chain == Chain::None || f > 0) << row.name << ": no group fused with the neg around it";
        fused_ops += f > 0;
      } catch (const Error&) {  // find the samples that fail, one by one
        for (const Case* c : all) {
          try {
            check_cases(row, *op, {c}, file.path, chain);
          } catch (const Error& e) {
            ADD_FAILURE() << row.name << (chain == Chain::None ? " " : " (with a neg) ") << c->where() << ": "
                          << e.what();
          }
        }
      }
    }
    std::string line = "[ jit op-info ] " + row.name + ": traced " + std::to_string(count.traced);
    for (const auto& [rule, n] : count.skipped) {
      line += ", skipped " + std::to_string(n) + " (" + rule + ")";
      skipped += n;
    }
    std::cout << line << "\n";
    traced += count.traced;
    int64_t runnable = count.traced;
    for (const auto& [rule, n] : count.skipped)
      if (rule != "bad input") runnable += n;
    ops_with_samples += runnable > 0;
    ops_traced += count.traced > 0;
  }
  std::cout << "[ jit op-info ] " << ops_traced << " of " << ops_with_samples << " ops with samples traced; "
            << traced << " samples traced, " << skipped << " skipped; " << fused_ops
            << " ops also ran fused with a neg around them\n";
  EXPECT_GE(ops_traced * 10, ops_with_samples * 9)
      << "fewer than 90% of the ops with samples go through the graph path";
}

}  // namespace
}  // namespace ember::testing
