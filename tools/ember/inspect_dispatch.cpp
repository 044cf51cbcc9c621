// `ember inspect dispatch [OP] [--json]`: the ops the dispatcher knows, or one
// op's schema and its table of kernels per (key, dtype).
#include <iomanip>
#include <iostream>

#include "core/dispatcher.h"
#include "tools/ember/commands.h"
#include "tools/ember/json_output.h"

namespace ember::cli {
namespace {

constexpr DispatchKey kBackends[] = {DispatchKey::CPU, DispatchKey::CUDA};
constexpr DispatchKey kLayers[] = {DispatchKey::Profiler, DispatchKey::Tracer, DispatchKey::Autocast,
                                   DispatchKey::Autograd};

// What runs for `op` at a layer key: its own kernel, the layer's fallback, or nothing.
struct LayerEntry {
  const char* kind;  // "kernel", "fallback", "falls through"
  std::string name;
};

LayerEntry layer_entry(const OpEntry& op, DispatchKey k) {
  const KernelSlot& own = op.layer_kernel(k);
  if (own.present()) return {"kernel", own.name ? own.name : ""};
  const KernelSlot& fb = Dispatcher::instance().fallback(k);
  if (fb.present()) return {"fallback", fb.name ? fb.name : ""};
  return {"falls through", ""};
}

nlohmann::json op_json(const OpEntry& op) {
  nlohmann::json backends = nlohmann::json::object();
  for (DispatchKey k : kBackends) {
    nlohmann::json kernels = nlohmann::json::object();
    for (int t = 0; t < kNumDTypes; ++t) {
      const KernelSlot& s = op.backend_kernel(k, static_cast<DType>(t));
      if (s.present()) kernels[std::string(dtype_name(static_cast<DType>(t)))] = s.name ? s.name : "";
    }
    backends[dispatch_key_name(k)] = kernels;
  }
  nlohmann::json layers = nlohmann::json::object();
  for (DispatchKey k : kLayers) {
    const LayerEntry e = layer_entry(op, k);
    layers[dispatch_key_name(k)] = {{"kind", e.kind}, {"name", e.name}};
  }
  return {{"name", op.name()},
          {"schema", op.schema().text},
          {"dtype_rule", op.dtype_rule() == DTypeRule::Promote ? "promote" : "first_tensor"},
          {"backends", backends},
          {"layers", layers}};
}

}  // namespace

int inspect_dispatch(const std::string& op_name, bool json) {
  const Dispatcher& d = Dispatcher::instance();
  if (op_name.empty()) {
    if (json) {
      nlohmann::json ops = nlohmann::json::array();
      for (const OpEntry* op : d.ops()) ops.push_back(op_json(*op));
      print_json(nlohmann::json{{"ops", ops}});
      return 0;
    }
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
  if (json) {
    print_json(op_json(*op));
    return 0;
  }
  std::cout << "schema: " << op->schema().text << "\n";
  std::cout << "dtype rule: " << (op->dtype_rule() == DTypeRule::Promote ? "promote (result_type of the inputs)"
                                                                          : "first tensor's dtype")
            << "\n\n";
  std::cout << std::left << std::setw(10) << "key";
  for (int t = 0; t < kNumDTypes; ++t) std::cout << std::setw(10) << dtype_name(static_cast<DType>(t));
  std::cout << "\n";
  for (DispatchKey k : kBackends) {
    std::cout << std::setw(10) << dispatch_key_name(k);
    for (int t = 0; t < kNumDTypes; ++t) std::cout << std::setw(10) << (op->backend_kernel(k, static_cast<DType>(t)).present() ? "yes" : "-");
    std::cout << "\n";
  }
  std::cout << "\nlayers above the backends:\n";
  for (DispatchKey k : kLayers) {
    const LayerEntry e = layer_entry(*op, k);
    std::cout << "  " << std::setw(10) << dispatch_key_name(k) << e.kind << (e.name.empty() ? "" : " ") << e.name
              << "\n";
  }
  std::cout << "\nkernels:\n";
  for (DispatchKey k : kBackends) {
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
