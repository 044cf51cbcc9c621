// ember::nn::Embedding, as torch.nn.Embedding: a table of num_embeddings
// vectors of size embedding_dim, looked up by integer ids.
//
//   namespace nn = ember::nn;
//   nn::Embedding emb(nn::EmbeddingOptions(10000, 256).padding_idx(0));
//   ember::Tensor h = emb(ids);                    // ids (B, T) int64 -> (B, T, 256)
//   auto frozen = nn::Embedding::from_pretrained(vectors);   // vectors (V, D), not trained
//
// The parameter "weight" (num_embeddings, embedding_dim) starts as PyTorch's:
// normal(0, 1), with the padding_idx row zero. That row gets no gradient.
// Not offered: max_norm, scale_grad_by_freq, sparse.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "ember/nn/module.h"

namespace ember::nn {

class EmbeddingOptions {
 public:
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}

  // The id whose row stays zero and gets no gradient; negative counts from the end.
  EmbeddingOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  // A (num_embeddings, embedding_dim) tensor to use as the weight (shared, not
  // copied, not initialised) instead of a fresh one.
  EmbeddingOptions& _weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }

  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }
  const Tensor& _weight() const { return weight_; }

 private:
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  Tensor weight_;
};

class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(EmbeddingOptions options);
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}

  // int64 or int32 ids of any shape -> (*ids.shape, embedding_dim).
  Tensor forward(const Tensor& input);
  // normal(0, 1), the padding_idx row zero.
  void reset_parameters();
  // "Embedding(10000, 256, padding_idx=0)"
  void pretty_print(std::ostream& os) const override;

  const EmbeddingOptions options;  // padding_idx made non-negative
  Tensor& weight;                  // (num_embeddings, embedding_dim)
};

// The holder, with from_pretrained (as libtorch's).
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;

  // A layer whose weight is `embeddings` (2-D; shared, not copied), trained
  // only when !freeze. The padding_idx row is left as it is.
  static Embedding from_pretrained(const Tensor& embeddings, bool freeze = true,
                                   std::optional<int64_t> padding_idx = std::nullopt);
};

}  // namespace ember::nn
