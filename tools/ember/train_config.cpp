// Reading `ember train` configs (train_config.h) with yaml-cpp.
#include "tools/ember/train_config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "ember/data/idx.h"
#include "ember/error.h"
#include "serialize/safetensors_format.h"

namespace ember::cli {

namespace {

// Far above any machine ember runs on, far below what would exhaust it.
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxWorkers = 256;
// A config is a page of text; anything far larger is not one.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// Where the keys come from: the file, and the keys --set gave.
struct Origin {
  std::string source;
  std::set<std::string> overridden;

  // "config.yaml:12" for a key from the file, "--set model.name" for an override.
  std::string where(const std::string& key, const YAML::Node& node) const {
    for (std::string prefix = key;; prefix = prefix.substr(0, prefix.rfind('.'))) {
      if (overridden.count(prefix)) return "--set " + prefix;
      if (prefix.find('.') == std::string::npos) break;
    }
    if (node.IsDefined() && !node.Mark().is_null()) return source + ":" + std::to_string(node.Mark().line + 1);
    return source;
  }
};

// A mapping of the config (the root or a section), read key by key. Every
// key must be read or listed as allowed; check_no_unknown_keys() names the rest.
class Section {
 public:
  Section(YAML::Node node, std::string path, const Origin& origin)
      : node_(std::move(node)), path_(std::move(path)), origin_(origin) {
    EMBER_CHECK(!node_.IsDefined() || node_.IsNull() || node_.IsMap(), "config ", origin_.where(path_, node_), ": '",
                path_, "' must be a mapping of keys to values");
  }

  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) const { return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull(); }

  template <class T>
  void read(const std::string& key, T& value, const char* type_name) {
    known_.insert(key);
    if (!has(key)) return;
    const YAML::Node child = node_[key];
    try {
      EMBER_CHECK(child.IsScalar(), "");
      value = child.as<T>();
    } catch (const std::exception&) {
      EMBER_FAIL("config ", origin_.where(key_path(key), child), ": '", key_path(key), "' must be ", type_name,
                 ", got ", describe(child));
    }
  }
  void read(const std::string& key, int64_t& v) { read<int64_t>(key, v, "an integer"); }
  void read(const std::string& key, uint64_t& v) { read<uint64_t>(key, v, "a non-negative integer"); }
  void read(const std::string& key, double& v) {
    read<double>(key, v, "a number");
    check(std::isfinite(v), key, "must be a finite number");
  }
  void read(const std::string& key, bool& v) { read<bool>(key, v, "true or false"); }
  void read(const std::string& key, std::string& v) { read<std::string>(key, v, "a string"); }
  void read(const std::string& key, std::optional<double>& v) {
    if (!has(key)) {
      known_.insert(key);
      return;
    }
    double value = 0;
    read(key, value);
    v = value;
  }
  template <class T>
  void read_list(const std::string& key, std::vector<T>& values, size_t size, const char* type_name) {
    known_.insert(key);
    if (!has(key)) return;
    const YAML::Node child = node_[key];
    try {
      EMBER_CHECK(child.IsSequence() && child.size() == size, "");
      std::vector<T> read_values;
      for (const YAML::Node& item : child) read_values.push_back(item.as<T>());
      values = read_values;
    } catch (const std::exception&) {
      EMBER_FAIL("config ", origin_.where(key_path(key), child), ": '", key_path(key), "' must be a list of ", size,
                 " ", type_name, ", got ", describe(child));
    }
  }
  Section section(const std::string& key) {
    known_.insert(key);
    return Section(node_.IsMap() ? node_[key] : YAML::Node(), key_path(key), origin_);
  }
  // A key the caller reads only in some cases (it is valid here).
  void allow(const std::string& key) { known_.insert(key); }

