// Exporting a model of `ember train` (train_models.h) as an ONNX model or a
// graph archive: `ember export` and `ember train --set export=PATH`.
#pragma once

#include <string>

#include "ember/trainer.h"

namespace ember::cli {

// "onnx" or "archive": `format` when given, else from the extension of
// `path` (.onnx, .emb); `what` names the caller in errors.
std::string export_format(const std::string& format, const std::string& path, const char* what);

// Puts `model` in eval mode, traces it on a (2, 1, 28, 28) batch with a
// dynamic batch dimension and writes it to `path` as `format`.
void export_trained_model(const TrainableModel& model, const std::string& path, const std::string& format);

}  // namespace ember::cli
