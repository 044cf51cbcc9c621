// Error inputs shared by the op-info families, as PyTorch's OpInfo
// error_inputs: each helper turns a family's valid sample (or a dtype) into
// samples whose `error` is the part of the message the op must raise, so a
// family adds its error inputs in a line (Note [The op-info table] in
// tests/op_info.h; the HasErrorInputs test fails for a row without any).
#pragma once

#include <string>
#include <vector>

#include "tests/op_info_inputs.h"

namespace ember::testing {

// `valid` with tensor argument i undefined (a default-constructed Tensor):
// every op must name the argument instead of crashing.
inline Sample undefined_input(const Sample& valid, size_t i) {
  Sample s = valid;
  s.name = "undefined_arg" + std::to_string(i);
  s.args.at(i) = arg(Tensor());
  s.out_dtype.reset();
  s.error = "undefined tensor";
  return s;
}

// `valid` (an in-place op's sample) with self replaced by one row expanded
// to self's shape: several elements share an address, and the op must refuse
// to write them (Note [Memory overlap] in core/memory_overlap.h). Self must
// be at least 1-d with a first dim above 1.
inline Sample expanded_self(const Sample& valid, Domain d = Domain::Any) {
  Sample s = valid;
  const Tensor& self = valid.args.at(0).tensor();
  Shape row = self.sizes().vec();
  row[0] = 1;
  s.name = "expanded_self";
  s.args[0] = arg(make_input(row, self.dtype(), d).expand(self.sizes()));
  s.error = "unsupported operation";
  return s;
}

// Self and argument i as two overlapping windows of one buffer (x[1:] and
// x[:-1]): an in-place op would read values it already wrote.
inline Sample partially_overlapping(const Sample& valid, size_t i, Domain d = Domain::Any) {
  Sample s = valid;
  const Tensor& self = valid.args.at(0).tensor();
  Shape base = self.sizes().vec();
  base[0] += 1;
  const Tensor buffer = make_input(base, self.dtype(), d);
  s.name = "partial_overlap";
  s.args[0] = arg(buffer.slice(0, 1));
  s.args.at(i) = arg(buffer.slice(0, 0, base[0] - 1));
  s.error = "unsupported operation";
  return s;
}

// The error inputs of an op on two broadcast operands (self, other, then
// `extra`): shapes that cannot broadcast, an undefined operand; in place also
// a self the result would outgrow, an expanded self, and self overlapping
// other.
inline std::vector<Sample> broadcast_error_samples(DType t, Domain da, Domain db, bool in_place,
                                                   const Stack& extra = {}) {
  const Sample valid{"valid", concat({arg(make_input({3, 5}, t, da)), arg(make_input({3, 5}, t, db))}, extra)};
  std::vector<Sample> out = {
      {"no_broadcast", concat({arg(make_input({3, 5}, t, da)), arg(make_input({4, 5}, t, db))}, extra), {},
       "cannot be broadcast"},
      {"no_broadcast_rank", concat({arg(make_input({2, 3}, t, da)), arg(make_input({2, 3, 2}, t, db))}, extra), {},
       "cannot be broadcast"},
      undefined_input(valid, 1)};
  if (in_place) {
    out.push_back({"self_outgrown", concat({arg(make_input({1, 5}, t, da)), arg(make_input({3, 5}, t, db))}, extra),
                   {}, "[1, 5]"});
    out.push_back(expanded_self(valid, da));
    out.push_back(partially_overlapping(valid, 1, da));
  } else {
    out.push_back(undefined_input(valid, 0));
  }
  return out;
}

// The error inputs of an op on one tensor (self, then `extra`): an undefined
// self; in place also an expanded self.
inline std::vector<Sample> unary_error_samples(DType t, Domain d, bool in_place, const Stack& extra = {}) {
  const Sample valid{"valid", concat({arg(make_input({3, 5}, t, d))}, extra)};
  std::vector<Sample> out = {undefined_input(valid, 0)};
  if (in_place) out.push_back(expanded_self(valid, d));
  return out;
}

}  // namespace ember::testing
