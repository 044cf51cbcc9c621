// Embedding (include/ember/nn/modules/embedding.h): the table, its init and
// checks that name the layer; the lookup is F::embedding.
#include <ostream>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/init.h"
#include "ember/nn/modules/embedding.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {

EmbeddingOptions validated(EmbeddingOptions options) {
  const int64_t n = options.num_embeddings(), dim = options.embedding_dim();
  EMBER_CHECK(n > 0 && dim > 0, "Embedding: num_embeddings and embedding_dim must be positive, got ", n, " and ", dim);
  if (const std::optional<int64_t> p = options.padding_idx()) {
    EMBER_CHECK(*p >= -n && *p < n, "Embedding: padding_idx must be in [-num_embeddings, num_embeddings) = [", -n, ", ",
                n, "), got ", *p);
    options.padding_idx(*p < 0 ? *p + n : *p);
  }
  if (const Tensor& w = options._weight(); w.defined()) {
    EMBER_CHECK(w.dim() == 2 && w.size(0) == n && w.size(1) == dim, "Embedding: expected _weight of shape [", n, ", ",
                dim, "] (num_embeddings, embedding_dim), got ", w.sizes());
    EMBER_CHECK(w.is_floating_point(), "Embedding: expected a floating-point _weight, got ", w.dtype());
  }
  return options;
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions opts)
    : Module("Embedding"),
      options(validated(std::move(opts))),
      // A given weight is shared, through a tensor of its own (as nn.Parameter(t)).
      weight(register_parameter("weight", options._weight().defined()
                                              ? options._weight().detach()
                                              : empty({options.num_embeddings(), options.embedding_dim()}))) {
  if (!options._weight().defined()) reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (const std::optional<int64_t> p = options.padding_idx()) {
    NoGradGuard no_grad;
    weight.select(0, *p).zero_();
  }
}

Tensor EmbeddingImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dtype() == kInt64 || input.dtype() == kInt32, "Embedding: expected int64 or int32 ids, got ",
              input.dtype(), " (shape ", input.sizes(), ")");
  return functional::embedding(input, weight, options.padding_idx());
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) os << ", padding_idx=" << *options.padding_idx();
  os << ")";
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, bool freeze, std::optional<int64_t> padding_idx) {
  EMBER_CHECK(embeddings.defined() && embeddings.dim() == 2,
              "Embedding::from_pretrained: expected a 2-D tensor (num_embeddings, embedding_dim), got ",
              embeddings.defined() ? embeddings.sizes() : IntArrayRef());
  Embedding layer(
      EmbeddingOptions(embeddings.size(0), embeddings.size(1)).padding_idx(padding_idx)._weight(embeddings));
  layer->weight.requires_grad_(!freeze);
  return layer;
}

}  // namespace ember::nn
