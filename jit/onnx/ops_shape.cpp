// Views and data movement as ONNX nodes: view, permute, transpose, slice,
// select, squeeze, unsqueeze, expand, clone, cat, flip, repeat, tril/triu,
// index_select, gather, embedding, constant_pad_nd.
#include <limits>

#include "jit/onnx/op_table.h"

namespace ember::onnx {
namespace {

// view(self, size): a Reshape to the output's shape; a single dim that depends
// on the batch becomes -1 (Note [ONNX export]).
void view(NodeExport& e) {
  const jit::SymShape& shape = e.out_value().shape;
  std::vector<int64_t> values;
  int dynamic = 0;
  bool zero = false;
  for (const jit::SymDim& d : shape) {
    dynamic += d.is_static() ? 0 : 1;
    zero = zero || (d.is_static() && d.offset == 0);
    values.push_back(d.is_static() ? d.offset : -1);
  }
  const std::string target = dynamic <= 1 && !zero ? e.b.ints(values) : e.b.shape(shape);
  ::onnx::NodeProto& n = e.b.add("Reshape", {e.in(0), target}, {e.out()});
  if (zero) attr_int(n, "allowzero", 1);  // a 0 in the shape is a size, not "copy this dim"
}

void permute(NodeExport& e) {
  std::vector<int64_t> perm;
  for (int64_t d : e.ints_arg(1)) perm.push_back(e.axis(d, e.rank(0)));
  attr_ints(e.b.add("Transpose", {e.in(0)}, {e.out()}), "perm", perm);
}

void transpose(NodeExport& e) {
  const int64_t rank = e.rank(0);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  if (rank > 0) std::swap(perm[e.axis(e.int_arg(1), rank)], perm[e.axis(e.int_arg(2), rank)]);
  attr_ints(e.b.add("Transpose", {e.in(0)}, {e.out()}), "perm", perm);
}

// slice(self, dim, start?, end?, step)
void slice(NodeExport& e) {
  const int64_t dim = e.axis(e.int_arg(1), e.rank(0));
  const std::optional<int64_t> start = e.opt_int(2), end = e.opt_int(3);
  const std::string starts = start ? e.b.shape({e.sym_int(2)}) : e.b.ints({0});
  const std::string ends = end ? e.b.shape({e.sym_int(3)}) : e.b.ints({std::numeric_limits<int64_t>::max()});
  e.b.add("Slice", {e.in(0), starts, ends, e.b.ints({dim}), e.b.ints({e.int_arg(4)})}, {e.out()});
}

// select(self, dim, index): Gather of one index keeps the dim; Squeeze drops it.
void select(NodeExport& e) {
  const int64_t dim = e.axis(e.int_arg(1), e.rank(0));
  const std::string one = e.b.op("Gather", {e.in(0), e.b.shape({e.sym_int(2)})}, e.tmp("gather"));
  attr_int(e.b.last(), "axis", dim);
  e.b.add("Squeeze", {one, e.b.ints({dim})}, {e.out()});
}

// squeeze(self) / squeeze_dim(self, dim): the dims of size 1 that the output lost.
void squeeze(NodeExport& e) {
  const jit::SymShape& in = e.value(0).shape;
  std::vector<int64_t> dims;
  if (e.node.name() == "squeeze_dim") {
    if (e.out_rank() < e.rank(0)) dims.push_back(e.axis(e.int_arg(1), e.rank(0)));
  } else {
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] == jit::SymDim{0, 1}) dims.push_back(static_cast<int64_t>(d));
    if (e.rank(0) - static_cast<int64_t>(dims.size()) != e.out_rank())
      e.fail("the dims it removed depend on the batch size");
  }
  if (dims.empty()) {
    e.b.add("Identity", {e.in(0)}, {e.out()});
    return;
  }
  e.b.add("Squeeze", {e.in(0), e.b.ints(dims)}, {e.out()});
}

void unsqueeze(NodeExport& e) {
  e.b.add("Unsqueeze", {e.in(0), e.b.ints({e.axis(e.int_arg(1), e.out_rank())})}, {e.out()});
}

// expand(self, size): ONNX's Expand broadcasts both ways, so a dim the input
// already has may be given as 1; the others are computed when they depend on N.
void expand(NodeExport& e) {
  const jit::SymShape& in = e.value(0).shape;
  const jit::SymShape& out = e.out_value().shape;
  jit::SymShape target = out;
  const size_t lead = out.size() - in.size();
  for (size_t d = lead; d < out.size(); ++d)
    if (!out[d].is_static() && in[d - lead] == out[d]) target[d] = {0, 1};
  e.b.add("Expand", {e.in(0), e.b.shape(target)}, {e.out()});
}

