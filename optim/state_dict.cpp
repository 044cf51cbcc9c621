// Optimizer::state_dict and load_state_dict: the key layout is in
// Note [Optimiser groups, state and fused steps] (include/ember/optim/optimizer.h).
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>

#include "ember/error.h"
#include "ember/ops.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

namespace {

Tensor int_tensor(int64_t v) { return scalar_tensor(v, kInt64); }
Tensor number_tensor(double v) { return scalar_tensor(v, kFloat64); }

Tensor int_list(const std::vector<int64_t>& values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, kInt64);
  std::copy(values.begin(), values.end(), t.data_ptr<int64_t>());
  return t;
}

// "state.3.exp_avg" -> {"state", "3", "exp_avg"}.
std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

std::optional<int64_t> parse_index(const std::string& s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
  return v;
}

// The state dict sorted by what its keys name.
struct ParsedStateDict {
  std::vector<std::string> kinds;
  std::map<int64_t, std::map<std::string, Tensor>> groups;  // group -> option name (or "params") -> value
  std::map<int64_t, std::map<std::string, Tensor>> states;  // parameter -> "step" or buffer name -> tensor
};

ParsedStateDict parse(const TensorDict& dict, const std::string& who) {
  ParsedStateDict out;
  for (const auto& [key, value] : dict) {
    const std::vector<std::string> parts = split_key(key);
    const std::optional<int64_t> index = parts.size() == 3 ? parse_index(parts[1]) : std::nullopt;
    EMBER_CHECK(value.defined(), who, ": the state dict's entry '", key, "' is an undefined tensor");
    if (parts.size() == 2 && parts[0] == "kind") {
      out.kinds.push_back(parts[1]);
    } else if (index && parts[0] == "param_groups") {
      out.groups[*index][parts[2]] = value;
    } else if (index && parts[0] == "state") {
      out.states[*index][parts[2]] = value;
    } else {
      EMBER_FAIL(who, ": unexpected key '", key,
                 "' in the state dict (expected kind.<Name>, param_groups.<g>.<option> or state.<i>.<name>)");
    }
  }
  return out;
}

double read_number(const Tensor& t, const std::string& who, const std::string& key) {
  EMBER_CHECK(t.numel() == 1 && t.dim() == 0 && t.is_floating_point(), who, ": '", key,
              "' must be a 0-d floating-point tensor, got ", t.dtype(), " ", t.sizes());
  return t.item<double>();
}

int64_t read_int(const Tensor& t, const std::string& who, const std::string& key) {
  EMBER_CHECK(t.numel() == 1 && t.dim() == 0 && !t.is_floating_point(), who, ": '", key,
              "' must be a 0-d integer tensor, got ", t.dtype(), " ", t.sizes());
  return t.item<int64_t>();
}

}  // namespace

TensorDict Optimizer::state_dict() const {
  TensorDict d;
  d["kind." + name_] = int_tensor(1);
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    std::vector<int64_t> ids;
    for (const Tensor& p : group.params()) {
      const int64_t id = index++;
      ids.push_back(id);
      const auto it = state_.find(p.impl());
      if (it == state_.end()) continue;
      const std::string state_prefix = "state." + std::to_string(id) + ".";
      if (counts_steps_) d[state_prefix + "step"] = int_tensor(it->second.step);
      for (const auto& [name, buffer] : it->second.buffers) d[state_prefix + name] = buffer.clone();
    }
    d[prefix + "params"] = int_list(ids);
    const std::unique_ptr<OptimizerOptions> options = group.options().clone();  // fields() hands out pointers
    for (const OptionField& f : options->fields()) {
      d[prefix + std::string(f.name)] = f.number ? number_tensor(*f.number) : int_tensor(*f.flag ? 1 : 0);
    }
    if (group.initial_lr()) d[prefix + "initial_lr"] = number_tensor(*group.initial_lr());
  }
  return d;
}

