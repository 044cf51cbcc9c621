// Op properties from schemas (jit/op_traits.h).
#include "jit/op_traits.h"

namespace ember::jit {

bool mutates(const OpEntry& op) {
  for (const SchemaArg& a : op.schema().args)
    if (a.type.find('!') != std::string::npos) return true;
  return false;
}

bool is_view(const OpEntry& op) {
  for (const std::string& r : op.schema().returns)
    if (r.find('(') != std::string::npos && r.find('!') == std::string::npos) return true;
  return false;
}

size_t seed_arg(const OpEntry& op) {
  const auto& args = op.schema().args;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i].name == "seed" && args[i + 1].name == "offset" && args[i].type == "int") return i;
  return args.size();
}

bool is_random(const OpEntry& op) { return seed_arg(op) < op.schema().args.size(); }

}  // namespace ember::jit
