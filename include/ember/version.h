// ember's version (the CMake project version), as recorded in checkpoints.
#pragma once

namespace ember {

const char* version();  // e.g. "0.1.0"

}  // namespace ember
