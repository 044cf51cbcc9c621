#include "optim/scheduler_state.h"

#include <algorithm>
#include <cmath>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::optim {

namespace {

const Tensor& find_entry(const TensorDict& dict, const std::string& key, const std::string& who) {
  const auto it = dict.find(key);
  EMBER_CHECK(it != dict.end() && it->second.defined(), who, ": the state dict lacks '", key, "'");
  return it->second;
}

}  // namespace

Tensor int_entry(int64_t value) { return scalar_tensor(value, kInt64); }
Tensor number_entry(double value) { return scalar_tensor(value, kFloat64); }

Tensor numbers_entry(const std::vector<double>& values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, kFloat64);
  std::copy(values.begin(), values.end(), t.data_ptr<double>());
  return t;
}

void check_kind(const TensorDict& dict, const std::string& name, const std::string& who) {
  std::string found;
  for (const auto& [key, value] : dict) {
    if (key.rfind("kind.", 0) == 0) found += (found.empty() ? "" : ", ") + key.substr(5);
  }
  EMBER_CHECK(!found.empty(), who, ": not a scheduler state dict (it has no kind.<Name> key)");
  EMBER_CHECK(found == name, who, ": the state dict is of ", found, ", expected ", name);
}

int64_t read_int_entry(const TensorDict& dict, const std::string& key, const std::string& who, int64_t min_value) {
  const Tensor& t = find_entry(dict, key, who);
  EMBER_CHECK(t.dim() == 0 && !t.is_floating_point(), who, ": '", key, "' must be a 0-d integer tensor, got ",
              t.dtype(), " ", t.sizes());
  const int64_t value = t.item<int64_t>();
  EMBER_CHECK(value >= min_value, who, ": '", key, "' is ", value, ", expected at least ", min_value,
              " (a damaged state dict?)");
  return value;
}

double read_number_entry(const TensorDict& dict, const std::string& key, const std::string& who) {
  const Tensor& t = find_entry(dict, key, who);
  EMBER_CHECK(t.dim() == 0 && t.is_floating_point(), who, ": '", key, "' must be a 0-d floating tensor, got ",
              t.dtype(), " ", t.sizes());
  const double value = t.item<double>();
  EMBER_CHECK(!std::isnan(value), who, ": '", key, "' is NaN (a damaged state dict?)");
  return value;
}

std::vector<double> read_numbers_entry(const TensorDict& dict, const std::string& key, size_t count,
                                       const std::string& who) {
  const Tensor& t = find_entry(dict, key, who);
  EMBER_CHECK(t.dim() == 1 && t.is_floating_point(), who, ": '", key, "' must be a 1-d floating tensor, got ",
              t.dtype(), " ", t.sizes());
  EMBER_CHECK(static_cast<size_t>(t.numel()) == count, who, ": '", key, "' has ", t.numel(),
              " values, but the optimiser has ", count, " parameter groups");
  const Tensor c = t.to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  std::vector<double> values(p, p + c.numel());
  for (size_t i = 0; i < values.size(); ++i) {
    EMBER_CHECK(std::isfinite(values[i]) && values[i] >= 0, who, ": '", key, "' holds ", values[i], " at index ", i,
                "; learning rates must be finite and >= 0 (a damaged state dict?)");
  }
  return values;
}

}  // namespace ember::optim
