// Options of the recurrent layers and cells, as libtorch's RNNOptions,
// LSTMOptions, GRUOptions, RNNCellOptions, LSTMCellOptions, GRUCellOptions:
// chainable setters, PyTorch's defaults.
//
//   ember::nn::LSTMOptions(256, 512).num_layers(2).dropout(0.2).batch_first(true)
//   ember::nn::RNNOptions(8, 16).nonlinearity(ember::kReLU).bidirectional(true)
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace ember::nn {

// What every recurrent layer is configured by.
struct RecurrentSettings {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  // input and output (N, L, *) instead of (L, N, *); not the states
  double dropout = 0.0;      // on the outputs of every layer but the last, in training mode
  bool bidirectional = false;
};

template <class Derived>
class RecurrentOptions {
 public:
  RecurrentOptions(int64_t input_size, int64_t hidden_size) : s_{input_size, hidden_size} {}

  Derived& num_layers(int64_t v) { return set(s_.num_layers, v); }
  Derived& bias(bool v) { return set(s_.bias, v); }
  Derived& batch_first(bool v) { return set(s_.batch_first, v); }
  Derived& dropout(double v) { return set(s_.dropout, v); }
  Derived& bidirectional(bool v) { return set(s_.bidirectional, v); }

  int64_t input_size() const { return s_.input_size; }
  int64_t hidden_size() const { return s_.hidden_size; }
  int64_t num_layers() const { return s_.num_layers; }
  bool bias() const { return s_.bias; }
  bool batch_first() const { return s_.batch_first; }
  double dropout() const { return s_.dropout; }
  bool bidirectional() const { return s_.bidirectional; }
  const RecurrentSettings& settings() const { return s_; }

 private:
  template <class T>
  Derived& set(T& field, T v) {
    field = v;
    return static_cast<Derived&>(*this);
  }
  RecurrentSettings s_;
};

// nonlinearity: "tanh" (default) or "relu" (ember::kTanh, ember::kReLU).
class RNNOptions : public RecurrentOptions<RNNOptions> {
 public:
  using RecurrentOptions::RecurrentOptions;
  RNNOptions& nonlinearity(std::string v) {
    nonlinearity_ = std::move(v);
    return *this;
  }
  const std::string& nonlinearity() const { return nonlinearity_; }

 private:
  std::string nonlinearity_ = "tanh";
};

class LSTMOptions : public RecurrentOptions<LSTMOptions> {
 public:
  using RecurrentOptions::RecurrentOptions;
};

class GRUOptions : public RecurrentOptions<GRUOptions> {
 public:
  using RecurrentOptions::RecurrentOptions;
};

// ---- cells: one step, no layers, directions or dropout ----

template <class Derived>
class CellOptions {
 public:
  CellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  Derived& bias(bool v) {
    bias_ = v;
    return static_cast<Derived&>(*this);
  }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bias() const { return bias_; }

 private:
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
};

class RNNCellOptions : public CellOptions<RNNCellOptions> {
 public:
  using CellOptions::CellOptions;
  RNNCellOptions& nonlinearity(std::string v) {
    nonlinearity_ = std::move(v);
    return *this;
  }
  const std::string& nonlinearity() const { return nonlinearity_; }

 private:
  std::string nonlinearity_ = "tanh";
};

class LSTMCellOptions : public CellOptions<LSTMCellOptions> {
 public:
  using CellOptions::CellOptions;
};

class GRUCellOptions : public CellOptions<GRUCellOptions> {
 public:
  using CellOptions::CellOptions;
};

}  // namespace ember::nn
