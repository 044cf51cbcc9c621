// `ember inspect ops [--json]`: every op the dispatcher knows, with the dtypes
// its CPU and CUDA kernels cover, whether autograd has a derivative for it
// (autograd/formula.h) and which plain reference kernel its tuned kernels are
// checked against (kernels/reference_kernels.h).
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/formula.h"
#include "core/dispatcher.h"
#include "kernels/reference_kernels.h"
#include "tools/ember/commands.h"
#include "tools/ember/json_output.h"

namespace ember::cli {
namespace {

constexpr DispatchKey kBackends[] = {DispatchKey::CPU, DispatchKey::CUDA};

std::vector<DType> kernel_dtypes(const OpEntry& op, DispatchKey k) {
  std::vector<DType> out;
  for (int t = 0; t < kNumDTypes; ++t)
    if (op.backend_kernel(k, static_cast<DType>(t)).present()) out.push_back(static_cast<DType>(t));
  return out;
}

// "formula" (its own, or its out-of-place twin's for an in-place op), "not
// differentiable" (results never require grad) or "none" (backward through
// it raises).
const char* derivative(const OpEntry& op) {
  const autograd::OpAutogradInfo& info = autograd::op_autograd_info(op);
  if (info.formula) return "formula";
  if (info.non_differentiable) return "not differentiable";
  return "none";
}

// The short dtype names of the text table: "f32 f64 bf16", or "all".
std::string dtype_list(const std::vector<DType>& dtypes) {
  if (dtypes.empty()) return "-";
  if (dtypes.size() == static_cast<size_t>(kNumDTypes)) return "all";
  std::string out;
  for (DType t : dtypes) {
    std::string name(dtype_name(t));
    if (name.rfind("float", 0) == 0) name = "f" + name.substr(5);
    else if (name.rfind("bfloat", 0) == 0) name = "bf" + name.substr(6);
    else if (name.rfind("int", 0) == 0) name = "i" + name.substr(3);
    else if (name.rfind("uint", 0) == 0) name = "u" + name.substr(4);
    out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

std::vector<std::string> dtype_names(const std::vector<DType>& dtypes) {
  std::vector<std::string> out;
  for (DType t : dtypes) out.emplace_back(dtype_name(t));
  return out;
}

std::vector<const ReferenceKernel*> references_of(const OpEntry& op) {
  std::vector<const ReferenceKernel*> out;
  for (const ReferenceKernel& r : reference_kernels())
    if (op.name() == r.op) out.push_back(&r);
  return out;
}

}  // namespace

int inspect_ops(bool json) {
  const std::vector<OpEntry*>& ops = Dispatcher::instance().ops();
  int64_t with_cpu = 0, with_cuda = 0, with_formula = 0, with_reference = 0;
  for (const OpEntry* op : ops) {
    with_cpu += !kernel_dtypes(*op, DispatchKey::CPU).empty();
    with_cuda += !kernel_dtypes(*op, DispatchKey::CUDA).empty();
    with_formula += std::string(derivative(*op)) == "formula";
    with_reference += !references_of(*op).empty();
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const OpEntry* op : ops) {
      nlohmann::json kernels = nlohmann::json::object();
      for (DispatchKey k : kBackends) kernels[dispatch_key_name(k)] = dtype_names(kernel_dtypes(*op, k));
      nlohmann::json references = nlohmann::json::array();
      for (const ReferenceKernel* r : references_of(*op)) {
        references.push_back({{"backend", dispatch_key_name(r->backend)},
                              {"dtypes", dtype_names(r->dtypes)},
                              {"function", r->function},
                              {"file", r->file}});
      }
      const autograd::OpAutogradInfo& info = autograd::op_autograd_info(*op);
      list.push_back({{"name", op->name()},
                      {"schema", op->schema().text},
                      {"kernels", kernels},
                      {"derivative", derivative(*op)},
                      {"in_place", info.in_place},
                      {"view", info.view},
                      {"references", references}});
    }
    print_json(nlohmann::json{{"ops", list},
                              {"summary",
                               {{"ops", ops.size()},
                                {"with_cpu_kernels", with_cpu},
                                {"with_cuda_kernels", with_cuda},
                                {"with_derivative_formula", with_formula},
                                {"with_reference_kernel", with_reference}}}});
    return 0;
  }
  std::cout << ops.size() << " ops: " << with_cpu << " with CPU kernels, " << with_cuda << " with CUDA kernels"
            << " (in this build), " << with_formula << " with a derivative formula, " << with_reference
            << " with a reference kernel\n\n";
  std::cout << std::left << std::setw(34) << "op" << std::setw(36) << "CPU" << std::setw(22) << "CUDA"
            << std::setw(20) << "derivative"
            << "reference\n";
  for (const OpEntry* op : ops) {
    std::string reference;
    for (const ReferenceKernel* r : references_of(*op))
      reference += (reference.empty() ? "" : ", ") + std::string(dispatch_key_name(r->backend)) + "[" +
                   dtype_list(r->dtypes) + "] " + r->function;
    std::cout << std::setw(34) << op->name() << std::setw(36) << dtype_list(kernel_dtypes(*op, DispatchKey::CPU))
              << std::setw(22) << dtype_list(kernel_dtypes(*op, DispatchKey::CUDA)) << std::setw(20) << derivative(*op)
              << (reference.empty() ? "-" : reference) << "\n";
  }
  std::cout << "\nCPU, CUDA: the dtypes with a kernel (all = every dtype). derivative: formula (autograd records "
               "the op), not differentiable (its results never require grad), none (backward through it raises).\n";
  return 0;
}

}  // namespace ember::cli
