// Golden test: ember's ops against PyTorch's outputs.
//
// tests/golden/*.safetensors (written by tools/golden/make_golden.py; the
// convention is in tools/golden/README.md) hold, per case NAME, the inputs
// NAME.in0, NAME.in1, ... and torch's outputs NAME.out0, ...; the file's
// metadata maps NAME to {"op", "args", "rtol", "atol"}. Every case is one
// test, named <file>_<case> (e.g. GoldenOps/Golden.MatchesTorch/elementwise_add_same),
// that runs the op through ember's public API (the table below) and checks
// each output's shape, dtype (the golden dtype pins type promotion) and values.
//
// A case whose op is missing from the table fails; so does a case ember
// cannot run (an ember::Error, e.g. a kernel that is not registered).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "tests/golden_compare.h"

namespace ember {
namespace {

using nlohmann::json;
using Outputs = std::vector<Tensor>;
using testing::values_match;

// ---------------------------------------------------------------------------
// Arguments, read from the case's "args" object. An absent argument takes
// torch's default; null means "not given".

bool has_arg(const json& args, const char* name) { return args.contains(name) && !args.at(name).is_null(); }

Scalar to_scalar(const json& v, const char* name) {
  if (v.is_boolean()) return Scalar(v.get<bool>());
  if (v.is_number_integer()) return Scalar(v.get<int64_t>());
  if (v.is_number_float()) return Scalar(v.get<double>());
  if (v.is_string()) {  // JSON has no infinities: the files write them as strings
    const std::string s = v.get<std::string>();
    if (s == "inf") return Scalar(INFINITY);
    if (s == "-inf") return Scalar(-INFINITY);
  }
  throw std::invalid_argument(std::string("argument ") + name + " is not a number: " + v.dump());
}

Scalar scalar_arg(const json& args, const char* name, const Scalar& fallback) {
  return has_arg(args, name) ? to_scalar(args.at(name), name) : fallback;
}
std::optional<Scalar> optional_scalar_arg(const json& args, const char* name) {
  if (!has_arg(args, name)) return std::nullopt;
  return to_scalar(args.at(name), name);
}
int64_t int_arg(const json& args, const char* name, int64_t fallback) {
  return has_arg(args, name) ? args.at(name).get<int64_t>() : fallback;
}
bool bool_arg(const json& args, const char* name, bool fallback) {
  return has_arg(args, name) ? args.at(name).get<bool>() : fallback;
}
std::string str_arg(const json& args, const char* name, const std::string& fallback) {
  return has_arg(args, name) ? args.at(name).get<std::string>() : fallback;
}
// "dim": an int, a list of ints, or null/absent. ember reads an empty list as
// "all dims", which is what null means.
std::vector<int64_t> dims_arg(const json& args) {
  if (!has_arg(args, "dim")) return {};
  const json& d = args.at("dim");
  if (d.is_array()) return d.get<std::vector<int64_t>>();
  return {d.get<int64_t>()};
}
std::optional<int64_t> optional_dim_arg(const json& args) {
  if (!has_arg(args, "dim")) return std::nullopt;
  return args.at("dim").get<int64_t>();
}
std::vector<int64_t> all_dims(const Tensor& t) {
  std::vector<int64_t> d(static_cast<size_t>(t.dim()));
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<int64_t>(i);
  return d;
}
Outputs two_outputs(const std::tuple<Tensor, Tensor>& r) { return {std::get<0>(r), std::get<1>(r)}; }
// A string argument, or nullopt when it is absent or null.
std::optional<std::string> optional_str_arg(const json& args, const char* name) {
  if (!has_arg(args, name)) return std::nullopt;
  return args.at(name).get<std::string>();
}

// ---------------------------------------------------------------------------
// The op table: op name -> how ember runs it.

struct GoldenOp {
  size_t min_inputs, max_inputs;
  std::function<Outputs(const TensorList& in, const json& args)> run;
};
constexpr size_t kAny = static_cast<size_t>(-1);

const std::map<std::string, GoldenOp>& op_table() {
  static const std::map<std::string, GoldenOp> table = [] {
    std::map<std::string, GoldenOp> t;
    // ---- elementwise ----
    t["add"] = {2, 2, [](const TensorList& in, const json& a) {
                  return Outputs{add(in[0], in[1], scalar_arg(a, "alpha", 1))};
                }};
    t["sub"] = {2, 2, [](const TensorList& in, const json& a) {
                  return Outputs{sub(in[0], in[1], scalar_arg(a, "alpha", 1))};
                }};
    t["div"] = {2, 2, [](const TensorList& in, const json& a) {
                  const std::string mode = str_arg(a, "rounding_mode", "");
                  if (!mode.empty()) return Outputs{div(in[0], in[1], mode)};
                  return Outputs{div(in[0], in[1])};
                }};
    t["pow"] = {1, 2, [](const TensorList& in, const json& a) {
                  if (in.size() == 2) return Outputs{pow(in[0], in[1])};
                  if (!has_arg(a, "exponent")) throw std::invalid_argument("pow: one input and no exponent");
                  return Outputs{pow(in[0], to_scalar(a.at("exponent"), "exponent"))};
                }};
    // Ops that take their tensors and nothing else: the free function of ops.h.
#define EMBER_GOLDEN_FN(name) \
  { #name, &ember::name }
#define EMBER_GOLDEN_FN_ITEM(name) EMBER_GOLDEN_FN(name),
    using Binary = Tensor (*)(const Tensor&, const Tensor&);
    const std::pair<const char*, Binary> binaries[] = {
        EMBER_GOLDEN_FN(mul),         EMBER_GOLDEN_FN(maximum),    EMBER_GOLDEN_FN(minimum),
        EMBER_GOLDEN_FN(remainder),   EMBER_GOLDEN_FN(eq),         EMBER_GOLDEN_FN(ne),
        EMBER_GOLDEN_FN(lt),          EMBER_GOLDEN_FN(le),         EMBER_GOLDEN_FN(gt),
        EMBER_GOLDEN_FN(ge),          EMBER_GOLDEN_FN(logical_and), EMBER_GOLDEN_FN(logical_or),
        EMBER_GOLDEN_FN(logical_xor), EMBER_GOLDEN_FN(mm),         EMBER_GOLDEN_FN(bmm),
        EMBER_GOLDEN_FN(matmul),      EMBER_GOLDEN_FN(dot),        EMBER_GOLDEN_FN(mv),
        EMBER_GOLDEN_FN(outer),       EMBER_GOLDEN_FN(atan2),      EMBER_GOLDEN_FN(logaddexp),
        EMBER_GOLDEN_FN(kron),
    };
    for (const auto& [name, fn] : binaries) {
      t[name] = {2, 2, [fn = fn](const TensorList& in, const json&) { return Outputs{fn(in[0], in[1])}; }};
    }
    using Unary = Tensor (*)(const Tensor&);
    const std::pair<const char*, Unary> unaries[] = {
        EMBER_FORALL_UNARY_OPS(EMBER_GOLDEN_FN_ITEM)  // every op of ember/unary_op_list.h
        EMBER_GOLDEN_FN(isnan), EMBER_GOLDEN_FN(isinf), EMBER_GOLDEN_FN(logical_not),
        EMBER_GOLDEN_FN(trace),
    };
#undef EMBER_GOLDEN_FN_ITEM
#undef EMBER_GOLDEN_FN
    for (const auto& [name, fn] : unaries) {
      t[name] = {1, 1, [fn = fn](const TensorList& in, const json&) { return Outputs{fn(in[0])}; }};
    }
    t["where"] = {3, 3, [](const TensorList& in, const json&) { return Outputs{where(in[0], in[1], in[2])}; }};
    t["masked_fill"] = {2, 2, [](const TensorList& in, const json& a) {
                          return Outputs{masked_fill(in[0], in[1], scalar_arg(a, "value", 0))};
                        }};
    // Scalar bounds in args; or tensor bounds as inputs 1 (and 2), "tensor_bounds" naming them.
    t["clamp"] = {1, 3, [](const TensorList& in, const json& a) {
                    if (in.size() == 1)
                      return Outputs{clamp(in[0], optional_scalar_arg(a, "min"), optional_scalar_arg(a, "max"))};
                    std::optional<Tensor> lo, hi;
                    const auto names = a.at("tensor_bounds").get<std::vector<std::string>>();
                    for (size_t i = 0; i < names.size(); ++i) (names[i] == "min" ? lo : hi) = in.at(i + 1);
                    return Outputs{clamp(in[0], lo, hi)};
                  }};
    // lerp: a tensor weight is input 2, else the "weight" argument.
    t["lerp"] = {2, 3, [](const TensorList& in, const json& a) {
                   if (in.size() == 3) return Outputs{lerp(in[0], in[1], in[2])};
                   return Outputs{lerp(in[0], in[1], to_scalar(a.at("weight"), "weight"))};
                 }};
    t["addcmul"] = {3, 3, [](const TensorList& in, const json& a) {
                      return Outputs{addcmul(in[0], in[1], in[2], scalar_arg(a, "value", 1))};
                    }};
    t["addcdiv"] = {3, 3, [](const TensorList& in, const json& a) {
                      return Outputs{addcdiv(in[0], in[1], in[2], scalar_arg(a, "value", 1))};
                    }};
    t["gelu"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{gelu(in[0], str_arg(a, "approximate", "none"))};
                 }};
    t["softplus"] = {1, 1, [](const TensorList& in, const json& a) {
                       return Outputs{softplus(in[0], scalar_arg(a, "beta", 1), scalar_arg(a, "threshold", 20))};
                     }};
    // ---- reductions ----
    t["sum"] = {1, 1, [](const TensorList& in, const json& a) {
                  return Outputs{sum(in[0], dims_arg(a), bool_arg(a, "keepdim", false))};
                }};
    t["mean"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{mean(in[0], dims_arg(a), bool_arg(a, "keepdim", false))};
                 }};
    t["prod"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{prod(in[0], dims_arg(a), bool_arg(a, "keepdim", false))};
                 }};
    t["all"] = {1, 1, [](const TensorList& in, const json& a) {
                  return Outputs{all(in[0], dims_arg(a), bool_arg(a, "keepdim", false))};
                }};
    t["any"] = {1, 1, [](const TensorList& in, const json& a) {
                  return Outputs{any(in[0], dims_arg(a), bool_arg(a, "keepdim", false))};
                }};
    t["logsumexp"] = {1, 1, [](const TensorList& in, const json& a) {
                        const std::vector<int64_t> dims = has_arg(a, "dim") ? dims_arg(a) : all_dims(in[0]);
                        return Outputs{logsumexp(in[0], dims, bool_arg(a, "keepdim", false))};
                      }};
    t["argmax"] = {1, 1, [](const TensorList& in, const json& a) {
                     return Outputs{argmax(in[0], optional_dim_arg(a), bool_arg(a, "keepdim", false))};
                   }};
    t["argmin"] = {1, 1, [](const TensorList& in, const json& a) {
                     return Outputs{argmin(in[0], optional_dim_arg(a), bool_arg(a, "keepdim", false))};
                   }};
    t["max"] = {1, 1, [](const TensorList& in, const json& a) {
                  const std::optional<int64_t> dim = optional_dim_arg(a);
                  if (!dim) return Outputs{in[0].max()};
                  return two_outputs(in[0].max(*dim, bool_arg(a, "keepdim", false)));
                }};
    t["min"] = {1, 1, [](const TensorList& in, const json& a) {
                  const std::optional<int64_t> dim = optional_dim_arg(a);
                  if (!dim) return Outputs{in[0].min()};
                  return two_outputs(in[0].min(*dim, bool_arg(a, "keepdim", false)));
                }};
    t["var"] = {1, 1, [](const TensorList& in, const json& a) {
                  return Outputs{var(in[0], dims_arg(a), int_arg(a, "correction", 1), bool_arg(a, "keepdim", false))};
                }};
    t["std"] = {1, 1, [](const TensorList& in, const json& a) {
                  return Outputs{in[0].std(dims_arg(a), int_arg(a, "correction", 1), bool_arg(a, "keepdim", false))};
                }};
    t["norm"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{norm(in[0], scalar_arg(a, "p", 2), dims_arg(a), bool_arg(a, "keepdim", false))};
                 }};
    t["cumsum"] = {1, 1, [](const TensorList& in, const json& a) {
                     return Outputs{cumsum(in[0], int_arg(a, "dim", 0))};
                   }};
    t["cumprod"] = {1, 1, [](const TensorList& in, const json& a) {
                      return Outputs{cumprod(in[0], int_arg(a, "dim", 0))};
                    }};
    // ---- linear algebra ----
    t["addmm"] = {3, 3, [](const TensorList& in, const json& a) {
                    return Outputs{addmm(in[0], in[1], in[2], scalar_arg(a, "beta", 1), scalar_arg(a, "alpha", 1))};
                  }};
    t["linear"] = {2, 3, [](const TensorList& in, const json&) {
                     return Outputs{in.size() == 3 ? linear(in[0], in[1], in[2]) : linear(in[0], in[1])};
                   }};
    // ---- joining, triangles, sorting ----
    t["cat"] = {1, kAny, [](const TensorList& in, const json& a) { return Outputs{cat(in, int_arg(a, "dim", 0))}; }};
    t["stack"] = {1, kAny, [](const TensorList& in, const json& a) {
                    return Outputs{stack(in, int_arg(a, "dim", 0))};
                  }};
    t["tril"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{tril(in[0], int_arg(a, "diagonal", 0))};
                 }};
    t["triu"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{triu(in[0], int_arg(a, "diagonal", 0))};
                 }};
    t["one_hot"] = {1, 1, [](const TensorList& in, const json& a) {
                      return Outputs{one_hot(in[0], int_arg(a, "num_classes", -1))};
                    }};
    t["sort"] = {1, 1, [](const TensorList& in, const json& a) {
                   return two_outputs(sort(in[0], int_arg(a, "dim", -1), bool_arg(a, "descending", false),
                                    bool_arg(a, "stable", false)));
                 }};
    t["topk"] = {1, 1, [](const TensorList& in, const json& a) {
                   if (!has_arg(a, "k")) throw std::invalid_argument("topk: no k");
                   return two_outputs(topk(in[0], a.at("k").get<int64_t>(), int_arg(a, "dim", -1),
                                    bool_arg(a, "largest", true), bool_arg(a, "sorted", true)));
                 }};
    t["argsort"] = {1, 1, [](const TensorList& in, const json& a) {
                      return Outputs{argsort(in[0], int_arg(a, "dim", -1), bool_arg(a, "descending", false),
                                             bool_arg(a, "stable", false))};
                    }};
    // unique: the values, then the inverse and the counts when asked for.
    t["unique"] = {1, 1, [](const TensorList& in, const json& a) {
                     const bool inverse = bool_arg(a, "return_inverse", false), counts = bool_arg(a, "return_counts", false);
                     auto [values, inv, cnt] = unique(in[0], bool_arg(a, "sorted", true), inverse, counts);
                     Outputs out{values};
                     if (inverse) out.push_back(inv);
                     if (counts) out.push_back(cnt);
                     return out;
                   }};
    t["searchsorted"] = {2, 2, [](const TensorList& in, const json& a) {
                           const std::optional<std::string> side = optional_str_arg(a, "side");
                           return Outputs{searchsorted(in[0], in[1], bool_arg(a, "out_int32", false),
                                                       bool_arg(a, "right", false),
                                                       side ? std::optional<std::string_view>(*side) : std::nullopt)};
                         }};
    t["bucketize"] = {2, 2, [](const TensorList& in, const json& a) {
                        return Outputs{bucketize(in[0], in[1], bool_arg(a, "out_int32", false),
                                                 bool_arg(a, "right", false))};
                      }};
    // split: "split_size" an int (pieces of that size) or a list (the sizes).
    t["split"] = {1, 1, [](const TensorList& in, const json& a) {
                    const json& size = a.at("split_size");
                    if (size.is_array()) return split(in[0], size.get<std::vector<int64_t>>(), int_arg(a, "dim", 0));
                    return split(in[0], size.get<int64_t>(), int_arg(a, "dim", 0));
                  }};
    t["chunk"] = {1, 1, [](const TensorList& in, const json& a) {
                    return chunk(in[0], int_arg(a, "chunks", 1), int_arg(a, "dim", 0));
                  }};
    t["meshgrid"] = {1, kAny, [](const TensorList& in, const json& a) {
                       return meshgrid(in, str_arg(a, "indexing", "ij"));
                     }};
    // ---- products and distances ----
    t["einsum"] = {1, kAny, [](const TensorList& in, const json& a) {
                     return Outputs{einsum(a.at("equation").get<std::string>(), in)};
                   }};
    t["baddbmm"] = {3, 3, [](const TensorList& in, const json& a) {
                      return Outputs{baddbmm(in[0], in[1], in[2], scalar_arg(a, "beta", 1), scalar_arg(a, "alpha", 1))};
                    }};
    t["diag"] = {1, 1, [](const TensorList& in, const json& a) {
                   return Outputs{diag(in[0], int_arg(a, "diagonal", 0))};
                 }};
    t["cdist"] = {2, 2, [](const TensorList& in, const json& a) {
                    return Outputs{cdist(in[0], in[1], scalar_arg(a, "p", 2).to_double())};
                  }};
    t["cosine_similarity"] = {2, 2, [](const TensorList& in, const json& a) {
                                return Outputs{nn::functional::cosine_similarity(
                                    in[0], in[1], int_arg(a, "dim", 1), scalar_arg(a, "eps", 1e-8).to_double())};
                              }};
    t["pairwise_distance"] = {2, 2, [](const TensorList& in, const json& a) {
                                return Outputs{nn::functional::pairwise_distance(
                                    in[0], in[1], scalar_arg(a, "p", 2).to_double(),
                                    scalar_arg(a, "eps", 1e-6).to_double(), bool_arg(a, "keepdim", false))};
                              }};
    // ---- random draws whose outcome is certain ----
    t["bernoulli"] = {1, 1, [](const TensorList& in, const json&) { return Outputs{bernoulli(in[0])}; }};
    t["multinomial"] = {1, 1, [](const TensorList& in, const json& a) {
                          return Outputs{multinomial(in[0], int_arg(a, "num_samples", 1),
                                                     bool_arg(a, "replacement", false))};
                        }};
    return t;
  }();
  return table;
}

