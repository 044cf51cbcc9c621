// SCAFFOLD: CPU kernels of the activation family (filled in by its owner).
#include "kernels/registration.h"

namespace ember {

void register_cpu_activation_kernels() {}

}  // namespace ember