  void check_no_unknown_keys() const {
    if (!node_.IsMap()) return;
    for (const auto& entry : node_) {
      const std::string key = entry.first.as<std::string>();
      if (known_.count(key)) continue;
      std::string expected;
      for (const std::string& k : known_) expected += (expected.empty() ? "" : ", ") + k;
      EMBER_FAIL("config ", origin_.where(key_path(key), entry.first), ": unknown key '", key_path(key),
                 "' (expected one of: ", expected, ")");
    }
  }
  // Requires `value` to be one of `choices`.
  void check_choice(const std::string& key, const std::string& value, const std::vector<std::string>& choices) const {
    std::string list;
    for (const std::string& c : choices) {
      if (c == value) return;
      list += (list.empty() ? "" : ", ") + c;
    }
    EMBER_FAIL("config ", origin_.where(key_path(key), node_.IsMap() ? node_[key] : YAML::Node()), ": '",
               key_path(key), "' is '", value, "'; expected one of: ", list);
  }
  void check(bool ok, const std::string& key, const std::string& what) const {
    EMBER_CHECK(ok, "config ", origin_.where(key_path(key), node_.IsMap() ? node_[key] : YAML::Node()), ": '",
                key_path(key), "' ", what);
  }

 private:
  static std::string describe(const YAML::Node& node) {
    if (node.IsScalar()) return "'" + node.Scalar() + "'";
    if (node.IsSequence()) return "a list of " + std::to_string(node.size());
    if (node.IsMap()) return "a mapping";
    return "nothing";
  }

