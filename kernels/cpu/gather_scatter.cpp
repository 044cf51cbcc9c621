// SCAFFOLD: CPU kernels of the indexing family (filled in by its owner).
#include "kernels/registration.h"

namespace ember {

void register_cpu_indexing_kernels() {}

}  // namespace ember
