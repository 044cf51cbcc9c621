// `ember inspect dispatch [OP]`: the ops the dispatcher knows, or one op's
// schema and its table of kernels per (key, dtype).
#include <iomanip>
#include <iostream>

#include "core/dispatcher.h"
#include "tools/ember/commands.h"

namespace ember::cli {

int inspect_dispatch(const std::string& op_name) {
  const Dispatcher& d = Dispatcher::instance();
  if (op_name.empty()) {
    std::cout << d.ops().size() << " ops\n";
    for (const OpEntry* op : d.ops()) {
      std::cout << "  " << std::left << std::setw(60) << op->schema().text << "  " << op->registered_summary() << "\n";
    }
    return 0;
  }
  const OpEntry* op = d.find(op_name);
  if (!op) {
    std::cerr << "ember inspect dispatch: no op named '" << op_name << "' (run without a name to list all ops)\n";
    return 2;
  }
  std::cout << "schema: " << op->schema().text << "\n";
  std::cout << "dtype rule: " << (op->dtype_rule() == DTypeRule::Promote ? "promote (result_type of the inputs)"
                                                                          : "first tensor's dtype")
            << "\n\n";
  std::cout << std::left << std::setw(10) << "key";
  for (int t = 0; t < kNumDTypes; ++t) std::cout << std::setw(10) << dtype_name(static_cast<DType>(t));
  std::cout << "\n";
  for (DispatchKey k : {DispatchKey::CPU, DispatchKey::CUDA}) {
    std::cout << std::setw(10) << dispatch_key_name(k);
    for (int t = 0; t < kNumDTypes; ++t) std::cout << std::setw(10) << (op->backend_kernel(k, static_cast<DType>(t)).present() ? "yes" : "-");
    std::cout << "\n";
  }
  std::cout << "\nlayers above the backends:\n";
  for (DispatchKey k : {DispatchKey::Profiler, DispatchKey::Tracer, DispatchKey::Autocast, DispatchKey::Autograd}) {
    const KernelSlot& own = op->layer_kernel(k);
    const KernelSlot& fb = d.fallback(k);
    std::cout << "  " << std::setw(10) << dispatch_key_name(k)
              << (own.present() ? std::string("kernel ") + (own.name ? own.name : "")
                                : fb.present() ? std::string("fallback ") + (fb.name ? fb.name : "")
                                               : std::string("falls through"))
              << "\n";
  }
  std::cout << "\nkernels:\n";
  for (DispatchKey k : {DispatchKey::CPU, DispatchKey::CUDA}) {
    for (int t = 0; t < kNumDTypes; ++t) {
      const KernelSlot& s = op->backend_kernel(k, static_cast<DType>(t));
      if (s.present())
        std::cout << "  " << dispatch_key_name(k) << " " << dtype_name(static_cast<DType>(t)) << ": "
                  << (s.name ? s.name : "(unnamed)") << "\n";
    }
  }
  return 0;
}

}  // namespace ember::cli