  YAML::Node node_;
  std::string path_;
  const Origin& origin_;
  std::set<std::string> known_;
};

// Sets root[a][b]... = value for the dotted key, creating mappings on the way.
void set_dotted(YAML::Node node, const std::vector<std::string>& parts, size_t i, const YAML::Node& value,
                const std::string& key) {
  if (i + 1 == parts.size()) {
    node[parts[i]] = value;
    return;
  }
  YAML::Node child = node[parts[i]];
  EMBER_CHECK(!child.IsDefined() || child.IsNull() || child.IsMap(), "config --set ", key, ": '", parts[i],
              "' is a value, not a section");
  if (!child.IsDefined() || child.IsNull()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
  set_dotted(node[parts[i]], parts, i + 1, value, key);
}

void apply_override(YAML::Node& root, const std::string& assignment, Origin& origin) {
  const size_t eq = assignment.find('=');
  EMBER_CHECK(eq != std::string::npos && eq > 0, "config --set ", assignment, ": expected key=value (e.g. --set ",
              "optimizer.lr=0.01)");
  const std::string key = assignment.substr(0, eq);
  std::vector<std::string> parts;
  std::stringstream keys(key);
  for (std::string part; std::getline(keys, part, '.');) {
    EMBER_CHECK(!part.empty(), "config --set ", assignment, ": the key has an empty part");
    parts.push_back(part);
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    EMBER_FAIL("config --set ", key, ": the value is not valid YAML: ", e.msg);
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  set_dotted(root, parts, 0, value, key);
  origin.overridden.insert(key);
}

// A config is a few dozen nodes; aliases (*a) repeat a node wherever they
// appear, so a few lines of them can stand for billions of nodes.
constexpr int64_t kMaxConfigNodes = 100'000;
// A training config nests three levels deep; an alias that contains itself
// would otherwise nest without end (found by fuzzing).
constexpr int kMaxConfigDepth = 16;
// PATH_MAX on Linux.
constexpr size_t kMaxOutputPath = 4096;

// Every mapping key is a plain name, given once: yaml-cpp keeps the first of
// two equal keys without a word, and a complex key ({a: 1}: x) has no name.
// `visited` counts nodes (aliases expanded) against kMaxConfigNodes.
void check_keys(const YAML::Node& node, const std::string& path, const std::string& source, int64_t& visited,
                int depth = 0) {
  EMBER_CHECK(++visited <= kMaxConfigNodes, "config ", source, ": more than ", kMaxConfigNodes,
              " values once its aliases are expanded; a training config needs no aliases");
  EMBER_CHECK(depth <= kMaxConfigDepth, "config ", source, ": values nested more than ", kMaxConfigDepth,
              " levels deep (an alias that contains itself?)");
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) check_keys(item, path, source, visited, depth + 1);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> first_line;
  for (const auto& entry : node) {
    const int line = entry.first.Mark().line + 1;
    EMBER_CHECK(entry.first.IsScalar(), "config ", source, ":", line, ": a key in '", path.empty() ? "(top)" : path,
                "' is not a plain name");
    const std::string key = entry.first.Scalar();
    const std::string key_path = path.empty() ? key : path + "." + key;
    const auto [it, fresh] = first_line.emplace(key, line);
    EMBER_CHECK(fresh, "config ", source, ":", line, ": duplicate key '", key_path, "' (first given on line ",
                it->second, ")");
    check_keys(entry.second, key_path, source, visited, depth + 1);
  }
}

void read_model(Section s, ModelConfig& m) {
  s.read("name", m.name);
  s.check(!m.name.empty(), "name", "is required (mlp, cnn or transformer)");
  s.check_choice("name", m.name, {"mlp", "cnn", "transformer"});
  if (m.name == "mlp") {
    s.read_list<int64_t>("hidden", m.hidden, 2, "integers");
    s.read("dropout", m.dropout);
    s.check(m.hidden[0] > 0 && m.hidden[1] > 0, "hidden", "sizes must be > 0");
  } else if (m.name == "transformer") {
    s.read("patch", m.patch);
    s.read("d_model", m.d_model);
    s.read("heads", m.heads);
    s.read("layers", m.layers);
    s.read("dim_feedforward", m.dim_feedforward);
    s.read("dropout", m.dropout);
    s.check(m.patch > 0 && 28 % m.patch == 0, "patch", "must divide 28 (the image side)");
    s.check(m.heads > 0 && m.d_model > 0 && m.d_model % m.heads == 0, "d_model", "must be a positive multiple of heads");
    s.check(m.layers > 0 && m.dim_feedforward > 0, "layers", "and dim_feedforward must be > 0");
  }
  s.check(m.dropout >= 0 && m.dropout < 1, "dropout", "must be in [0, 1)");
  s.check_no_unknown_keys();
}

void read_data(Section s, DataConfig& d) {
  s.read("name", d.name);
  s.check_choice("name", d.name, {"fashion_mnist"});
  s.read("path", d.path);
  s.read("batch_size", d.batch_size);
  s.read("eval_batch_size", d.eval_batch_size);
  s.read("num_workers", d.num_workers);
  s.read("cache", d.cache);
  s.check(d.batch_size > 0, "batch_size", "must be > 0");
  s.check(d.eval_batch_size > 0, "eval_batch_size", "must be > 0");
  s.check(d.num_workers >= 0 && d.num_workers <= kMaxWorkers, "num_workers",
          "must be in [0, " + std::to_string(kMaxWorkers) + "]");
  s.check_no_unknown_keys();
  for (bool train : {true, false}) {
    const data::IdxFiles files = data::mnist_files(d.path, train);
    for (const std::string& file : {files.images, files.labels}) {
      s.check(std::filesystem::exists(file), "path",
              "names a folder without " + file + " (install the Debian package dataset-fashion-mnist)");
    }
  }
}

void read_optimizer(Section s, OptimizerConfig& o) {
  s.read("name", o.name);
  s.check_choice("name", o.name, {"sgd", "adam", "adamw"});
  if (o.name == "adamw") o.weight_decay = 1e-2;  // AdamW's default
  s.read("lr", o.lr);
  s.read("weight_decay", o.weight_decay);
  if (o.name == "sgd") {
    s.read("momentum", o.momentum);
    s.read("nesterov", o.nesterov);
  } else {
    s.read_list<double>("betas", o.betas, 2, "numbers");
    s.read("eps", o.eps);
    s.check(o.betas[0] >= 0 && o.betas[0] < 1 && o.betas[1] >= 0 && o.betas[1] < 1, "betas",
            "must both be in [0, 1)");
    s.check(o.eps >= 0, "eps", "must be >= 0");
  }
  s.check(o.momentum >= 0, "momentum", "must be >= 0");
  s.check(o.lr > 0, "lr", "must be > 0");
  s.check(o.weight_decay >= 0, "weight_decay", "must be >= 0");
  s.check_no_unknown_keys();
}

void read_schedule(Section s, ScheduleConfig& c) {
  s.read("name", c.name);
  s.check_choice("name", c.name, {"none", "cosine", "step", "onecycle"});
  if (c.name != "onecycle") s.read("warmup_steps", c.warmup_steps);
  s.check(c.warmup_steps >= 0, "warmup_steps", "must be >= 0");
  if (c.name == "cosine") s.read("min_lr", c.min_lr);
  s.check(c.min_lr >= 0, "min_lr", "must be >= 0");
  if (c.name == "step") {
    s.read("step_size", c.step_size);
    s.read("gamma", c.gamma);
    s.check(c.step_size > 0, "step_size", "must be > 0 (epochs)");
    s.check(c.gamma > 0, "gamma", "must be > 0 (the factor the lr is multiplied by)");
  }
  if (c.name == "onecycle") {
    s.read("max_lr", c.max_lr);
    s.check(!c.max_lr || *c.max_lr > 0, "max_lr", "must be > 0");
    s.read("pct_start", c.pct_start);
    s.check(c.pct_start > 0 && c.pct_start < 1, "pct_start", "must be in (0, 1)");
  }
  s.check_no_unknown_keys();
}

}  // namespace

TrainConfig parse_train_config(const std::string& yaml_text, const std::string& source,
                               const std::vector<std::string>& overrides) {
  Origin origin{source, {}};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    EMBER_FAIL("config ", source, ":", e.mark.line + 1, ": not valid YAML: ", e.msg);
  }
  int64_t visited = 0;
  check_keys(root, "", source, visited);
  for (const std::string& assignment : overrides) apply_override(root, assignment, origin);

