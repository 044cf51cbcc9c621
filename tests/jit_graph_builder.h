// Graphs built by hand in the jit tests (test_jit_passes.cpp,
// test_jit_fusion.cpp): inputs, nodes of registered ops whose output has the
// type of another value, and their arguments.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/dispatcher.h"
#include "jit/graph.h"

namespace ember::testing::jit_graph {

inline const OpEntry* op(const char* name) {
  const OpEntry* e = Dispatcher::instance().find(name);
  EXPECT_NE(e, nullptr) << name;
  return e;
}

inline jit::Value* input(jit::Graph& g, const char* name, IntArrayRef shape, DType dtype = kFloat32,
                         Device device = Device::cpu()) {
  return g.add_input(name, jit::InputRole::User, dtype, device, jit::static_shape(shape));
}

// A node whose single output has the dtype, shape and device of `like`.
inline jit::Value* node(jit::Graph& g, const char* name, std::vector<jit::Arg> args, const jit::Value* like) {
  jit::Node* n = g.add_node(op(name), std::move(args), 1);
  n->outputs[0]->dtype = like->dtype;
  n->outputs[0]->shape = like->shape;
  n->outputs[0]->device = like->device;
  return n->outputs[0];
}

inline jit::Arg v(jit::Value* x) { return jit::Arg::of_value(x); }
inline jit::Arg c(IValue::Payload p) { return jit::Arg::of_constant(IValue(std::move(p))); }
inline jit::Arg scalar(double s) { return c(Scalar(s)); }

inline size_t count_op(const jit::Graph& g, const std::string& name) {
  size_t n = 0;
  for (const auto& node : g.nodes()) n += node->name() == name;
  return n;
}

}  // namespace ember::testing::jit_graph
