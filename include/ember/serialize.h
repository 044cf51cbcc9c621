// Saving and loading tensors as safetensors files (the format of Hugging
// Face's `safetensors`, read and written by PyTorch, JAX and others).
//
//   ember::save_safetensors({{"weight", w}, {"bias", b}}, "model.safetensors");
//   ember::SafetensorsFile f = ember::load_safetensors("model.safetensors");
//   ember::Tensor w2 = f.tensors.at("weight");
//
//   ember::save(model->state_dict(), "model.safetensors");   // name -> tensor maps
//   model->load_state_dict(ember::load("model.safetensors"));
//
// Files are treated as untrusted: a malformed or truncated file gives an
// ember::Error that names the file and what was wrong, never a crash.
#pragma once

#include <map>
#include <string>

#include "ember/tensor.h"

namespace ember {

using TensorDict = std::map<std::string, Tensor>;

// Writes `tensors` (any device, any strides; stored contiguous, as on the CPU)
// and the string `metadata` to `path`. The write is atomic: a reader sees the
// old file or the new one, never a partial one.
void save_safetensors(const TensorDict& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});

struct SafetensorsFile {
  TensorDict tensors;
  std::map<std::string, std::string> metadata;
};

// Reads a whole file. Every tensor is a contiguous CPU tensor that owns its
// memory (nothing refers to the file afterwards).
SafetensorsFile load_safetensors(const std::string& path);

// A name -> tensor map to and from a safetensors file: save_safetensors
// without metadata (so atomic too), and the tensors of load_safetensors.
// (libtorch's torch::save/torch::load write pickles of modules or tensors
// instead; see docs/migrating_from_libtorch.md.)
inline void save(const TensorDict& tensors, const std::string& path) { save_safetensors(tensors, path); }
inline TensorDict load(const std::string& path) { return load_safetensors(path).tensors; }

}  // namespace ember
