// The runner of the neural-network golden cases (format in tests/golden_nn.h).
#include "tests/golden_nn.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>
#include <sstream>
#include <vector>

#include "tests/golden_compare.h"

namespace ember::testing {

using nlohmann::json;

namespace {

std::map<std::string, GoldenNnRun>& runners() {
  static std::map<std::string, GoldenNnRun> table;
  return table;
}

bool given(const json& args, const char* name) { return args.contains(name) && !args.at(name).is_null(); }

}  // namespace

bool register_golden_nn_op(const std::string& op, GoldenNnRun run) {
  const bool added = runners().emplace(op, std::move(run)).second;
  if (!added) throw std::logic_error("golden nn op registered twice: " + op);
  return true;
}

int64_t int_arg(const json& args, const char* name, int64_t fallback) {
  return given(args, name) ? args.at(name).get<int64_t>() : fallback;
}
double float_arg(const json& args, const char* name, double fallback) {
  return given(args, name) ? args.at(name).get<double>() : fallback;
}
bool bool_arg(const json& args, const char* name, bool fallback) {
  return given(args, name) ? args.at(name).get<bool>() : fallback;
}
std::string str_arg(const json& args, const char* name, const std::string& fallback) {
  return given(args, name) ? args.at(name).get<std::string>() : fallback;
}
std::vector<int64_t> ints_arg(const json& args, const char* name, std::vector<int64_t> fallback) {
  if (!given(args, name)) return fallback;
  const json& v = args.at(name);
  if (v.is_array()) return v.get<std::vector<int64_t>>();
  return {v.get<int64_t>()};
}

namespace {

struct NnCase {
  std::string file, name, test_name, error;
};
void PrintTo(const NnCase& c, std::ostream* os) { *os << c.file << ": " << c.name; }

std::map<std::string, SafetensorsFile>& loaded_files() {
  static std::map<std::string, SafetensorsFile> files;
  return files;
}

std::vector<NnCase> discover_cases() {
  // (folder, stem) of every file; linalg/ holds the linear-algebra cases
  // (tools/golden/make_linalg_golden.py), in the same format.
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* folder : {"/nn", "/linalg"}) {
    const std::string dir = std::string(EMBER_TEST_DATA_DIR) + folder;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        const std::string f = e->d_name;
        constexpr std::string_view kExt = ".safetensors";
        if (f.size() > kExt.size() && f.compare(f.size() - kExt.size(), kExt.size(), kExt) == 0)
          files.emplace_back(dir, f.substr(0, f.size() - kExt.size()));
      }
      ::closedir(d);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<NnCase> cases;
  auto test_name = [](const std::string& stem, const std::string& name) {
    std::string s = stem + "_" + name;
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
  };
  for (const auto& [dir, stem] : files) {
    const std::string path = dir + "/" + stem + ".safetensors";
    try {
      const SafetensorsFile& f = loaded_files().emplace(path, load_safetensors(path)).first->second;
      for (const auto& [name, spec] : f.metadata) cases.push_back({path, name, test_name(stem, name), ""});
    } catch (const std::exception& e) {
      cases.push_back({path, "", test_name(stem, "unreadable"), e.what()});
    }
  }
  if (cases.empty()) cases.push_back({"", "", "no_cases", "no golden cases in " + std::string(EMBER_TEST_DATA_DIR)});
  return cases;
}

class GoldenNn : public ::testing::TestWithParam<NnCase> {};

TEST_P(GoldenNn, MatchesTorch) {
  const NnCase& c = GetParam();
  ASSERT_TRUE(c.error.empty()) << c.error;
  const SafetensorsFile& file = loaded_files().at(c.file);
  const json spec = json::parse(file.metadata.at(c.name));
  const std::string op = spec.at("op").get<std::string>();
  const json args = spec.value("args", json::object());
  const std::vector<int64_t> grads = spec.value("grads", std::vector<int64_t>{});
  const double rtol = spec.value("rtol", 0.0), atol = spec.value("atol", 0.0);
  const double grad_rtol = spec.value("grad_rtol", rtol), grad_atol = spec.value("grad_atol", atol);

  auto named = [&](const std::string& kind) {
    TensorList out;
    for (size_t i = 0;; ++i) {
      auto it = file.tensors.find(c.name + "." + kind + std::to_string(i));
      if (it == file.tensors.end()) return out;
      out.push_back(it->second);
    }
  };
  const TensorList inputs = named("in"), expected = named("out"), cotangents = named("cot");
  ASSERT_FALSE(expected.empty()) << c.name << " has no outputs";
  auto runner = runners().find(op);
  ASSERT_NE(runner, runners().end()) << "op '" << op << "' has no golden runner (tests/golden_nn_<family>.cpp)";

  std::ostringstream what;
  what << op << " " << args.dump();
  for (size_t i = 0; i < inputs.size(); ++i) what << "\n  in" << i << " = " << inputs[i].sizes() << " " << inputs[i].dtype();

  TensorList call_inputs;
  for (const Tensor& t : inputs) call_inputs.push_back(t.clone());
  for (int64_t j : grads) call_inputs.at(static_cast<size_t>(j)).requires_grad_(true);
  TensorList actual;
  try {
    actual = runner->second(call_inputs, args);
  } catch (const std::exception& e) {
    FAIL() << e.what() << "\n" << what.str();
  }
  ASSERT_EQ(actual.size(), expected.size()) << what.str();
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("out" + std::to_string(i));
    ASSERT_EQ(actual[i].sizes(), expected[i].sizes()) << what.str();
    EXPECT_EQ(actual[i].dtype(), expected[i].dtype()) << what.str();
    EXPECT_TRUE(values_match(actual[i].detach(), expected[i], rtol, atol)) << what.str();
  }
  if (grads.empty()) return;

  ASSERT_FALSE(cotangents.empty()) << c.name << " lists grads but has no cotangents";
  Tensor loss;
  for (size_t i = 0; i < cotangents.size(); ++i) {
    Tensor term = (actual.at(i) * cotangents[i]).sum();
    loss = loss.defined() ? loss + term : term;
  }
  TensorList wrt;
  for (int64_t j : grads) wrt.push_back(call_inputs[static_cast<size_t>(j)]);
  TensorList got;
  try {
    got = autograd::grad({loss}, wrt, {}, false, false, true);
  } catch (const std::exception& e) {
    FAIL() << "backward: " << e.what() << "\n" << what.str();
  }
  for (size_t k = 0; k < grads.size(); ++k) {
    SCOPED_TRACE("grad" + std::to_string(grads[k]));
    auto it = file.tensors.find(c.name + ".grad" + std::to_string(grads[k]));
    ASSERT_NE(it, file.tensors.end()) << c.name << " has no grad" << grads[k];
    const Tensor& want = it->second;
    if (!got[k].defined()) {  // ember: no dependence (nearest sampling, norm of order 0); torch: a zero tensor
      EXPECT_TRUE(want.eq(Scalar(0)).all().item<bool>()) << "no gradient where torch's is non-zero\n" << what.str();
      continue;
    }
    const Tensor& have = got[k];
    ASSERT_EQ(have.sizes(), want.sizes()) << what.str();
    EXPECT_EQ(have.dtype(), want.dtype()) << what.str();
    EXPECT_TRUE(values_match(have, want, grad_rtol, grad_atol)) << what.str();
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenNn, GoldenNn, ::testing::ValuesIn(discover_cases()),
                         [](const ::testing::TestParamInfo<NnCase>& info) { return info.param.test_name; });

}  // namespace
}  // namespace ember::testing