void Optimizer::load_state_dict(const TensorDict& dict) {
  const std::string who = name_ + "::load_state_dict";
  const ParsedStateDict parsed = parse(dict, who);
  EMBER_CHECK(!parsed.kinds.empty(), who, ": not an optimiser state dict (it has no kind.<Name> key)");
  EMBER_CHECK(parsed.kinds.size() == 1 && parsed.kinds[0] == name_, who, ": the state dict is of a ", parsed.kinds[0],
              " optimiser, expected ", name_);
  EMBER_CHECK(parsed.groups.size() == groups_.size() &&
                  (groups_.empty() || parsed.groups.rbegin()->first == static_cast<int64_t>(groups_.size()) - 1),
              who, ": the state dict has ", parsed.groups.size(), " parameter groups, this optimiser has ",
              groups_.size());

  // Check everything first, into new options and state; then commit.
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::vector<std::optional<double>> initial_lrs;
  std::vector<Tensor> params;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::map<std::string, Tensor>& saved = parsed.groups.at(static_cast<int64_t>(g));
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    const size_t count = groups_[g].params().size();
    const auto ids = saved.find("params");
    EMBER_CHECK(ids != saved.end(), who, ": the state dict lacks '", prefix, "params'");
    EMBER_CHECK(ids->second.dim() == 1 && static_cast<size_t>(ids->second.numel()) == count, who, ": parameter group ",
                g, " has ", ids->second.numel(), " parameters in the state dict, ", count, " in this optimiser");
    params.insert(params.end(), groups_[g].params().begin(), groups_[g].params().end());

    std::unique_ptr<OptimizerOptions> o = groups_[g].options().clone();
    const std::vector<OptionField> fields = o->fields();
    for (const auto& entry : saved) {
      const std::string& name = entry.first;
      const bool known =
          name == "params" || name == "initial_lr" ||
          std::any_of(fields.begin(), fields.end(), [&](const OptionField& f) { return f.name == name; });
      EMBER_CHECK(known, who, ": '", prefix, name, "' is not an option of ", name_);
    }
    for (const OptionField& f : fields) {
      const std::string key = prefix + std::string(f.name);
      const auto it = saved.find(std::string(f.name));
      EMBER_CHECK(it != saved.end(), who, ": the state dict lacks '", key, "'");
      if (f.number)
        *f.number = read_number(it->second, who, key);
      else
        *f.flag = read_int(it->second, who, key) != 0;
    }
    std::optional<double> initial_lr;
    if (const auto it = saved.find("initial_lr"); it != saved.end()) {
      initial_lr = read_number(it->second, who, prefix + "initial_lr");
    }
    o->validate(name_);
    options.push_back(std::move(o));
    initial_lrs.push_back(initial_lr);
  }

  std::unordered_map<const TensorImpl*, ParamState> state;
  for (const auto& [id, entries] : parsed.states) {
    EMBER_CHECK(id < static_cast<int64_t>(params.size()), who, ": the state dict has state for parameter ", id,
                ", but this optimiser has ", params.size(), " parameters");
    const Tensor& p = params[static_cast<size_t>(id)];
    ParamState s;
    for (const auto& [name, value] : entries) {
      const std::string key = "state." + std::to_string(id) + "." + name;
      if (name == "step" && counts_steps_) {
        s.step = read_int(value, who, key);
        EMBER_CHECK(s.step >= 0, who, ": '", key, "' is ", s.step, ", expected a step count >= 0 (a damaged state dict?)");
        continue;
      }
      EMBER_CHECK(std::find(buffer_names_.begin(), buffer_names_.end(), name) != buffer_names_.end(), who, ": '", key,
                  "' is not a state of ", name_);
      EMBER_CHECK(value.sizes() == p.sizes(), who, ": '", key, "' has shape ", value.sizes(), ", but parameter ", id,
                  " has shape ", p.sizes());
      EMBER_CHECK(value.is_floating_point(), who, ": '", key, "' is ", value.dtype(), ", expected a floating dtype");
      EMBER_CHECK(!value.isnan().logical_or(value.isinf()).any().item<bool>(), who, ": '", key,
                  "' holds NaN or infinite values (a damaged state dict, or saved from a diverged run)");
      Tensor copy = empty(p.sizes(), p.options());
      copy.copy_(value);
      s.buffers[name] = copy;
    }
    state[p.impl()] = std::move(s);
  }

  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].set_options(std::move(options[g]));
    groups_[g].initial_lr() = initial_lrs[g];
  }
  state_ = std::move(state);
  for (const ParamGroup& g : groups_) {  // parameters the dict has no state for start afresh
    for (const Tensor& p : g.params()) {
      auto [it, added] = state_.try_emplace(p.impl());
      if (added) init_param_state(it->second, p, g.options());
    }
  }
}

}  // namespace ember::optim
