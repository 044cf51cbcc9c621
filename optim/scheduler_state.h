// Reading and writing the entries of scheduler state dicts
// (Note [How a scheduler steps] in include/ember/optim/lr_scheduler.h).
#pragma once

#include <string>
#include <vector>

#include "ember/serialize.h"

namespace ember::optim {

Tensor int_entry(int64_t value);
Tensor number_entry(double value);
Tensor numbers_entry(const std::vector<double>& values);

// Checks "kind.<name>" is the dict's only kind entry; `who` names the caller in errors.
void check_kind(const TensorDict& dict, const std::string& name, const std::string& who);
// The entry `key`, which must exist and be a 0-d integer (at least
// `min_value`) / 0-d float (not NaN) / 1-d float tensor of `count` learning
// rates (finite, >= 0): a state dict is read from files, and a damaged value
// must not train on silently.
int64_t read_int_entry(const TensorDict& dict, const std::string& key, const std::string& who, int64_t min_value);
double read_number_entry(const TensorDict& dict, const std::string& key, const std::string& who);
std::vector<double> read_numbers_entry(const TensorDict& dict, const std::string& key, size_t count,
                                       const std::string& who);

}  // namespace ember::optim
