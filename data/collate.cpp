// default_collate (<ember/data/example.h>): one stack for the data, one for the targets.
#include "ember/error.h"
#include "ember/data/example.h"
#include "ember/ops.h"

namespace ember::data {
namespace {

// The `field` tensors of all examples, checked to share a shape and a dtype.
TensorList gather_field(const std::vector<Example>& examples, Tensor Example::*field, const char* name) {
  TensorList parts;
  parts.reserve(examples.size());
  const Tensor& first = examples[0].*field;
  for (size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = examples[i].*field;
    EMBER_CHECK(t.defined(), "default_collate: example ", i, " has no ", name, " but example 0 has one");
    EMBER_CHECK(t.sizes() == first.sizes() && t.dtype() == first.dtype(), "default_collate: example ", i, "'s ",
                name, " is ", t.dtype(), " ", t.sizes(), " but example 0's is ", first.dtype(), " ", first.sizes(),
                "; a batch needs one shape and dtype (write a custom collate for ragged data)");
    parts.push_back(t);
  }
  return parts;
}

}  // namespace

Example default_collate(std::vector<Example>&& examples) {
  EMBER_CHECK(!examples.empty(), "default_collate: expected at least one example");
  Example batch;
  EMBER_CHECK(examples[0].data.defined(), "default_collate: example 0 has no data");
  batch.data = stack(gather_field(examples, &Example::data, "data"));
  if (examples[0].target.defined()) {
    batch.target = stack(gather_field(examples, &Example::target, "target"));
  } else {
    for (size_t i = 1; i < examples.size(); ++i)
      EMBER_CHECK(!examples[i].target.defined(), "default_collate: example ", i,
                  " has a target but example 0 has none");
  }
  return batch;
}

}  // namespace ember::data
