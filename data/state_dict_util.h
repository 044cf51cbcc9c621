// uint64 values in a TensorDict: stored as one-element int64 tensors (the bits
// reinterpreted), since safetensors has no unsigned 64-bit dtype that every
// reader accepts.
#pragma once

#include <cstdint>
#include <string>

#include "ember/serialize.h"

namespace ember::data::detail {

Tensor u64_tensor(uint64_t value);
// state[key] as uint64; an ember::Error naming `owner` and the key when it is
// missing or not a one-element int64 tensor.
uint64_t read_u64(const TensorDict& state, const std::string& key, const char* owner);

// The entries of `state` whose keys start with `prefix`, with the prefix removed.
TensorDict sub_dict(const TensorDict& state, const std::string& prefix);

}  // namespace ember::data::detail
