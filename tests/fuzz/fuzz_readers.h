// The readers of untrusted bytes, each as one function of a byte buffer, so
// that a libFuzzer target (fuzz_<reader>.cpp) and the corpus replay in the
// unit tests (tests/test_fuzz_corpus.cpp) drive them the same way.
//
// A reader either returns or throws ember::Error; anything else (a crash,
// a sanitizer report, another exception type, a hang) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ember::fuzz {

using Reader = void (*)(std::span<const uint8_t> bytes);

struct NamedReader {
  std::string_view name;  // also the corpus folder: tests/fuzz/corpus/<name>/
  Reader read;
};

// safetensors: load_safetensors, then every tensor's bytes are read.
void read_safetensors(std::span<const uint8_t> bytes);
// A training checkpoint, loaded and then restored into a small model,
// optimiser, scheduler and data loader (their load_state_dict checks).
void read_checkpoint(std::span<const uint8_t> bytes);
// A YAML training config (the `ember train --config` reader).
void read_train_config(std::span<const uint8_t> bytes);
// An IDX file (plain or gzip).
void read_idx(std::span<const uint8_t> bytes);
// A CSV file after two bytes that pick the options: flags (header,
// delimiter, target by index or name, dtypes) and the target index.
void read_csv(std::span<const uint8_t> bytes);
// A graph archive (jit::load), then run at batch 2 on zeros of the declared
// input shapes when they are small (the executor's own checks).
void read_graph_archive(std::span<const uint8_t> bytes);

std::span<const NamedReader> all_readers();

// Writes the valid seeds that only ember can make (a checkpoint of the
// restore target above after a few steps, safetensors files of every dtype)
// into dir/<reader>/ok_*. tests/fuzz/make_seed_corpus.py derives the rest.
void write_seed_files(const std::string& dir);

}  // namespace ember::fuzz