  TrainConfig c;
  Section s(root, "", origin);
  read_model(s.section("model"), c.model);
  read_data(s.section("data"), c.data);
  read_optimizer(s.section("optimizer"), c.optimizer);
  read_schedule(s.section("schedule"), c.schedule);
  s.read("epochs", c.epochs);
  s.read("threads", c.threads);
  s.read("seed", c.seed);
  s.read("amp", c.amp);
  s.read("output", c.output);
  s.read("accumulate_grad_batches", c.accumulate_grad_batches);
  s.read("clip_grad_norm", c.clip_grad_norm);
  s.read("tensorboard", c.tensorboard);
  s.read("export", c.export_path);
  s.check(c.epochs > 0, "epochs", "must be > 0");
  s.check(c.threads > 0 && c.threads <= kMaxThreads, "threads", "must be in [1, " + std::to_string(kMaxThreads) + "]");
  s.check(c.amp == "none" || c.amp == "bf16", "amp", "is '" + c.amp + "'; expected none or bf16");
  s.check(!c.output.empty(), "output", "must name a folder");
  s.check(c.output.size() <= kMaxOutputPath, "output", "is longer than " + std::to_string(kMaxOutputPath) + " characters");
  s.check(c.accumulate_grad_batches > 0, "accumulate_grad_batches", "must be > 0");
  s.check(!c.clip_grad_norm || *c.clip_grad_norm > 0, "clip_grad_norm", "must be > 0");
  // YAML's booleans (true, True, TRUE) or a folder.
  std::string flag = c.tensorboard;
  for (char& ch : flag) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (flag == "false") c.tensorboard.clear();
  if (flag == "true") c.tensorboard = (std::filesystem::path(c.output) / "tensorboard").string();
  s.check(c.tensorboard.size() <= kMaxOutputPath, "tensorboard",
          "is longer than " + std::to_string(kMaxOutputPath) + " characters");
  s.check(c.export_path.empty() || c.export_path.ends_with(".onnx") || c.export_path.ends_with(".emb"), "export",
          "is '" + c.export_path + "'; expected a path ending in .onnx (ONNX) or .emb (graph archive)");
  s.check_no_unknown_keys();

  YAML::Emitter out;
  out << root;
  c.text = std::string(out.c_str()) + "\n";
  return c;
}

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  const std::vector<uint8_t> bytes = serialize::read_file_bytes(path);  // regular files only
  EMBER_CHECK(bytes.size() <= kMaxConfigBytes, "config ", path, ": ", bytes.size(), " bytes is not a config (limit ",
              kMaxConfigBytes, ")");
  return parse_train_config(std::string(bytes.begin(), bytes.end()), path, overrides);
}

}  // namespace ember::cli
