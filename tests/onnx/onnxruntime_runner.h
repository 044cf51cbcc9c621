// Runs an exported model with onnxruntime (tests/onnx/run_onnxruntime.py in
// the venv the onnx_venv fixture creates) and reads its outputs back.
#pragma once

#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/ember.h"
#include "tests/test_data_util.h"

namespace ember::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `model` on `inputs` (one tensor per model input, by name); the
// outputs by name. Fails the test with onnxruntime's message on an error.
inline TensorDict run_onnxruntime(const std::string& model, const TensorDict& inputs, const ScratchDir& dir) {
  const std::string python = EMBER_ONNX_PYTHON;
  if (!std::filesystem::exists(python)) {
    ADD_FAILURE() << "no onnxruntime venv at " << python
                  << ": run the ONNX tests through ctest (ctest -L onnx: its fixture onnx_venv creates it) or run "
                  << EMBER_ONNX_MAKE_VENV;
    return {};
  }
  const std::string in = dir.path("ort_inputs.safetensors"), out = dir.path("ort_outputs.safetensors"),
                    log = dir.path("ort.log");
  save(inputs, in);
  const std::string command = "'" + python + "' '" + std::string(EMBER_ONNX_RUNNER) + "' '" + model + "' '" + in +
                              "' '" + out + "' > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0) {
    ADD_FAILURE() << "onnxruntime failed on " << model << " (status " << status << "):\n" << read_text(log);
    return {};
  }
  return load(out);
}

// ONNX's checker on the file as written.
inline void expect_checker_accepts(const std::string& model) {
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the ONNX checker rejects " << model << ": " << e.what();
  }
}

// Largest |a - b| (0 when both are empty); shapes must match.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (a.sizes() != b.sizes() || a.numel() == 0) return a.sizes() == b.sizes() ? 0.0 : 1e30;
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

// Largest |got - expected| / max(1, |expected|): an absolute error for values
// up to 1, a relative one above (exp(6) may differ in its last float32 bit
// between math libraries, 5e-5 in absolute terms). A NaN makes it NaN, which
// fails any EXPECT_LE.
inline double max_error(const Tensor& got, const Tensor& expected) {
  EXPECT_EQ(got.sizes(), expected.sizes());
  if (got.sizes() != expected.sizes()) return 1e30;
  if (got.numel() == 0) return 0.0;
  const Tensor g = got.to(kFloat64), e = expected.to(kFloat64);
  return ((g - e).abs() / maximum(e.abs(), ones_like(e))).max().item<double>();
}

}  // namespace ember::testing