void identity(NodeExport& e) { e.b.add("Identity", {e.in(0)}, {e.out()}); }

void cat(NodeExport& e) {
  std::vector<std::string> inputs;
  for (const jit::Value* v : e.values(0)) inputs.push_back(e.b.cast(e.b.name(v), v->dtype, e.out_dtype()));
  attr_int(e.b.add("Concat", inputs, {e.out()}), "axis", e.axis(e.int_arg(1), e.out_rank()));
}

void flip(NodeExport& e) {
  std::vector<int64_t> dims, starts, ends, steps;
  for (int64_t d : e.ints_arg(1)) {
    dims.push_back(e.axis(d, e.rank(0)));
    starts.push_back(-1);
    ends.push_back(std::numeric_limits<int64_t>::min());
    steps.push_back(-1);
  }
  e.b.add("Slice", {e.in(0), e.b.ints(starts), e.b.ints(ends), e.b.ints(dims), e.b.ints(steps)}, {e.out()});
}

// repeat(self, repeats): Tile, after adding leading dims when repeats has more.
void repeat(NodeExport& e) {
  const std::vector<int64_t> repeats = e.ints_arg(1);
  std::string x = e.in(0);
  const int64_t extra = static_cast<int64_t>(repeats.size()) - e.rank(0);
  if (extra < 0) e.fail("repeats has fewer entries than the input has dims");
  if (extra > 0) {
    std::vector<int64_t> lead;
    for (int64_t d = 0; d < extra; ++d) lead.push_back(d);
    x = e.b.op("Unsqueeze", {x, e.b.ints(lead)}, e.tmp("lead"));
  }
  e.b.add("Tile", {x, e.b.ints(repeats)}, {e.out()});
}

void tril_triu(NodeExport& e) {
  ::onnx::NodeProto& n =
      e.b.add("Trilu", {e.in(0), e.b.scalar(static_cast<double>(e.int_arg(1)), DType::Int64)}, {e.out()});
  attr_int(n, "upper", e.node.name() == "triu" ? 1 : 0);
}

void index_select(NodeExport& e) {
  attr_int(e.b.add("Gather", {e.in(0), e.in(2)}, {e.out()}), "axis", e.axis(e.int_arg(1), e.rank(0)));
}

void gather(NodeExport& e) {
  attr_int(e.b.add("GatherElements", {e.in(0), e.in(2)}, {e.out()}), "axis", e.axis(e.int_arg(1), e.rank(0)));
}

// embedding(weight, indices, padding_idx): padding_idx matters to the gradient only.
void embedding(NodeExport& e) { attr_int(e.b.add("Gather", {e.in(0), e.in(1)}, {e.out()}), "axis", 0); }

// constant_pad_nd(self, pad, value): pad is (begin, end) pairs from the last dim.
void constant_pad(NodeExport& e) {
  const std::vector<int64_t> pad = e.ints_arg(1);
  const int64_t rank = e.rank(0);
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size()) > 2 * rank)
    e.fail("pad has " + std::to_string(pad.size()) + " entries for a rank-" + std::to_string(rank) + " input");
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = static_cast<size_t>(rank) - 1 - i;
    pads[d] = pad[2 * i];
    pads[d + static_cast<size_t>(rank)] = pad[2 * i + 1];
  }
  const DType t = e.out_dtype();
  ::onnx::NodeProto& n = e.b.add("Pad", {e.in(0), e.b.ints(pads), e.b.scalar(e.float_arg(2), t)}, {e.out()});
  attr_str(n, "mode", "constant");
}

}  // namespace

void add_shape_ops(OpTable& table) {
  table["view"] = view;
  table["permute"] = permute;
  table["transpose"] = transpose;
  table["slice"] = slice;
  table["select"] = select;
  table["squeeze"] = squeeze;
  table["squeeze_dim"] = squeeze;
  table["unsqueeze"] = unsqueeze;
  table["expand"] = expand;
  table["clone"] = identity;
  table["cat"] = cat;
  table["flip"] = flip;
  table["repeat"] = repeat;
  table["tril"] = tril_triu;
  table["triu"] = tril_triu;
  table["index_select"] = index_select;
  table["gather"] = gather;
  table["embedding"] = embedding;
  table["constant_pad_nd"] = constant_pad;
}

}  // namespace ember::onnx
