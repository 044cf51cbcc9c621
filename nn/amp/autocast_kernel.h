// Installs the Autocast dispatch key's boxed kernel (called once at start-up,
// beside the Autograd kernel, from core/op_decls.cpp).
#pragma once

namespace ember::amp {

void install_autocast();

}  // namespace ember::amp
