// Emulation build only: stands in for the toolkit's header of the same name
// (this folder comes first on the include path of the CUDA sources).
#pragma once
#include "kernels/cuda/emulate/runtime_api.h"
