// Emulation build only: stands in for the toolkit's header of the same name,
// which brings the runtime API and the device-side language.
#pragma once
#include "kernels/cuda/emulate/device.h"
#include "kernels/cuda/emulate/runtime_api.h"