// ---------------------------------------------------------------------------
// The cases, listed from the files when the tests are registered.

struct GoldenCase {
  std::string file;   // path of the .safetensors file
  std::string name;   // the case name in the file
  std::string test_name;
  std::string error;  // set when the files could not be read: the test fails with it
};
// What gtest prints for a case's parameter (instead of its bytes).
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.file << ": " << c.name; }

std::map<std::string, SafetensorsFile>& loaded_files() {
  static std::map<std::string, SafetensorsFile> files;
  return files;
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.substr(0, base.size() - std::string(".safetensors").size());
}

std::string test_name_of(const std::string& stem, const std::string& name) {
  std::string s = stem + "_" + name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::vector<GoldenCase> discover_cases() {
  const std::string dir = EMBER_TEST_DATA_DIR;
  std::vector<std::string> paths;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string f = e->d_name;
      constexpr std::string_view kExt = ".safetensors";
      if (f.size() > kExt.size() && f.compare(f.size() - kExt.size(), kExt.size(), kExt) == 0)
        paths.push_back(dir + "/" + f);
    }
    ::closedir(d);
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) return {{"", "", "no_golden_files", "no *.safetensors files in " + dir}};

  std::vector<GoldenCase> cases;
  for (const std::string& path : paths) {
    try {
      const SafetensorsFile& f = loaded_files().emplace(path, load_safetensors(path)).first->second;
      const std::string stem = file_stem(path);
      if (f.metadata.empty()) cases.push_back({path, "", test_name_of(stem, "no_cases"), path + " has no cases"});
      for (const auto& [name, spec] : f.metadata) cases.push_back({path, name, test_name_of(stem, name), ""});
    } catch (const std::exception& e) {
      cases.push_back({path, "", test_name_of(file_stem(path), "unreadable"), e.what()});
    }
  }
  return cases;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesTorch) {
  const GoldenCase& c = GetParam();
  ASSERT_TRUE(c.error.empty()) << c.error;
  const SafetensorsFile& file = loaded_files().at(c.file);

  json spec;
  try {
    spec = json::parse(file.metadata.at(c.name));
  } catch (const std::exception& e) {
    FAIL() << "metadata of " << c.name << " is not JSON: " << e.what();
  }
  ASSERT_TRUE(spec.is_object() && spec.contains("op") && spec.at("op").is_string()) << spec.dump();
  const std::string op = spec.at("op").get<std::string>();
  const json args = spec.value("args", json::object());
  const double rtol = spec.value("rtol", 0.0), atol = spec.value("atol", 0.0);

  auto tensors_named = [&](const char* kind) {
    TensorList out;
    for (size_t i = 0;; ++i) {
      auto it = file.tensors.find(c.name + "." + kind + std::to_string(i));
      if (it == file.tensors.end()) return out;
      out.push_back(it->second);
    }
  };
  const TensorList inputs = tensors_named("in");
  const TensorList expected = tensors_named("out");
  ASSERT_FALSE(inputs.empty()) << "case " << c.name << " has no " << c.name << ".in0";
  ASSERT_FALSE(expected.empty()) << "case " << c.name << " has no " << c.name << ".out0";

  auto entry = op_table().find(op);
  ASSERT_NE(entry, op_table().end()) << "op '" << op << "' is not in the golden test's op table";
  const GoldenOp& g = entry->second;
  ASSERT_TRUE(inputs.size() >= g.min_inputs && inputs.size() <= g.max_inputs)
      << op << ": the case has " << inputs.size() << " inputs";

  std::ostringstream what;  // shown with every failure below
  what << op << " " << args.dump();
  for (size_t i = 0; i < inputs.size(); ++i) what << "\n  in" << i << " = " << inputs[i];

  // The inputs must be left as they were: copy them for the call.
  TensorList call_inputs;
  for (const Tensor& t : inputs) call_inputs.push_back(t.clone());
  Outputs actual;
  try {
    actual = g.run(call_inputs, args);
  } catch (const Error& e) {
    FAIL() << "ember::Error: " << e.what() << "\n" << what.str();
  } catch (const std::exception& e) {
    FAIL() << e.what() << "\n" << what.str();
  }
  ASSERT_EQ(actual.size(), expected.size()) << what.str();
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("out" + std::to_string(i));
    ASSERT_TRUE(actual[i].defined()) << what.str();
    ASSERT_EQ(actual[i].sizes(), expected[i].sizes()) << what.str();
    EXPECT_EQ(actual[i].dtype(), expected[i].dtype()) << what.str();
    EXPECT_TRUE(values_match(actual[i], expected[i], rtol, atol))
        << what.str() << "\n  expected = " << expected[i] << "\n  actual   = " << actual[i];
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(values_match(call_inputs[i], inputs[i], 0, 0)) << op << " changed its input " << i;
}

INSTANTIATE_TEST_SUITE_P(GoldenOps, Golden, ::testing::ValuesIn(discover_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.test_name; });

// Every tensor in a file belongs to a case that the metadata describes.
TEST(GoldenFiles, EveryTensorBelongsToADescribedCase) {
  for (const auto& [path, file] : loaded_files()) {
    for (const auto& [name, t] : file.tensors) {
      const size_t dot = name.rfind('.');
      ASSERT_NE(dot, std::string::npos) << path << ": tensor " << name << " is not CASE.inN or CASE.outN";
      EXPECT_TRUE(file.metadata.count(name.substr(0, dot))) << path << ": tensor " << name << " has no case";
    }
  }
}

}  // namespace
}  // namespace ember
