// SCAFFOLD: CPU kernels of the attention family (filled in by its owner).
#include "kernels/registration.h"

namespace ember {

void register_cpu_attention_kernels() {}

}  // namespace ember
